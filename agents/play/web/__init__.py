"""The local web page (``python -m agents.play.web``): play against agents, watch them, step through hand records.

Needs the ``web`` extra (FastAPI, uvicorn). See :mod:`agents.play.web.server`; :func:`main` is the
``ddz-web`` console script, which says which extra to install when FastAPI or uvicorn is missing.
"""
from __future__ import annotations

import sys

#: the packages of the ``web`` extra and what they pull in; a ModuleNotFoundError of another package is a bug
WEB_PACKAGES = ("fastapi", "uvicorn", "starlette", "pydantic")


def main(argv=None) -> int:
    """``ddz-web``: serve the page; one ``error:`` line (exit 2) when the ``web`` extra is missing."""
    try:
        import uvicorn  # noqa: F401

        from .server import main as serve
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in WEB_PACKAGES:
            raise
        print(f"ddz-web: error: the web page needs the 'web' extra ({e.name} is not installed): "
              f"pip install 'ddz-env[web]' (from a clone: pip install -e '.[web]')", file=sys.stderr)
        return 2
    return serve(argv)


__all__ = ["main"]
