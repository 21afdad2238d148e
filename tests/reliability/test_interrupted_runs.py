"""Issue 62, item 3: interrupted runs keep their work. Ctrl-C in the first twelve minutes of ``train.py --config
default`` kept nothing: its checkpoints came every 2M frames and the interrupted run left a folder without one.
Now a checkpoint also comes every ``checkpoint_every_seconds`` (300 by default), and Ctrl-C or SIGTERM saves the
state of the last whole update before the run ends (exit 130 and 143), with the command that continues it."""
from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from actor_processes import actor_pids
from common import ROOT, SMOKE, needs

pytestmark = needs("torch", "train")

#: inline (num_actors 0, deterministic), four updates of 128 frames at most
TINY = {"num_envs": 16, "batch_size": 128, "total_frames": 512, "state_layers": [32], "head_layers": [32, 16],
        "log_every_frames": 128, "eval_every": 0, "checkpoint_every": 10**6}
#: one actor process, an update of 64 frames and a log line after each (how the test sees the first update)
SMALL = ["--set", "num_actors=1", "--set", "num_envs=8", "--set", "batch_size=64", "--set", "eval_every=0",
         "--set", "log_every_frames=64", "--set", "checkpoint_every=1000000", "--set", "total_frames=100000000"]


def config(**kw):
    from agents.dmc.config import load_config

    return load_config(SMOKE, {**TINY, **kw})


def saves(monkeypatch) -> list[tuple[str, int]]:
    """Every checkpoint the trainer writes, as (file name, frames), in order."""
    from agents.dmc.learner import trainer

    real, out = trainer.save_checkpoint, []

    def spy(ck, path):
        out.append((Path(path).name, ck["frames"]))
        real(ck, path)

    monkeypatch.setattr(trainer, "save_checkpoint", spy)
    return out


def signal_at_update(monkeypatch, n: int, sig: int = signal.SIGINT) -> None:
    """``sig`` to this process in the middle of the ``n``-th update (in ``learn``, before the weights change)."""
    from agents.dmc.learner import trainer

    real, calls = trainer.learn, itertools.count(1)

    def learn(*args, **kwargs):
        if next(calls) == n:
            signal.raise_signal(sig)
        return real(*args, **kwargs)

    monkeypatch.setattr(trainer, "learn", learn)


def test_a_checkpoint_comes_on_time_before_the_first_frames_checkpoint_and_kept_copies_stay_on_frames(
        tmp_path, monkeypatch):
    from agents.dmc.learner.trainer import train
    from agents.runs.observers import Checkpoints

    ticks = itertools.count()  # a clock that reads one second later at each update (the run's speed is no factor)
    monkeypatch.setattr(Checkpoints, "clock", staticmethod(lambda: float(next(ticks))))
    saved = saves(monkeypatch)
    run = tmp_path / "run"
    train(config(total_frames=1024, checkpoint_every=512, checkpoint_every_seconds=3, keep_checkpoints=True), run,
          progress=False)
    # on time after 3 updates (384 frames, before the first frames checkpoint at 512), on frames at 512 (the clock
    # starts again), on time 3 updates later (896), on frames at 1024, then the final one; kept copies only on frames
    assert [f for name, f in saved if name == "checkpoint.pt"] == [384, 512, 896, 1024, 1024]
    assert sorted(p.name for p in run.glob("checkpoint_*.pt")) == ["checkpoint_000000000512.pt",
                                                                   "checkpoint_000000001024.pt"]


def test_the_default_saves_every_five_minutes_at_most():
    from agents.dmc.config import TrainConfig, load_config

    assert TrainConfig().checkpoint_every_seconds == 300
    assert load_config("default").checkpoint_every_seconds == 300
    with pytest.raises(ValueError, match="checkpoint_every_seconds"):
        load_config(SMOKE, {"checkpoint_every_seconds": -1})


