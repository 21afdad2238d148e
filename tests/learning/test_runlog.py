"""The run log: the learner's bid / double choices in log.csv, every log.csv scalar in TensorBoard (or a
one-line note without it), the learning curve's panels (issue 24, 2 and 3)."""
from __future__ import annotations

import csv
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="the DMC trainer needs the train extra (pip install 'ddz-env[train]')")

from agents.dmc.config import load_config
from agents.dmc.learner.runlog import CHOICE_FIELDS, CSV_FIELDS
from agents.dmc.learner.trainer import train

from common import ROOT, SMOKE
TINY = {"num_envs": 16, "batch_size": 128, "total_frames": 2048, "state_layers": [32], "head_layers": [32, 16],
        "log_every_frames": 512, "eval_every": 0}


def test_log_rows_carry_the_learners_choices_and_tensorboard_gets_every_scalar(tmp_path):
    run = tmp_path / "run"
    train(load_config(SMOKE, TINY), run, progress=False)
    rows = list(csv.DictReader(open(run / "log.csv")))
    assert set(CHOICE_FIELDS) <= set(rows[0])
    for r in rows:
        shares = [float(r[k]) for k in CHOICE_FIELDS[:4]]
        assert abs(sum(shares) - 1) < 1e-3 and all(0 <= x <= 1 for x in shares), r  # every bidding turn counted once
        assert 0 <= float(r["double_rate"]) <= 1 and 0 <= float(r["void_rate"]) <= 1
    assert (run / "learning_curve.png").stat().st_size > 10_000
    tb = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = tb.EventAccumulator(str(run / "tensorboard"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    numeric = {k for k in CSV_FIELDS if k not in ("time_s", "frames") and rows[-1][k] != ""}
    assert {f"train/{k}" for k in numeric} <= tags, sorted(numeric - {t[6:] for t in tags})
    steps = [e.step for e in acc.Scalars("train/loss_landlord")]
    assert steps == [int(r["frames"]) for r in rows if r["loss_landlord"] != ""]


def test_without_tensorboard_one_line_says_so_and_training_goes_on(tmp_path):
    code = textwrap.dedent(f"""
        import logging, sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "tensorboard" or name.startswith("torch.utils.tensorboard"):
                    raise ImportError("No module named 'tensorboard' (blocked by the test)")
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {str(ROOT)!r})
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        from agents.dmc.config import load_config
        from agents.dmc.learner.trainer import train
        train(load_config({str(SMOKE)!r}, {TINY!r}), {str(tmp_path / "run")!r}, progress=False)
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stderr.count("tensorboard is not installed") == 1, p.stderr[-2000:]
    assert not (tmp_path / "run" / "tensorboard").exists() and (tmp_path / "run" / "log.csv").exists()


def test_compare_overlays_runs_into_one_png_and_refuses_a_folder_without_a_log(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from agents.cli.compare import main

    for k, lr in enumerate((1e-3, 3e-3)):
        train(load_config(SMOKE, {**TINY, "lr": lr, "eval_every": 1024, "eval_deals": 2,
                                  "eval_opponents": ["random"]}), tmp_path / f"run{k}", progress=False)
    out = tmp_path / "cmp.png"
    assert main([str(tmp_path / "run0"), str(tmp_path / "run1"), "--labels", "a", "b", "--out", str(out)]) == 0
    assert out.stat().st_size > 20_000 and "wrote" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "run0"), str(tmp_path / "empty"), "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "has no log.csv rows" in err and err.count("\n") == 1 and not (tmp_path / "x.png").exists()
    assert main([str(tmp_path / "run0")]) == 2
