"""README's test command (``make test``): every step runs even when one before it failed, and the target
fails at the end naming the steps that did (issue 44, item 1: one failure no longer hides the suites after it).

The recipe runs against stand-in venvs whose ``python`` and ``ruff`` only record their arguments (and fail
where told), so the test checks the Makefile's own logic in a second, without installing anything.
"""
from __future__ import annotations

import shutil
import subprocess
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
    assert calls[2].startswith(str(tmp_path / "r" / "bin" / "python")) and "-k rllib" in calls[2]
    assert calls[3].startswith(str(tmp_path / "r" / "bin" / "python")) and "test_ray.py" in calls[3]


def test_every_failed_step_is_named_and_a_clean_run_says_so(tmp_path):
    done, _ = make_test(tmp_path / "a", fail="pytest tests/learning/test_ray.py")
    assert done.returncode != 0 and "make test: failed: ray-suite" in done.stdout, done.stdout
    done, calls = make_test(tmp_path / "b", fail="no step has this in its arguments")
    assert done.returncode == 0 and "make test: every suite passed" in done.stdout, done.stdout
    assert len(calls) == 4
