"""What a program says when a package it needs is not installed (standard library only, imported first).

Run with a Python that lacks the project's packages (the system ``python3`` rather than the venv's),
``python3 train.py`` would stop with a traceback ending in ``ModuleNotFoundError: No module named
'numpy'``. Every entry (``train.py``, ``evaluate.py``, ``demo.py``, ``python -m agents.play``, ``python
-m agents.play.web``, ``python -m agents.cli.*``) imports under :func:`needs_installed` instead, which
turns a missing third-party package into one line naming the venv or the install command, exit 2:

    train.py: error: numpy is not installed for /usr/bin/python3: run .venv/bin/python train.py --config default

A Python that has what a program needs but not the project itself (``ddz-env`` is not installed in it) runs the
program from a clone that has its venv, after one ``note:`` line on stderr naming the venv (:func:`venv_note`).

ddz-env is not on PyPI: a missing extra is named with the command that installs it here (:func:`install_extra`),
``pip install -e ".[marl]"`` in a clone (as the configs' comments say), the extra's own requirements for a
package installed from a wheel.
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


#: the distribution's name (``importlib.metadata``)
DIST = "ddz-env"
#: whether :func:`venv_note` has been printed (once a process: a program enters :func:`needs_installed` twice)
_noted = False


def _in_venv(python: Path) -> bool:
    """Whether this interpreter is the one of the venv whose ``bin/python`` is ``python``."""
    return Path(sys.prefix).resolve() == python.parent.parent.resolve()


def _has_core() -> bool:
    """Whether this Python has the project's core packages (numpy stands for them): else it is not the
    project's Python at all (the system ``python3``), rather than one that lacks an extra."""
    import importlib.util

    return importlib.util.find_spec("numpy") is not None


def _installed() -> bool:
    """Whether this Python has the ``ddz-env`` distribution installed (editable or from a wheel)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution(DIST)
    except PackageNotFoundError:
        return False
    return True


def _cloned() -> bool:
    """Whether the project runs from a clone (an editable install or a clone's root on the path), not a wheel."""
    return (ROOT / "Makefile").is_file()


def _at_root() -> bool:
    try:
        return Path.cwd().resolve() == ROOT
    except OSError:  # (a working directory that was removed)
        return False


def install_extra(extra: str) -> str:
    """The command that installs the extra ``extra`` for the project as it runs here. ddz-env is not on PyPI, so
    ``pip install 'ddz-env[extra]'`` never works: in a clone, ``pip install -e ".[extra]"`` (the configs' words; the
    clone's path in place of ``.`` when the working directory is elsewhere); for a package installed from a wheel,
    the extra's requirements as its metadata lists them; else the clone's command, saying it needs a clone."""
    if _cloned():
        return f'pip install -e ".[{extra}]"' if _at_root() else f'pip install -e "{ROOT}[{extra}]"'
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        requires = distribution(DIST).requires or []
    except PackageNotFoundError:
        requires = []
    marker = re.compile(r"""\bextra\s*==\s*['"]""" + re.escape(extra) + r"""['"]""")
    wanted = [r.split(";")[0].strip() for r in requires if marker.search(r.partition(";")[2])]
    if wanted:
        return "pip install " + " ".join(shlex.quote(r) for r in wanted)
    return f'pip install -e ".[{extra}]" in a clone of the repository (ddz-env is not on PyPI)'


def missing_line(prog: str, command: list[str], package: str) -> str:
    """The one line for ``package`` missing when ``command`` (as typed, after ``python``) ran as ``prog``: the
    clone's venv when there is one and another Python ran it; ``make setup`` when this Python lacks even the
    core packages and the clone has no venv yet; else the command that installs the package's extra
    (:func:`install_extra`)."""
    extra = EXTRAS.get(package, "")
    head = f"{prog}: error: {package} is not installed for {sys.executable or 'this Python'}"
    venv = ROOT / ".venv" / "bin" / "python"
    cloned = _cloned()
    typed = shlex.join(command)
    if cloned and venv.is_file() and not _in_venv(venv):
        where = os.path.relpath(venv) if _at_root() else str(venv)
        return f"{head}: run it with the project's venv: {where} {typed}"
    if extra:
        install = install_extra(extra)
    else:  # a core dependency (or a package of no extra): the project's own install brings it
        install = ('pip install -e .' if _at_root() else f'pip install -e "{ROOT}"') if cloned else f"pip install {package}"
    if cloned and not venv.is_file() and not _has_core():
        return f"{head}: make setup builds the project's venv (.venv), then run .venv/bin/python {typed} (or {install})"
    what = f"the {extra!r} extra" if extra else "the package"
    return f"{head}: install {what}: {install}"


def venv_note(prog: str, command: list[str]) -> str | None:
    """The one ``note:`` line for a program run by a Python that does not have ddz-env installed (``python3
    demo.py``, the system's Python with numpy) while the clone has its venv (``make setup``): the program still
    runs where it can, but with other packages than the venv's, and a missing extra would be installed into the
    wrong Python. ``None`` where the project is installed, this Python is the venv's, or the clone has no venv;
    also where this Python lacks the core packages (the program stops with :func:`missing_line`, which names the
    venv)."""
    venv = ROOT / ".venv" / "bin" / "python"
    if not _cloned() or not venv.is_file() or _in_venv(venv) or not _has_core() or _installed():
        return None
    where = os.path.relpath(venv) if _at_root() else str(venv)
    return (f"{prog}: note: ddz-env is not installed for {sys.executable or 'this Python'}: use the project's venv, "
            f"{where} {shlex.join(command)} (make setup builds or updates it)")


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
    (:func:`missing_line`) and exit 2; the first one entered (``active``) prints :func:`venv_note` where it applies. ``module``: the ``python -m`` name the program was run by (else it is
    the script of ``sys.argv[0]``); ``active=False`` (a module imported by another, not run) lets the error
    through to the program that imported it."""
    global _noted
    command = (["-m", module] if module else [sys.argv[0]]) + sys.argv[1:]
    if active and not _noted:
        _noted = True
        note = venv_note(prog, command)
        if note:
            print(note, file=sys.stderr)
    try:
        yield
    except ModuleNotFoundError as e:
        package = (e.name or "").split(".")[0]
        if not active or not package or package in OWN:
            raise
        print(missing_line(prog, command, package), file=sys.stderr)
        raise SystemExit(2) from None
