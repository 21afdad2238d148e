"""The league (agents/evaluation/league.py, ``evaluate.py --league``): every pair plays duplicate on the same
deals, an antisymmetric score matrix equal to evaluate's, least-squares ratings with a paired
bootstrap, RUN@N expansion, the JSON and PNG, and one clear error (exit 2) for bad input."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents import RuleAgent, evaluate
from agents.cli import evaluate as cli
from agents.evaluation.league import (bootstrap_ratings, expand_specs, fit_ratings, league_from_per_deal, matrix_of,
                           pairs_of, play_league)

from common import ROOT
DEALS, SEED = 24, 3
CAUTIOUS = RuleAgent(bid_at=(0.5, 0.55, 0.6), double_at=0.9, redouble_at=0.9)


@pytest.fixture(scope="module")
def league():
    return play_league(["random", "rule", CAUTIOUS], deals=DEALS, seed=SEED, bootstrap=400)


# ---------------------------------------------------------------------------------- a played league
def test_matrix_is_antisymmetric_with_a_zero_diagonal(league):
    m = league.matrix
    assert m.shape == (3, 3) and league.per_deal.shape == (3, DEALS)
    assert np.array_equal(m, -m.T) and not m[np.diag_indices(3)].any()
    assert np.allclose(league.matrix_lo, -league.matrix_hi.T, equal_nan=True)
    off = ~np.eye(3, dtype=bool)
    assert (league.matrix_lo[off] < m[off]).all() and (m[off] < league.matrix_hi[off]).all()


def test_rule_is_rated_above_random(league):
    rand, rule = league.labels.index("random"), league.labels.index("rule")
    assert league.order.index(rule) < league.order.index(rand)
    assert league.ratings_lo[rule] > league.ratings_hi[rand]  # clearly, not by a hair
    assert abs(league.ratings.sum()) < 1e-9
    assert ((league.ratings_lo <= league.ratings) & (league.ratings <= league.ratings_hi)).all()


def test_a_cell_is_what_evaluate_reports_for_that_pair(league):
    """The league plays each pair through the evaluation's arena: the same deals, the same numbers."""
    res = evaluate("rule", "random", deals=DEALS, seed=SEED)
    rand, rule = league.labels.index("random"), league.labels.index("rule")
    assert league.matrix[rule, rand] == pytest.approx(res["A"]["mean_score"], abs=1e-12)
    assert [league.matrix_lo[rule, rand], league.matrix_hi[rule, rand]] == pytest.approx(res["A"]["score_ci95"])
    assert league.per_deal[pairs_of(3).index((rand, rule))] == pytest.approx(-np.array(res["per_deal_score_a"]))


# ------------------------------------------------------------------------------------------ the model
def test_ratings_are_the_least_squares_fit_with_zero_sum():
    rng = np.random.default_rng(0)
    n = 5
    m = matrix_of(rng.normal(size=len(pairs_of(n))), n)
    rows = [np.eye(n)[i] - np.eye(n)[j] for i, j in pairs_of(n)] + [np.ones(n)]
    target = [m[i, j] for i, j in pairs_of(n)] + [0.0]
    want = np.linalg.lstsq(np.array(rows), np.array(target), rcond=None)[0]
    assert fit_ratings(m) == pytest.approx(want, abs=1e-12)
    strength = np.array([3.0, -1.0, 0.5, 2.0, 0.0])  # a consistent matrix is fitted exactly
    assert fit_ratings(strength[:, None] - strength[None, :]) == pytest.approx(strength - strength.mean())


