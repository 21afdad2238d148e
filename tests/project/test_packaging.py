"""Packaging hygiene (issue 14): SPDX license and LICENSE file, ``py.typed`` markers, the configs
and console scripts in the wheel, a changelog, ``ddz_env.__version__``, and no warnings of ours
on import or on building the package."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from common import ROOT


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_spdx_license_and_license_file():
    meta = pyproject()
    assert meta["project"]["license"] == "MIT" and meta["project"]["license-files"] == ["LICENSE"]
    requires = " ".join(meta["build-system"]["requires"])
    assert re.search(r"setuptools>=(\d+)", requires) and int(re.search(r"setuptools>=(\d+)", requires)[1]) >= 77
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 ddz-env authors" in text


def test_typed_markers_and_changelog():
    assert (ROOT / "ddz_env" / "py.typed").is_file() and (ROOT / "agents" / "py.typed").is_file()
    data = pyproject()["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["ddz_env"] and "py.typed" in data["agents"]
    log = (ROOT / "CHANGELOG.md").read_text()
    assert "## Unreleased" in log and "## 0.1.0" in log


def test_version():
    import ddz_env

    assert ddz_env.__version__ == pyproject()["project"]["version"]
    from importlib.metadata import PackageNotFoundError, version

    try:
        assert version("ddz-env") == ddz_env.__version__
    except PackageNotFoundError:
        pass


def test_imports_print_no_warnings():
    code = ("import ddz_env, agents, agents.cli.train, agents.cli.evaluate, agents.dmc.config; "
            "ddz_env.env().reset(seed=0)")
    p = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and p.stderr == "" and p.stdout == "", p.stderr


def test_the_wheel_builds_without_warnings_and_holds_what_it_should(tmp_path):
    """Build the wheel from a copy of the sources (no network: the installed setuptools)."""
    try:
        import setuptools
    except ImportError:
        pytest.skip("setuptools is not installed")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} < 77 cannot build SPDX license strings")
    src = tmp_path / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    for pkg in ("ddz_env", "agents", "configs"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=ignore)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                        str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout + p.stderr
    assert "Warning" not in out and "deprecated" not in out, out
    wheel = next((tmp_path / "dist").glob("ddz_env-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        scripts = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    for need in ("ddz_env/py.typed", "agents/py.typed", "agents/configs/default.yaml",
                 "agents/configs/smoke.yaml", "agents/cli/train.py", "agents/play/web/static/app.js"):
        assert need in names, need
    sources = {str(p.relative_to(ROOT)) for pkg in ("ddz_env", "agents") for p in (ROOT / pkg).rglob("*.py")}
    assert sources <= names, f"modules missing from the wheel (pyproject's packages list): {sorted(sources - names)}"
    # installed from the wheel (no clone around), the shipped configs are found by name
    site = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(site),
                        str(wheel)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    code = ("import agents.dmc.config as c; print(c.CONFIG_DIR); print(','.join(c.available_configs())); "
            "print(c.load_config('smoke').name)")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(site)})
    assert p.returncode == 0, p.stderr
    where, names_found, smoke = p.stdout.split("\n")[:3]
    assert Path(where) == site / "agents" / "configs", where
    assert set(names_found.split(",")) == {q.stem for q in (ROOT / "configs").glob("*.yaml")}
    assert smoke == load_config_name("smoke")
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: MIT" in meta
    requires = [ln for ln in meta.splitlines() if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
    assert len(requires) == 4 and not any("torch" in r for r in requires), requires  # numpy, scipy, gymnasium, pettingzoo
    assert "ddz-train = agents.cli.train:main" in scripts and "ddz-evaluate = agents.cli.evaluate:main" in scripts


def load_config_name(name: str) -> str:
    """The run name a shipped config sets (read from the clone's configs/)."""
    from agents.dmc.config import load_config

    return load_config(name).name


def test_no_module_or_config_is_ignored_by_git():
    """A pattern of .gitignore once hid a whole package (``runs/`` matched ``agents/runs/``): the tree
    worked here and a fresh clone did not. No module, test or shipped config of the tree is ignored."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    files = {str(q.relative_to(ROOT)) for d in ("ddz_env", "agents", "tests") for q in (ROOT / d).rglob("*.py")}
    files |= {str(q.relative_to(ROOT)) for q in (ROOT / "configs").glob("*.yaml")}
    p = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(sorted(files)),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1), p.stderr  # 1: none ignored
    assert not p.stdout.split(), f"ignored by .gitignore: {p.stdout.split()}"