def test_ctrl_c_during_an_update_saves_that_update_and_resume_continues_exactly(tmp_path, monkeypatch):
    from agents.dmc.config import config_from_dict
    from agents.dmc.learner.trainer import load_checkpoint, train

    import torch

    straight = load_checkpoint(train(config(), tmp_path / "straight", progress=False))
    signal_at_update(monkeypatch, 3)
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt) as stop:
        train(config(), run, progress=False)
    assert stop.value.saved == 384  # the third update ended, then the run stopped with it saved
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # (the handlers are restored)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    ck = load_checkpoint(run)
    assert (ck["frames"], ck["updates"]) == (384, 3)
    monkeypatch.undo()
    resumed = load_checkpoint(train(config_from_dict(ck["config"]), run, resume=ck, progress=False))
    assert resumed["frames"] == straight["frames"] == 512
    for key in straight["model"]:  # the inline run goes on as if it had never stopped
        torch.testing.assert_close(resumed["model"][key], straight["model"][key], rtol=1e-6, atol=1e-7)


def test_a_second_ctrl_c_during_the_save_leaves_the_previous_checkpoint_whole(tmp_path, monkeypatch):
    import torch

    from agents.dmc.learner.trainer import load_checkpoint, train

    signal_at_update(monkeypatch, 3)
    real_save, cut = torch.save, []

    def save(obj, f, *args, **kwargs):
        if not cut and isinstance(obj, dict) and obj.get("updates") == 3:  # the save on stopping: half written, then Ctrl-C again
            f.write(b"\0" * 4096)
            cut.append(True)
            signal.raise_signal(signal.SIGINT)
        return real_save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save)
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt) as stop:
        train(config(checkpoint_every=256), run, progress=False)
    assert cut and not hasattr(stop.value, "saved")
    assert load_checkpoint(run)["frames"] == 256  # the checkpoint before, intact
    assert sorted(p.name for p in run.iterdir() if "checkpoint" in p.name) == ["checkpoint.pt"]  # no temporary file
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def alive(pid: int) -> bool:
    try:
        return b"spawn_main" in open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return False


@pytest.mark.parametrize("sig, to_group, code, said", [(signal.SIGINT, True, 130, "interrupted"),
                                                       (signal.SIGTERM, False, 143, "stopped by SIGTERM")],
                         ids=["ctrl-c", "sigterm"])
def test_a_signalled_train_py_saves_says_how_to_resume_ends_its_actors_and_resume_goes_on(tmp_path, sig, to_group,
                                                                                          code, said):
    """Ctrl-C in a terminal signals the whole process group (the actors too); SIGTERM (``kill``) the learner only."""
    from agents.dmc.learner.trainer import load_checkpoint

    run = tmp_path / "run"
    p = subprocess.Popen([sys.executable, str(ROOT / "train.py"), "--no-progress", "--config", str(SMOKE),
                          "--run-dir", str(run), *SMALL], cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    guard = threading.Timer(300, lambda: os.killpg(p.pid, signal.SIGKILL))  # (only if it hangs)
    guard.start()
    try:
        err = ""
        for line in p.stderr:  # a log line after every update: the first says the run has trained
            err += line
            if " INFO dmc: frames " in line:
                break
        assert not (run / "checkpoint.pt").exists(), err
        actors = actor_pids(p.pid)
        assert actors, err
        (os.killpg if to_group else os.kill)(p.pid, sig)
        err += p.stderr.read()
        p.wait()
    finally:
        guard.cancel()
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == code and "Traceback" not in err, err[-3000:]
    ck = load_checkpoint(run)
    assert ck["frames"] >= 64 and ck["frames"] == 64 * ck["updates"]
    last = err.strip().splitlines()[-1]
    assert last == (f"train.py: {said}; checkpoint saved at {ck['frames']:,} frames ({run / 'checkpoint.pt'}): "
                    f"continue with: python train.py --resume {run}"), err[-3000:]
    assert not [pid for pid in actors if alive(pid)]
    more = subprocess.run([sys.executable, str(ROOT / "train.py"), "--no-progress", "--resume", str(run), "--set",
                           "num_actors=0", "--set", f"total_frames={ck['frames'] + 64}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert more.returncode == 0, more.stderr[-3000:]
    assert f"resumed at {ck['frames']} frames" in more.stderr
    assert load_checkpoint(run)["frames"] == ck["frames"] + 64
