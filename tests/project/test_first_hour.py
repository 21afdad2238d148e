"""A new user's first hour (issue 24): "did you mean" on typos, help texts, the progress bar and log lines."""
from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from common import ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, hint", [
    (["train.py", "--config", "smok"], "did you mean 'smoke'?"),
    (["train.py", "--config", "smoke", "--set", "total_frame=5"], "did you mean 'total_frames'?"),
    (["evaluate.py", "--a", "pretrianed", "--b", "rule", "--deals", "2"], "did you mean 'pretrained'?"),
])
def test_typos_get_a_did_you_mean(args, hint):
    pytest.importorskip("yaml")
    p = _run(*args)
    assert p.returncode == 2 and hint in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_no_suggestion_for_a_word_like_nothing_known():
    from agents.dmc.config import did_you_mean

    assert did_you_mean("zzzzqq", ["smoke", "default"]) == ""
    assert did_you_mean("defualt", ["smoke", "default"]) == " (did you mean 'default'?)"


def test_evaluate_help_says_its_title_once_and_export_names_its_command():
    p = _run("evaluate.py", "--help")
    title = "Head-to-head evaluation of two agents on the same seeded deals."
    assert p.returncode == 0 and p.stdout.count(title) == 1, p.stdout
    pytest.importorskip("torch")
    p = _run("-m", "agents.dmc.export", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: python -m agents.dmc.export"), p.stdout


def test_the_progress_bar_stops_at_its_total(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("tqdm")
    from agents.dmc.config import load_config
    from agents.dmc.learner.trainer import train

    cfg = load_config(ROOT / "configs" / "smoke.yaml",
                      {"num_envs": 16, "batch_size": 128, "total_frames": 1000, "state_layers": [16],
                       "head_layers": [16, 8], "log_every_frames": 500, "eval_every": 0})
    train(cfg, tmp_path / "run", progress=True)  # 8 updates: 1,024 frames, past the total of 1,000
    err = capsys.readouterr().err
    counts = re.findall(r"([\d.]+k?)/([\d.]+k?)", err)
    assert counts and counts[-1][0] == counts[-1][1] == "1.00k", counts[-3:]


def test_an_evaluation_log_line_leaves_out_a_missing_value(caplog):
    pytest.importorskip("torch")
    from agents.dmc.learner.periodic_eval import EVAL_FIELDS, TrainingEvaluator

    class Fake:
        path = None
        tb = None

    row = {k: "" for k in EVAL_FIELDS}
    row.update(frames=100, opponent="rule", mode="duplicate", score=0.5, ci_lo=0.1, ci_hi=0.9, wp_farmer=0.25)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        Fake.path = Path(d) / "eval.csv"
        with caplog.at_level(logging.INFO, logger="dmc"):
            TrainingEvaluator._write(Fake, [row])
    line = caplog.messages[-1]
    assert line.endswith("per hand; WP farmers 0.250") and "landlord ," not in line, line


def test_an_evaluation_log_line_gives_every_figure_in_3_decimals(tmp_path, caplog):
    """The training log's evaluation line mixed the scores' 3 decimals with eval.csv's 5 for the win rates
    (``... per hand; WP landlord 0.51471, farmers 0.5``): now every figure has 3 (eval.csv keeps its 5)."""
    pytest.importorskip("torch")
    from types import SimpleNamespace

    from agents.dmc.learner.periodic_eval import EVAL_FIELDS, TrainingEvaluator

    row = {k: "" for k in EVAL_FIELDS}
    row.update(frames=200000, opponent="rule", mode="fixed-landlord", score=0.12345, ci_lo=-0.5, ci_hi=0.74691,
               wp_landlord=0.51471, wp_farmer=0.5)
    with caplog.at_level(logging.INFO, logger="dmc"):
        TrainingEvaluator._write(SimpleNamespace(path=tmp_path / "eval.csv", tb=None), [row])
    line = caplog.messages[-1]
    assert line == ("eval at 200000 frames vs rule (fixed-landlord): +0.123 [-0.500, +0.747] per hand; "
                    "WP landlord 0.515, farmers 0.500"), line
    figures = re.findall(r"\d+\.\d+", line)
    assert len(figures) == 5 and {len(f.split(".")[1]) for f in figures} == {3}, figures
    assert ",0.51471," in (tmp_path / "eval.csv").read_text()  # the file keeps its 5 decimals


def test_small_evaluations_get_student_t_intervals():
    import numpy as np

    from agents.evaluation.stats import mean_ci

    ci = mean_ci(np.array([0.0, 2.0]))  # mean 1, se 1, t(1) = 12.706
    assert ci["ci95"][0] == pytest.approx(1 - 12.7062, abs=1e-3) and ci["ci95"][1] == pytest.approx(1 + 12.7062, abs=1e-3)
    big = mean_ci(np.arange(5000.0) % 2)  # t(4999) ~ 1.9604: the normal interval
    assert (big["ci95"][1] - big["mean"]) / big["se"] == pytest.approx(1.9604, abs=1e-3)
