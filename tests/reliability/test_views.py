"""Issue 38, case 2: TensorBoard is a view of a run. With ``run/tensorboard`` read-only, on a full disk, made
unwritable mid-run or taken by a file, training ended in a traceback and wrote no checkpoint (and, with
evaluation on, no eval.csv). Now each failure costs the view, with one warning, never the run."""
from __future__ import annotations

import contextlib
import logging
import os
import subprocess

import pytest

from common import SMOKE, needs

pytestmark = [needs("torch", "train"), needs("tensorboard", "tensorboard")]

TINY = {"num_envs": 8, "batch_size": 128, "total_frames": 1024, "state_layers": [16], "head_layers": [16],
        "log_every_frames": 128, "eval_every": 0, "num_actors": 0, "checkpoint_every": 512}


def train_tiny(run_dir, caplog, **kw):
    """A tiny inline run; (checkpoint frames, the warnings logged)."""
    from agents.dmc.config import load_config
    from agents.dmc.learner.trainer import load_checkpoint, train

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        train(load_config(SMOKE, {**TINY, **kw}), run_dir, progress=False)
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return load_checkpoint(run_dir)["frames"], warned


def off_warnings(warned: list[str]) -> list[str]:
    return [w for w in warned if w.startswith("TensorBoard is off")]


@contextlib.contextmanager
def mounted(target, *options: str):
    """``mount`` over ``target`` (root on Linux), unmounted afterwards; a skip that says why where it cannot."""
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only or full folder needs root (the folder-is-a-file case runs anywhere)")
    p = subprocess.run(["mount", *options, str(target)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"mount is not allowed here ({p.stderr.strip()[:120]}); the other cases cover the view")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def test_a_file_where_the_tensorboard_folder_goes_costs_only_the_view(tmp_path, caplog):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "tensorboard").write_text("in the way")
    frames, warned = train_tiny(run_dir, caplog, eval_every=512, eval_deals=2, eval_opponents=["random"])
    assert frames == 1024
    assert len(off_warnings(warned)) == 2  # the training log's view and the evaluation's, once each
    rows = (run_dir / "eval.csv").read_text().splitlines()[1:]
    # the evaluation at 512 frames and the final one, each in duplicate and fixed-landlord
    assert sorted(r.split(",")[0] for r in rows) == ["1024", "1024", "512", "512"]


def test_a_read_only_tensorboard_folder_costs_only_the_view(tmp_path, caplog):
    run_dir = tmp_path / "run"
    (run_dir / "tensorboard").mkdir(parents=True)
    with mounted(run_dir / "tensorboard", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs"):
        frames, warned = train_tiny(run_dir, caplog)
    assert frames == 1024 and len(off_warnings(warned)) == 1


def test_a_full_disk_under_tensorboard_costs_only_the_view(tmp_path, caplog):
    run_dir = tmp_path / "run"
    (run_dir / "tensorboard").mkdir(parents=True)
    with mounted(run_dir / "tensorboard", "-t", "tmpfs", "-o", "size=4k", "tmpfs"):
        frames, warned = train_tiny(run_dir, caplog, total_frames=4096)
    assert frames == 4096 and len(off_warnings(warned)) == 1
    assert (run_dir / "log.csv").read_text().count("\n") == 1 + 4096 // 128


def test_tensorboard_failing_mid_run_costs_only_the_view(tmp_path, caplog, monkeypatch):
    """Made read-only mid-run: the writer fails after its first scalars, as the disk's error reaches it."""
    from torch.utils.tensorboard import SummaryWriter

    calls = {"n": 0}
    real = SummaryWriter.add_scalar

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 30:
            raise OSError(30, "Read-only file system")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SummaryWriter, "add_scalar", failing)
    frames, warned = train_tiny(tmp_path / "run", caplog)
    assert frames == 1024 and calls["n"] == 31  # off after the first failure: no call after it
    assert off_warnings(warned) == ["TensorBoard is off for the rest of the run (OSError: [Errno 30] Read-only file "
                                    "system); the run goes on, log.csv and eval.csv keep every figure"]
