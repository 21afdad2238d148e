"""Issue 38, case 7: ``eval.csv`` holds exactly one row set per evaluation point up to the checkpoint, whatever
the kills and resumes. A run killed while an evaluation ran never evaluated those weights (one run lost 3 of 4
points over 10 kills); a ``--resume`` of a finished run evaluated its final weights again (8 rows became 12)."""
from __future__ import annotations

import csv
import subprocess
import sys

from common import ROOT, SMOKE, needs

pytestmark = needs("torch", "train")

SETS = ["total_frames=2048", "batch_size=256", "num_envs=8", "eval_every=1024", "eval_deals=2",
        "state_layers=[16]", "head_layers=[16]"]


def rows(run_dir) -> list[tuple[int, str, str]]:
    with open(run_dir / "eval.csv", newline="") as f:
        return sorted((int(r["frames"]), r["opponent"], r["mode"]) for r in csv.DictReader(f))


def train_cli(*args: str) -> None:
    p = subprocess.run([sys.executable, "train.py", *args, "--no-progress"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-1500:]


def test_a_resume_of_a_finished_run_does_not_evaluate_its_final_weights_again(tmp_path):
    """The issue's commands: 8 rows (2 points x 2 opponents x 2 modes) stay 8."""
    run_dir = tmp_path / "R"
    train_cli("--config", str(SMOKE), *[x for s in SETS for x in ("--set", s)], "--run-dir", str(run_dir))
    first = rows(run_dir)
    assert len(first) == 8 and {f for f, _, _ in first} == {1024, 2048}
    train_cli("--resume", str(run_dir))
    assert rows(run_dir) == first
    assert not list((run_dir / "eval_pending").glob("*.pt"))  # nothing left waiting


def test_an_evaluation_cut_short_by_a_stop_is_redone_on_resume_and_only_once(tmp_path):
    """A stop while the evaluation of 1024 frames ran (its rows never written): the resumed evaluator (the
    checkpoint at 1536) evaluates the kept weights of 1024; a point past the checkpoint is dropped; a point
    with rows is not evaluated again."""
    import torch

    from agents.dmc.config import load_config
    from agents.dmc.model import DMCModel
    from agents.dmc.learner.periodic_eval import TrainingEvaluator

    cfg = load_config(SMOKE, [*SETS, "eval_opponents=[random]"])
    run_dir = tmp_path / "R"
    run_dir.mkdir()
    torch.manual_seed(0)
    model = DMCModel([16], [16])
    ev = TrainingEvaluator(cfg, run_dir)
    ev.submit(model, 512, 1.0)
    ev.close(wait=True)
    ev = TrainingEvaluator(cfg, run_dir, resume_frames=512)
    ev.submit(model, 1024, 2.0)
    ev.submit(model, 2048, 3.0)
    ev.close(wait=False)  # the stop: both evaluations dropped in flight
    kept = sorted(p.name for p in (run_dir / "eval_pending").glob("*.pt"))
    assert kept == ["000000001024.pt", "000000002048.pt"]
    assert rows(run_dir) == [(512, "random", "duplicate"), (512, "random", "fixed-landlord")]

    ev = TrainingEvaluator(cfg, run_dir, resume_frames=1536)  # --resume from the checkpoint at 1536 frames
    assert not ev.wants(512) and not ev.wants(1024) and ev.wants(2048)
    ev.submit(model, 512, 9.0)  # has rows: not again
    ev.close(wait=True)
    assert [f for f, _, _ in rows(run_dir)] == [512, 512, 1024, 1024]
    assert not list((run_dir / "eval_pending").glob("*.pt"))