def test_bootstrap_resamples_the_deals_jointly_for_every_pair():
    """Pairs (0,1) and (0,2) have the same per-deal results and (1,2) ties every deal: agents 1 and 2
    are the same strength on every resample only if one draw of deals serves every pair."""
    x = np.random.default_rng(1).normal(size=40)
    res = league_from_per_deal(["a", "b", "c"], np.stack([x, x, np.zeros(40)]), seed=0, bootstrap=300)
    assert res.ratings_hi[1] - res.ratings_lo[1] > 0.05
    assert res.ratings_lo[1] == pytest.approx(res.ratings_lo[2], abs=1e-12)
    assert res.ratings_hi[1] == pytest.approx(res.ratings_hi[2], abs=1e-12)
    boot = bootstrap_ratings(np.stack([x, x, np.zeros(40)]), 3, 50, np.random.default_rng(2))
    assert boot[:, 1] == pytest.approx(boot[:, 2], abs=1e-12) and boot.sum(axis=1) == pytest.approx(0, abs=1e-12)
    same = league_from_per_deal(["a", "b", "c"], np.full((3, 10), 2.0), bootstrap=50)  # no spread, no width
    assert same.ratings_lo == pytest.approx(same.ratings) and same.ratings_hi == pytest.approx(same.ratings)


def test_bootstrap_is_seeded():
    per_deal = np.random.default_rng(4).normal(size=(3, 30))
    a, b = (league_from_per_deal(["x", "y", "z"], per_deal, seed=s, bootstrap=200) for s in (0, 0))
    c = league_from_per_deal(["x", "y", "z"], per_deal, seed=1, bootstrap=200)
    assert np.array_equal(a.ratings_lo, b.ratings_lo) and not np.array_equal(a.ratings_lo, c.ratings_lo)


# ------------------------------------------------------------------------------------------- RUN@N
def _fake_run(folder: Path, frames: list[int]) -> Path:
    folder.mkdir()
    for f in frames:
        (folder / f"checkpoint_{f:012d}.pt").write_bytes(b"")
    (folder / "checkpoint.pt").write_bytes(b"")  # the latest: not a kept one
    (folder / "notes.txt").write_text("")
    return folder


def test_run_at_n_takes_the_first_kept_checkpoint_past_each_multiple(tmp_path):
    run = _fake_run(tmp_path / "run", [100096, 150000, 200192, 300032, 400128])
    labels, specs = expand_specs(["rule", f"{run}@200000"])
    assert labels == specs == ["rule", str(run / "checkpoint_000000200192.pt"), str(run / "checkpoint_000000400128.pt")]
    labels, _ = expand_specs([f"{run}@100_000"])
    assert [Path(x).name for x in labels] == [f"checkpoint_{f:012d}.pt" for f in (100096, 200192, 300032, 400128)]
    with pytest.raises(ValueError, match=r"no kept checkpoint .* at frames: 100,096, 150,000"):
        expand_specs(["rule", f"{run}@1000000"])


