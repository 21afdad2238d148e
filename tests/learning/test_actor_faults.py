"""Actor processes that die: the learner never hangs, replaces them with fresh deals and says so (issue 22, 2)."""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")

from agents.dmc.config import load_config
from agents.dmc.model import DMCModel
from agents.dmc.learner.sources import SharedMemorySource
from agents.runs.weights import read_weights

from actor_processes import actor_pids as _actors
from common import ROOT, SMOKE


def test_the_weights_are_not_read_while_the_learner_writes_them():
    src, dst = DMCModel([8], [8, 4]), DMCModel([8], [8, 4])

    class V:
        value = 0

    version = V()
    version.value = 3  # odd: a write in progress
    before = {k: v.clone() for k, v in dst.state_dict().items()}
    assert read_weights(src, version, dst) is None
    version.value = 4
    assert read_weights(src, version, dst) == 4
    assert all(torch.equal(v, src.state_dict()[k]) for k, v in dst.state_dict().items())
    assert not all(torch.equal(v, before[k]) for k, v in dst.state_dict().items())


def test_killed_actors_are_replaced_and_the_run_completes(tmp_path):
    """SIGKILL an actor twice during a run with two actors: each time a warning names it and a replacement
    with fresh deals takes its place; the run reaches its frames and exits 0."""
    run = tmp_path / "run"
    total = 160 * 256
    cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(SMOKE), "--run-dir", str(run), "--no-progress",
           "--set", "num_actors=2", "--set", "num_envs=16", "--set", "batch_size=256",
           "--set", f"total_frames={total}", "--set", "log_every_frames=2560", "--set", "checkpoint_every=1000000",
           "--set", "eval_every=0"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    killed = []
    try:
        deadline = time.time() + 240
        while len(killed) < 2 and time.time() < deadline and p.poll() is None:
            rows = list(csv.DictReader(open(run / "log.csv"))) if (run / "log.csv").exists() else []
            actors = _actors(p.pid)
            # kill at the first log row, then again a few rows later (by then a replacement runs)
            if len(actors) == 2 and len(rows) >= (1 if not killed else 4):
                victim = actors[len(killed) % 2]
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)
            time.sleep(0.2)
        assert len(killed) == 2, "the run ended (or stalled) before both kills"
        _, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err[-2000:]
    assert err.count("died (exit code -9)") == 2 and err.count("starting a replacement") == 2, err[-2000:]
    rows = list(csv.DictReader(open(run / "log.csv")))
    assert int(rows[-1]["frames"]) >= total


def test_an_actor_that_cannot_start_is_an_error_not_a_hang(tmp_path):
    """An actor that dies before its first batch, again and again (here: an opponent it cannot load), stops
    the run with an error naming the actor, after a few replacements."""
    cfg = load_config(SMOKE, {"num_actors": 1, "num_envs": 8, "batch_size": 64, "total_frames": 640,
                              "opponents": [str(tmp_path / "missing.pt")], "opponent_share": 0.5})
    model = DMCModel(**cfg.model_kwargs())
    t0 = time.time()
    src = SharedMemorySource(cfg, model, 0)
    try:
        with pytest.raises(RuntimeError, match=r"actor process 0 exited with code 1 before sending a batch, 3 times"):
            src.get()
    finally:
        src.close()
    assert time.time() - t0 < 120
