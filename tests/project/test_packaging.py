"""Packaging hygiene (issue 14): SPDX license and LICENSE file, ``py.typed`` markers, the configs
and console scripts in the wheel, a changelog, ``ddz_env.__version__``, and no warnings of ours
on import or on building the package."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from pathlib import Path
from types import SimpleNamespace

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


#: distutils' note when PYTHONDONTWRITEBYTECODE is set (a line with "warning:" that is not about the package)
BYTECODE_NOTE = "byte-compiling is disabled"


def build_problems(out: str) -> list[str]:
    """The lines of a build's output that warn or speak of a deprecation (of any case: setuptools writes
    ``WARNING Package ... is absent``, pip ``BuildBackendWarning``)."""
    return [ln for ln in out.splitlines() if re.search(r"warn|deprecat", ln, re.I) and BYTECODE_NOTE not in ln]


def copy_sources(dest: Path, clone: bool = True) -> Path:
    """The files a build reads, copied to ``dest`` (a build writes its egg-info and build/ beside them): with
    ``clone`` and a git checkout, every file git tracks or would (``git ls-files``: a fresh clone, and a module not
    yet committed); else pyproject.toml, README.md, LICENSE and the folders of the packages."""
    dest.mkdir(parents=True)
    if clone and (ROOT / ".git").exists() and shutil.which("git"):
        p = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        for name in filter(None, p.stdout.split("\0")):
            if (ROOT / name).is_file():  # (not a file deleted since its commit)
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
        return dest
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, dest / name)
    for pkg in ("ddz_env", "agents", "configs"):
        shutil.copytree(ROOT / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> SimpleNamespace:
    """``python -m build`` of a copy of the clone: the sdist, then the wheel built from the unpacked sdist (so it
    holds only what the sdist carries), and what the build printed. No network: the installed setuptools."""
    pytest.importorskip("build", reason="the dev extra's build is not installed (pip install -e '.[dev]')")
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} < 77 cannot build SPDX license strings")
    tmp = tmp_path_factory.mktemp("dists")
    src = copy_sources(tmp / "src")
    p = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (sdist,), (wheel,) = (tmp / "dist").glob("ddz_env-*.tar.gz"), (tmp / "dist").glob("ddz_env-*.whl")
    return SimpleNamespace(sdist=sdist, wheel=wheel, log=p.stdout + p.stderr)


def package_files() -> set[str]:
    """What the installed package needs of the clone, by its path there: every module, the ``py.typed`` markers,
    the shipped configs, the pretrained agent (weights, provenance, evaluations) and the web page's files."""
    files = {str(p.relative_to(ROOT)) for pkg in ("ddz_env", "agents") for p in (ROOT / pkg).rglob("*.py")}
    files |= {"ddz_env/py.typed", "agents/py.typed", "agents/pretrained/dmc.pt", "agents/pretrained/dmc.json"}
    files |= {str(p.relative_to(ROOT)) for p in (ROOT / "agents" / "pretrained" / "eval").glob("*.json")}
    files |= {str(p.relative_to(ROOT)) for p in (ROOT / "agents" / "play" / "web" / "static").iterdir()}
    files |= {str(p.relative_to(ROOT)) for p in (ROOT / "configs").glob("*.yaml")}
    return files


def in_wheel(path: str) -> str:
    """Where a file of the clone is in the wheel (configs/ ships as the package agents.configs)."""
    return "agents/" + path if path.startswith("configs/") else path


def test_the_wheel_builds_without_warnings_and_holds_what_it_should(dists, tmp_path):
    assert not build_problems(dists.log), "\n".join(build_problems(dists.log))
    with zipfile.ZipFile(dists.wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        scripts = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    for need in ("ddz_env/py.typed", "agents/py.typed", "agents/configs/default.yaml", "agents/configs/demo.yaml",
                 "agents/cli/train.py", "agents/play/web/static/app.js", "agents/pretrained/dmc.pt",
                 "agents/pretrained/dmc.json"):
        assert need in names, need
    wanted = {in_wheel(f) for f in package_files()}
    assert wanted <= names, f"missing from the wheel (pyproject's packages and package-data): {sorted(wanted - names)}"
    # installed from the wheel (no clone around), the shipped configs are found by name
    site = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(site),
                        str(dists.wheel)], capture_output=True, text=True, timeout=300)
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


