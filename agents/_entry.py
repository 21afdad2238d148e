"""What a program says when a package it needs is not installed (standard library only, imported first).

Run with a Python that lacks the project's packages (the system ``python3`` rather than the venv's),
``python3 train.py`` would stop with a traceback ending in ``ModuleNotFoundError: No module named
'numpy'``. Every entry (``train.py``, ``evaluate.py``, ``demo.py``, ``python -m agents.play``, ``python
-m agents.play.web``, ``python -m agents.cli.*``) imports under :func:`needs_installed` instead, which
turns a missing third-party package into one line naming the venv or the install command, exit 2:

    train.py: error: numpy is not installed for /usr/bin/python3: run .venv/bin/python train.py --config default
"""
from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

#: the clone's root (where ``make setup`` builds ``.venv``): two levels above this file
ROOT = Path(__file__).resolve().parents[1]
#: the project's own packages: a ModuleNotFoundError for one of these is a broken clone or a bug, not an install
OWN = ("agents", "ddz_env")
#: the extra that installs a package (by its import name); the packages of no extra here are core dependencies
EXTRAS = {
    "torch": "train", "yaml": "train", "tqdm": "train", "matplotlib": "train",
    "fastapi": "web", "uvicorn": "web", "starlette": "web", "pydantic": "web",
    "tensorboard": "tensorboard",
    "stable_baselines3": "marl", "sb3_contrib": "marl", "tianshou": "marl", "torchrl": "marl", "tensordict": "marl",
    "ray": "rllib", "douzero": "douzero", "rlcard": "douzero", "onnx": "onnx", "onnxruntime": "onnx",
}


def _in_venv(python: Path) -> bool:
    """Whether this interpreter is the one of the venv whose ``bin/python`` is ``python``."""
    return Path(sys.prefix).resolve() == python.parent.parent.resolve()


def _has_core() -> bool:
    """Whether this Python has the project's core packages (numpy stands for them): else it is not the
    project's Python at all (the system ``python3``), rather than one that lacks an extra."""
    import importlib.util

    return importlib.util.find_spec("numpy") is not None


def missing_line(prog: str, command: list[str], package: str) -> str:
    """The one line for ``package`` missing when ``command`` (as typed, after ``python``) ran as ``prog``: the
    clone's venv when there is one and another Python ran it; ``make setup`` when this Python lacks even the
    core packages and the clone has no venv yet; else the ``pip install`` of the package's extra."""
    extra = EXTRAS.get(package, "")
    spec = f"[{extra}]" if extra else ""
    head = f"{prog}: error: {package} is not installed for {sys.executable or 'this Python'}"
    venv = ROOT / ".venv" / "bin" / "python"
    cloned = (ROOT / "Makefile").is_file()
    typed = shlex.join(command)
    if cloned and venv.is_file() and not _in_venv(venv):
        where = os.path.relpath(venv) if Path.cwd().resolve() == ROOT else str(venv)
        return f"{head}: run it with the project's venv: {where} {typed}"
    if cloned and not venv.is_file() and not _has_core():
        return (f"{head}: make setup builds the project's venv (.venv), then run .venv/bin/python {typed} "
                f"(or pip install -e '.{spec}')")
    what = f"the {extra!r} extra" if extra else "the package"
    return (f"{head}: install {what}: pip install 'ddz-env{spec}'"
            + (f" (from a clone: pip install -e '.{spec}')" if cloned else ""))


def command_line(prog: str, args: list[str]) -> str:
    """The command that gave a program's results, to run again: ``python evaluate.py --a ...`` (a script's errors
    say ``evaluate.py: error:``, as ``train.py``'s; its command runs under ``python``)."""
    return ("python " if prog.endswith(".py") else "") + f"{prog} " + shlex.join(args)


#: a Sphinx cross-reference role, with ``~`` or an explicit ``text <target>``: group 1 is the name it shows
_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc):`~?([^`<]+?)(?:\s*<[^`>]*>)?`")


def plain(text: str) -> str:
    """A docstring as a program's ``--help`` prints it, in plain words: a Sphinx role (``:class:``, ``:mod:``,
    ...) reads as the name it names, inline code in double backquotes as the code itself."""
    return re.sub(r"``(.+?)``", r"\1", _ROLE.sub(r"\1", text), flags=re.S)


@contextlib.contextmanager
def needs_installed(prog: str, module: str | None = None, active: bool = True) -> Iterator[None]:
    """Around a program's imports (and its ``main()``): a missing third-party package is one ``error:`` line
    (:func:`missing_line`) and exit 2. ``module``: the ``python -m`` name the program was run by (else it is
    the script of ``sys.argv[0]``); ``active=False`` (a module imported by another, not run) lets the error
    through to the program that imported it."""
    try:
        yield
    except ModuleNotFoundError as e:
        package = (e.name or "").split(".")[0]
        if not active or not package or package in OWN:
            raise
        command = (["-m", module] if module else [sys.argv[0]]) + sys.argv[1:]
        print(missing_line(prog, command, package), file=sys.stderr)
        raise SystemExit(2) from None
