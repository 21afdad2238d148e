"""Hints that work where they are given. A Python that has the core packages but not the project (the system's
``python3`` with numpy and scipy) runs a clone's programs with no word of the venv beside them, and a missing extra
was named as ``pip install 'ddz-env[train]'``, which fails: ddz-env is not on PyPI. Now every program says in one
``note:`` line on stderr to use ``.venv/bin/python`` (and runs on where it can), and a missing extra is named with
the command that works in a clone, ``pip install -e ".[train]"`` (the configs' words).

The Python here is this interpreter with ``-S`` (no site-packages: no ddz-env distribution, no torch) and only numpy
and scipy on ``PYTHONPATH``, in a copy of the clone's programs whose ``.venv/bin/python`` links to this
interpreter (a clone may have no venv of its own, and the copy keeps the test's files out of it)."""
from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from common import ROOT

#: the programs a user starts from a clone (after ``python``), and whether each runs to exit 0 on numpy and scipy
#: alone (the others stop at a missing extra: torch, FastAPI)
PROGRAMS = [
    (["demo.py", "--hands", "1"], True),
    (["evaluate.py", "--a", "rule", "--b", "random", "--deals", "2", "--no-progress"], True),
    (["train.py", "--config", "smoke"], False),
    (["-m", "agents.play", "--help"], True),
    (["-m", "agents.play.web", "--port", "0"], False),
    (["-m", "agents.export", "--help"], False),
    (["-m", "agents.cli.train", "--config", "smoke"], False),
    (["-m", "agents.cli.evaluate", "--a", "rule", "--b", "random", "--deals", "2", "--no-progress"], True),
    (["-m", "agents.cli.calibrate", "--help"], True),
    (["-m", "agents.cli.compare", "--help"], True),
    (["-m", "agents.dmc.export", "--help"], False),
]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the clone's programs (no weights) with a ``.venv/bin/python``, and beside it ``core/``: numpy and
    scipy alone, linked from where this interpreter has them."""
    base = tmp_path_factory.mktemp("hints")
    dst = base / "clone"
    skip = shutil.ignore_patterns("__pycache__", "*.pt")
    for name in ("agents", "ddz_env", "configs"):
        shutil.copytree(ROOT / name, dst / name, ignore=skip)
    for name in ("train.py", "evaluate.py", "demo.py", "Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, dst / name)
    (dst / ".venv" / "bin").mkdir(parents=True)
    (dst / ".venv" / "bin" / "python").symlink_to(sys.executable)
    core = base / "core"
    core.mkdir()
    for package in ("numpy", "scipy"):
        spec = importlib.util.find_spec(package)
        folder = Path(next(iter(spec.submodule_search_locations)))
        for path in (folder, folder.with_name(f"{package}.libs")):  # (a wheel's bundled shared libraries)
            if path.exists():
                (core / path.name).symlink_to(path)
    return dst


def run_core(clone: Path, args: list[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(clone.parent / "core")
    return subprocess.run([sys.executable, "-S", "-s", *args], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=180)


def test_the_python_of_the_test_has_numpy_but_not_the_project(clone):
    p = run_core(clone, ["-c", "import importlib.metadata as m, importlib.util as u, numpy, scipy\n"
                               "print(u.find_spec('torch') is None, [d.name for d in m.distributions()])"])
    assert p.returncode == 0 and p.stdout.split()[0] == "True" and "ddz-env" not in p.stdout, (p.stdout, p.stderr)


@pytest.mark.parametrize("args, runs", [pytest.param(a, r, id=" ".join(a[:2])) for a, r in PROGRAMS])
def test_a_python_without_the_project_is_told_the_venv_in_one_note(clone, args, runs):
    p = run_core(clone, args)
    lines = p.stderr.strip().splitlines()
    prog = args[0] if args[0].endswith(".py") else f"python -m {args[1]}"
    note = (f"{prog}: note: ddz-env is not installed for {sys.executable}: use the project's venv, "
            f".venv/bin/python {shlex.join(args)} (make setup builds or updates it)")
    assert lines and lines[0] == note, p.stderr
    assert sum("note:" in line for line in lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "ddz-env[" not in p.stderr, p.stderr  # (not on PyPI)
    if runs:
        assert p.returncode == 0 and len(lines) == 1, p.stderr
    else:  # stopped at a missing extra: one error line, naming the venv or the command that works in a clone
        assert p.returncode == 2 and len(lines) == 2 and "error:" in lines[1], p.stderr
        assert ".venv/bin/python" in lines[1] or 'pip install -e ".[' in lines[1], lines[1]


def test_a_missing_extra_is_named_with_the_clones_command(clone):
    p = run_core(clone, ["train.py", "--config", "smoke"])
    error = p.stderr.strip().splitlines()[-1]
    assert error.startswith("train.py: error: training needs the 'train' extra: pip install -e \".[train]\""), error


def test_the_projects_own_python_gets_no_note(clone):
    """This interpreter has ddz-env installed: the same program, no note."""
    from agents import _entry

    if not _entry._installed():
        pytest.skip("ddz-env is not installed in this interpreter (a clone on the path)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    p = subprocess.run([sys.executable, "demo.py", "--hands", "1"], cwd=clone, env=env, capture_output=True,
                       text=True, timeout=180)
    assert p.returncode == 0 and "note:" not in p.stderr, p.stderr


def test_the_note_is_for_another_python_only(tmp_path, monkeypatch):
    from agents import _entry

    monkeypatch.setattr(_entry, "ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_entry, "_installed", lambda: False)
    (tmp_path / "Makefile").write_text("")
    assert _entry.venv_note("demo.py", ["demo.py"]) is None  # no venv beside the clone
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    assert _entry.venv_note("demo.py", ["demo.py", "--hands", "3"]) == (
        f"demo.py: note: ddz-env is not installed for {sys.executable}: use the project's venv, .venv/bin/python "
        "demo.py --hands 3 (make setup builds or updates it)")
    monkeypatch.setattr(_entry, "_has_core", lambda: False)  # no numpy: the program stops with missing_line instead
    assert _entry.venv_note("demo.py", ["demo.py"]) is None
    monkeypatch.setattr(_entry, "_has_core", lambda: True)
    monkeypatch.setattr(_entry, "_installed", lambda: True)  # installed (editable or from a wheel)
    assert _entry.venv_note("demo.py", ["demo.py"]) is None
    monkeypatch.setattr(_entry, "_installed", lambda: False)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))  # the venv's own Python
    assert _entry.venv_note("demo.py", ["demo.py"]) is None


def test_install_extra_says_what_works_here(tmp_path, monkeypatch):
    """In a clone: ``pip install -e ".[marl]"`` (the clone's path where the working directory is elsewhere); from a
    wheel: the extra's requirements; never ``pip install 'ddz-env[...]'`` (not on PyPI)."""
    from agents import _entry

    monkeypatch.setattr(_entry, "ROOT", tmp_path)
    (tmp_path / "Makefile").write_text("")
    monkeypatch.chdir(tmp_path)
    assert _entry.install_extra("marl") == 'pip install -e ".[marl]"'
    monkeypatch.chdir(tmp_path.parent)
    assert _entry.install_extra("marl") == f'pip install -e "{tmp_path}[marl]"'
    (tmp_path / "Makefile").unlink()
    monkeypatch.setattr(_entry, "DIST", "no-such-distribution-zz")
    assert _entry.install_extra("marl") == ('pip install -e ".[marl]" in a clone of the repository '
                                            "(ddz-env is not on PyPI)")


def test_the_configs_name_their_extra_as_the_programs_do(monkeypatch):
    """The programs' words for a missing extra are the configs' comments' words."""
    import re

    from agents import _entry

    said = {m for cfg in (ROOT / "configs").glob("*.yaml") for m in re.findall(r'pip install -e "\.\[(\w+)\]"',
                                                                              cfg.read_text())}
    assert said, "no config names an extra (the pattern is wrong)"
    monkeypatch.chdir(ROOT)  # (where the configs' command runs)
    for extra in said:
        assert _entry.install_extra(extra) == f'pip install -e ".[{extra}]"', extra