def test_bad_league_specs_are_value_errors_naming_them(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for specs, message in ((["rule"], "at least two agents, got 1"),
                           (["rule", "random", "rule"], "'rule' is named twice"),
                           (["rule", f"{empty}@100"], "keep_checkpoints: true"),
                           (["rule", f"{empty}@0"], "must be positive, got 0"),
                           (["rule", "nofolder@100"], "'nofolder' is not a folder")):
        with pytest.raises(ValueError, match=message):
            expand_specs(specs)


# ---------------------------------------------------------------------------------------------- CLI
def _dmc_run(folder: Path, frames: list[int]) -> Path:
    """A run folder with kept checkpoints of small untrained DMC networks (seeded differently)."""
    torch = pytest.importorskip("torch", reason="DMC checkpoints need the train extra")
    from agents.dmc.config import load_config
    from agents.dmc.learner.trainer import checkpoint_dict, make_model, make_optimizer, save_checkpoint

    cfg = load_config(ROOT / "configs" / "smoke.yaml",
                      {"num_envs": 16, "batch_size": 128, "state_layers": [32], "head_layers": [32, 16]})
    folder.mkdir()
    for k, f in enumerate(frames):
        torch.manual_seed(k)
        model = make_model(cfg)
        save_checkpoint(checkpoint_dict(cfg, model, make_optimizer(cfg, model), f, 0, 0.0, None),
                        folder / f"checkpoint_{f:012d}.pt")
    return folder


def test_cli_league_prints_the_table_and_writes_json_and_png(tmp_path, capsys):
    run = _dmc_run(tmp_path / "run", [512, 1024])
    out = tmp_path / "league.json"
    argv = ["--league", "random", "rule", f"{run}@512", "--deals", "6", "--seed", "1", "--out", str(out),
            "--no-progress"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    ckpts = [str(run / "checkpoint_000000000512.pt"), str(run / "checkpoint_000000001024.pt")]
    assert data["agents"] == ["random", "rule", *ckpts]
    assert data["config"]["league"] == ["random", "rule", f"{run}@512"] and data["config"]["deals"] == 6
    assert set(data["ratings"]) == set(data["agents"])
    for r in data["ratings"].values():
        lo, hi = r["ci95"]
        assert lo <= r["rating"] <= hi and 1 <= r["rank"] <= 4
    m = np.array(data["matrix"])
    assert m.shape == (4, 4) and np.array_equal(m, -m.T)
    assert [data["ratings"][x]["rating"] for x in data["order"]] == \
        sorted((r["rating"] for r in data["ratings"].values()), reverse=True)
    assert sum(r["rating"] for r in data["ratings"].values()) == pytest.approx(0, abs=1e-9)
    assert len(data["pairs"]) == 6 and data["pairs"][0]["hands"] == 36
    rows = [line.split()[1] for line in text.splitlines() if line[:4].strip().isdigit()][:4]
    assert rows == data["order"]  # the table: strongest first
    png = tmp_path / "league.png"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert data["png"] is None and not png.exists() and "no PNG" in text
    else:
        assert data["png"] == str(png) and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_league_bad_input_is_one_clear_error(tmp_path, capsys):
    empty = tmp_path / "run"
    empty.mkdir()
    out = tmp_path / "l.json"
    for args, message in ((["random", "rul"], "unknown agent 'rul'"),
                          (["rule"], "at least two agents"),
                          (["rule", f"{empty}@1000"], "no kept checkpoint"),
                          (["rule", "random", "--a", "rule"], "drop --a"),
                          (["rule", "random", "--mode", "fixed-landlord"], "duplicate only"),
                          (["rule", "random", "--deals", "0"], "--deals must be at least 1")):
        deals = [] if "--deals" in args else ["--deals", "2"]
        assert cli.main(["--league", *args, *deals, "--out", str(out)]) == 2, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and message in err, (args, err)
        assert not out.exists()


def test_evaluate_still_needs_a_and_b_without_league(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--a", "rule", "--deals", "2"])
    assert e.value.code == 2 and "--a and --b are required" in capsys.readouterr().err


def test_the_league_says_its_hands_and_about_how_long_before_the_first_hand(capsys):
    # issue 47: README's tour line played 72,000 hands (about 7 minutes) without a word of it
    from agents.evaluation.league import HANDS_PER_SECOND, league_plan

    line = league_plan(["random", "rule", "pretrained", "runs/x"], deals=2000)
    assert line.startswith("league: 4 agents, 6 pairs, 2000 deals each in duplicate: 72,000 hands, about 6 min "
                           "with 1 worker(s)") and f"{HANDS_PER_SECOND} hands/s" in line, line
    assert "about 3 min with 2 worker(s)" in league_plan(["random", "rule", "pretrained", "runs/x"], 2000, workers=2)
    assert "search agents play far slower" in league_plan(["rule", "search:rule"], 10)

    events = []

    class Watched(RuleAgent):
        def act_batch(self, decisions):
            events.append("hand")
            return super().act_batch(decisions)

    play_league(["random", Watched()], deals=2, seed=0, bootstrap=10, announce=events.append)
    assert events[0].startswith("league: 2 agents, 1 pair, 2 deals each in duplicate: 12 hands, under a second") \
        and events[1:] and set(events[1:]) == {"hand"}, events[:2]
    assert cli.main(["--league", "random", "rule", "--deals", "2", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("league: 2 agents, 1 pair, 2 deals each in duplicate: 12 hands")