def test_the_sdist_holds_what_the_wheel_is_built_from(dists):
    """The sdist carries the build's inputs (pyproject.toml, README.md, LICENSE) and every file the package needs,
    configs/ where pyproject's package-dir looks for it (``python -m build`` made the wheel above from it)."""
    with tarfile.open(dists.sdist) as t:
        top = {n.split("/", 1)[0] for n in t.getnames()}
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert top == {dists.sdist.name.removesuffix(".tar.gz")}, top
    wanted = {"pyproject.toml", "README.md", "LICENSE", "PKG-INFO"} | package_files()
    assert wanted <= names, f"missing from the sdist: {sorted(wanted - names)}"


def test_twine_check_passes_on_the_sdist_and_the_wheel(dists):
    """twine's check of what an upload would send: the metadata, and README.md rendered as PyPI renders it."""
    pytest.importorskip("twine", reason="the dev extra's twine is not installed (pip install -e '.[dev]')")
    p = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(dists.sdist), str(dists.wheel)],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    assert p.returncode == 0 and p.stdout.count("PASSED") == 2, p.stdout + p.stderr


def test_the_makefiles_editable_installs_show_no_build_backend_warning(tmp_path):
    """pip (>= 25) shows what a build backend warns as a ``BuildBackendWarning`` box, and setuptools notes every
    editable install of a package beside other folders ("Editable installation ... folders in your working
    directory with the same name as your package"): make setup showed the box. The Makefile's editable installs
    filter that note (``NO_EDITABLE_NOTICE``); the editable build of pyproject warns nothing else, and with the
    filter nothing at all. The build runs through pyproject_hooks, the library pip relays the warnings with."""
    hooks = pytest.importorskip("pyproject_hooks", reason="the dev extra's build (and its pyproject_hooks)")
    pytest.importorskip("setuptools")
    make = (ROOT / "Makefile").read_text()
    found = re.search(r'^NO_EDITABLE_NOTICE := PYTHONWARNINGS="([^"]+)"$', make, re.M)
    assert found, "the Makefile's NO_EDITABLE_NOTICE"
    editable = [ln.strip() for ln in make.splitlines() if re.search(r'\s-e "\.', ln)]  # pip install -e ".[...]"
    assert len(editable) >= 4 and all(ln.startswith("$(NO_EDITABLE_NOTICE) ") for ln in editable), editable
    src = copy_sources(tmp_path / "src", clone=False)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}

    def warned(env: dict) -> list[str]:
        def runner(cmd, cwd=None, extra_environ=None):
            p = subprocess.run(cmd, cwd=cwd, env={**env, **(extra_environ or {})}, capture_output=True, text=True,
                               timeout=300)
            assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]

        out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
        caller = hooks.BuildBackendHookCaller(str(src), "setuptools.build_meta", runner=runner,
                                              python_executable=sys.executable)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            wheel = caller.build_editable(str(out))
        assert (out / wheel).is_file(), wheel
        return [f"{w.category.__name__}: {w.message}" for w in caught]

    plain = warned(base)
    assert all(w.startswith("BuildBackendWarning: Editable installation") for w in plain), plain
    assert warned({**base, "PYTHONWARNINGS": found[1]}) == []


