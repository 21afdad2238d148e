"""The local web page (``python -m agents.play.web``): play against agents, watch them, step through hand records.

Needs the ``web`` extra (FastAPI, uvicorn). See :mod:`agents.play.web.server`; :func:`main` is the
``ddz-web`` console script, which says which extra to install when FastAPI or uvicorn is missing.
"""
from __future__ import annotations

import sys

#: the packages of the ``web`` extra and what they pull in; a ModuleNotFoundError of another package is a bug
WEB_PACKAGES = ("fastapi", "uvicorn", "starlette", "pydantic")


def main(argv=None) -> int:
    """``ddz-web``: serve the page; one ``error:`` line (exit 2) when the ``web`` extra is missing (naming the
    clone's venv when another Python runs it, else the install command: :func:`agents._entry.missing_line`)."""
    try:
        import uvicorn  # noqa: F401

        from .server import main as serve
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in WEB_PACKAGES:
            raise
        from agents._entry import missing_line

        args = sys.argv[1:] if argv is None else list(argv)
        print(missing_line("ddz-web", ["-m", "agents.play.web", *args], e.name.split(".")[0]), file=sys.stderr)
        return 2
    return serve(argv)


__all__ = ["main"]
