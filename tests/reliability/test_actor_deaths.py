"""An actor killed three times before its first batch ended ``train.py`` with a traceback (``RuntimeError: actor
process 0 exited with code -9 before sending a batch, 3 times in a row``) and no word on what was left: a resumed
run's checkpoint was intact and ``--resume`` would go on from it. Now it is one line, exit 1, with the resume hint
(the way a checkpoint that cannot be written or a full disk already ended)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from actor_processes import actor_pids
from common import ROOT, SMOKE, needs

pytestmark = needs("torch", "train")

#: one actor, tiny batches, nothing but training (a first batch comes within seconds of an actor's start)
SMALL = ["--set", "num_actors=1", "--set", "num_envs=8", "--set", "batch_size=64", "--set", "eval_every=0",
         "--set", "log_every_frames=64", "--set", "checkpoint_every=1000000"]


def train(args: list[str], kill_actors: int = 0) -> subprocess.CompletedProcess:
    """``train.py`` with ``args``; with ``kill_actors``, each actor process is killed (SIGKILL, as the
    out-of-memory killer does) as soon as it appears, before it can import torch, ``kill_actors`` times."""
    p = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--no-progress", *args], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: set[int] = set()
    try:
        deadline = time.time() + 180
        while len(killed) < kill_actors and p.poll() is None and time.time() < deadline:
            for pid in actor_pids(p.pid):
                if pid not in killed:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            time.sleep(0.02)
        out, err = p.communicate(timeout=240)
    finally:
        if p.poll() is None:
            p.kill()
    assert len(killed) == kill_actors, (len(killed), err[-2000:])
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def error_lines(err: str) -> list[str]:
    """stderr less the log lines (``... WARNING dmc...``: the learner says each replacement as it starts it)."""
    return [x for x in err.splitlines() if x.strip() and " INFO " not in x and " WARNING " not in x]


def test_actors_killed_before_their_first_batch_on_resume_end_in_one_line_naming_resume(tmp_path):
    run = tmp_path / "run"
    first = train(["--config", str(SMOKE), "--run-dir", str(run), "--set", "total_frames=128", *SMALL])
    assert first.returncode == 0 and (run / "checkpoint.pt").is_file(), first.stderr[-2000:]
    p = train(["--resume", str(run), "--set", "total_frames=100000"], kill_actors=3)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    (line,) = error_lines(p.stderr)
    assert "actor process 0 exited with code -9 before sending a batch, 3 times in a row" in line
    assert "out of memory?" in line and f"--resume {run}" in line and "checkpoint" in line, line
    assert p.stderr.count("starting a replacement") == 2


def test_actors_killed_before_any_checkpoint_say_to_start_again(tmp_path):
    """A new run that never got a batch has no checkpoint: the line says so instead of naming --resume."""
    run = tmp_path / "run"
    p = train(["--config", str(SMOKE), "--run-dir", str(run), "--set", "total_frames=100000", *SMALL],
              kill_actors=3)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    (line,) = error_lines(p.stderr)
    assert "3 times in a row" in line and "no checkpoint was written yet: start the run again" in line, line
    assert not (run / "checkpoint.pt").exists()