#: where torch comes from when the machine's own package sources hold no CPU build (the Makefile's TORCH_CPU_INDEX)
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def install_torch(pip: list[str]) -> None:
    """The pinned torch into a venv (``pip``: its install command), as ``make setup`` installs it (the Makefile's
    install_torch): from the index of ``TORCH_INDEX`` if set, else a CPU build the machine's own package sources
    hold (pip's find-links), else PyTorch's CPU index. Never PyPI's torch: on Linux it is the CUDA build, GBs."""
    pin = re.search(r"^torch==\S+", (ROOT / "constraints-cpu.txt").read_text(), re.M)[0]
    index = os.environ.get("TORCH_INDEX")
    if not index:
        local = subprocess.run(pip + ["--no-index", "--no-deps", pin], capture_output=True, text=True, timeout=600)
        if local.returncode == 0:
            return  # (its dependencies come with the wheel's)
        index = TORCH_CPU_INDEX
    p = subprocess.run(pip + ["--index-url", index, pin], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"torch from {index}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}"


@pytest.mark.slow
def test_the_wheel_installs_in_a_new_venv_and_its_commands_run_from_any_folder(dists, tmp_path):
    """The wheel with its ``train`` extra, installed into a new venv (torch as make setup installs it; pip check
    passes), runs ``ddz-evaluate`` of the shipped pretrained agent and a short ``ddz-train --config demo`` from a
    folder outside the clone, with no PYTHONPATH: the weights and the configs come from the wheel, the package from
    the venv's site-packages, and the run's checkpoint loads. About 1.3 GB, removed in the background after."""
    venv, elsewhere = tmp_path / "venv", tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert not elsewhere.resolve().is_relative_to(ROOT.resolve())
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items()  # (byte code written: the commands start faster one after another)
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])

    def run(*cmd):
        return subprocess.run([str(c) for c in cmd], cwd=elsewhere, env=env, capture_output=True, text=True,
                              timeout=600)

    try:
        p = run(sys.executable, "-m", "venv", "--without-pip", venv)  # (this pip installs into it: --python)
        assert p.returncode == 0, p.stderr
        pip = [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", "--no-compile",
               "-c", str(ROOT / "constraints-cpu.txt")]
        install_torch(pip)
        p = run(*pip, f"{dists.wheel}[train]")
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        p = run(sys.executable, "-m", "pip", "--python", bin_dir / "python", "check")
        assert p.returncode == 0, p.stdout + p.stderr

        p = run(bin_dir / "ddz-evaluate", "--a", "pretrained", "--b", "rule", "--deals", "20", "--no-progress")
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.startswith("pretrained (A) vs rule (B): 20 deals, 120 hands, mode duplicate, seed 0\n")
        assert re.search(r"^score/hand \[95% CI\] +[+-]\d+\.\d{3} \[", p.stdout, re.M), p.stdout
        assert re.search(r"^120 hands in [\d.]+ s", p.stdout, re.M), p.stdout

        p = run(bin_dir / "ddz-train", "--config", "demo", "--set", "total_frames=3000", "--set", "eval_every=0",
                "--set", "eval_at_start=false", "--no-progress")
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        assert re.search(r"dmc: done: \d+ frames in \d+ s; checkpoint ", p.stderr), p.stderr[-3000:]
        (run_dir,) = (elsewhere / "runs").glob("demo-*")  # runs/<name>-<time> in the folder it ran from
        for name in ("checkpoint.pt", "config.yaml", "log.csv"):
            assert (run_dir / name).is_file(), name

        # the package, its weights and its configs: the venv's, not the clone's; the run's checkpoint loads
        p = run(bin_dir / "python", "-c", "import sysconfig, agents, ddz_env; from agents.loader import pretrained_path; "
                "from agents.dmc.config import CONFIG_DIR; print(sysconfig.get_paths()['purelib']); "
                "print(agents.__file__); print(ddz_env.__file__); print(pretrained_path()); print(CONFIG_DIR); "
                f"print(type(agents.load({str(run_dir.relative_to(elsewhere))!r})).__name__)")
        assert p.returncode == 0, p.stderr
        *paths, loaded = p.stdout.splitlines()
        site, *files = (Path(q).resolve() for q in paths)
        assert site.is_relative_to(venv.resolve()), site
        assert len(files) == 4 and all(q.is_relative_to(site) and q.exists() for q in files), files
        assert loaded == "DMCAgent", loaded
    finally:  # about 30,000 files: unlinked in the background (a minute and more on a loaded machine)
        trash = tmp_path / "venv-removed"
        if venv.exists():
            venv.rename(trash)
            subprocess.Popen(["rm", "-rf", str(trash)], start_new_session=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)


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
