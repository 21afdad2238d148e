"""README's test command (``make test``): every step runs even when one before it failed, and the target
fails at the end naming the steps that did (issue 44, item 1: one failure no longer hides the suites after it).

The recipe runs against stand-in venvs whose ``python`` and ``ruff`` only record their arguments (and fail
where told), so the test checks the Makefile's own logic in a second, without installing anything.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

FAKE = """#!/bin/sh
echo "$0 $*" >> {log}
case "$*" in *"{fail}"*) exit 1;; esac
exit 0
"""


def make_test(tmp_path: Path, fail: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    log = tmp_path / "calls.log"
    for venv in ("v", "r"):
        bin_dir = tmp_path / venv / "bin"
        bin_dir.mkdir(parents=True)
        for tool in ("python", "ruff"):
            path = bin_dir / tool
            path.write_text(FAKE.format(log=log, fail=fail))
            path.chmod(0o755)
    # -o: the set-up targets count as done (nothing is installed)
    done = subprocess.run(["make", "-s", "-o", "setup-marl", "-o", "setup-rllib", "test",
                           f"VENV={tmp_path / 'v'}", f"RLLIB_VENV={tmp_path / 'r'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    return done, calls


def test_a_failing_main_suite_does_not_stop_the_rllib_and_ray_suites(tmp_path):
    done, calls = make_test(tmp_path, fail="not rllib")
    assert done.returncode != 0
    assert "make test: failed: main-suite" in done.stdout, done.stdout
    # all four steps ran: ruff, the main suite (failed), the RLlib suite and the Ray suite, in the RLlib venv
    assert len(calls) == 4, calls
    assert calls[0].startswith(str(tmp_path / "v" / "bin" / "ruff"))
    assert "not rllib" in calls[1]
    assert calls[2].startswith(str(tmp_path / "r" / "bin" / "python")) and "-m rllib" in calls[2]
    assert calls[3].startswith(str(tmp_path / "r" / "bin" / "python")) and "test_ray.py" in calls[3]


def test_every_failed_step_is_named_and_a_clean_run_says_so(tmp_path):
    done, _ = make_test(tmp_path / "a", fail="pytest tests/learning/test_ray.py")
    assert done.returncode != 0 and "make test: failed: ray-suite" in done.stdout, done.stdout
    done, calls = make_test(tmp_path / "b", fail="no step has this in its arguments")
    assert done.returncode == 0 and "make test: every suite passed" in done.stdout, done.stdout
    assert len(calls) == 4


def pytest_steps() -> list[list[str]]:
    """The pytest arguments of each step of the Makefile's ``test`` recipe, as the shell splits them."""
    lines, inside = [], False
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith("test:"):
            inside = True
        elif inside and not line.startswith("\t"):
            break
        elif inside and "-m pytest" in line:
            lines.append(shlex.split(line.split("-m pytest", 1)[1].split("||")[0]))
    return lines


def collected(args: list[str]) -> set[str]:
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts=", "-p", "no:cacheprovider", *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode in (0, 5), p.stdout[-2000:] + p.stderr[-2000:]  # (5: none collected here)
    return {line for line in p.stdout.splitlines() if "::" in line}


def test_every_collected_test_is_run_by_exactly_one_step_of_make_test():
    """N45: the RLlib step chose tests by name (``-k rllib``) from five files, so 8 tests whose names say rllib
    (the Makefile's own test among them) ran in no step. Steps now choose by the ``rllib`` marker."""
    steps = pytest_steps()
    assert len(steps) == 3, steps
    everything = collected(["tests"])
    chosen = [collected(args) for args in steps]
    assert len(everything) > 500
    for i in range(len(chosen)):
        for j in range(i + 1, len(chosen)):
            assert not chosen[i] & chosen[j], sorted(chosen[i] & chosen[j])[:5]
    assert set().union(*chosen) == everything, sorted(everything - set().union(*chosen))[:10]
