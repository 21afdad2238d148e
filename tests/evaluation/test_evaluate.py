"""Head-to-head evaluation (``agents.evaluation``, ``evaluate.py``): duplicate self-play scores
exactly 0, the rule agent beats random with an interval above 0, the figures are present and
consistent, workers and repeats give identical numbers, and bad input fails clearly.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

import evaluate as cli  # noqa: E402
from agents import RandomAgent, RuleAgent, evaluate  # noqa: E402
from agents.evaluation.arena import COL, FIELDS, AgentError, make_deal, seat_seed  # noqa: E402
from agents.base import reset_agent  # noqa: E402
from agents.evaluation.protocols import DUPLICATE_SEATINGS, jobs_for, run_records  # noqa: E402
from ddz_env.env import AGENTS, raw_env  # noqa: E402
from ddz_env.moves import MOVE_TYPE, MoveType  # noqa: E402


pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)


@pytest.fixture(scope="module")
def rule_vs_random() -> dict:
    return evaluate("rule", "random", deals=60, seed=0)


# ---------------------------------------------------------------------------- fairness
@pytest.mark.parametrize("agent", ["rule", "random"])
def test_self_play_in_duplicate_scores_exactly_zero(agent):
    res = evaluate(agent, agent, deals=12, seed=3)
    assert res["A"]["mean_score"] == 0.0 and res["B"]["mean_score"] == 0.0
    assert res["total_score"] == {"A": 0, "B": 0}
    assert all(x == 0.0 for x in res["per_deal_score_a"])


def test_self_play_in_fixed_landlord_scores_exactly_zero():
    res = evaluate("rule", "rule", deals=10, seed=1, mode="fixed-landlord")
    assert res["A"]["mean_score"] == 0.0
    assert res["A"]["overall"] == res["B"]["overall"]
    assert res["A"]["landlord"]["WP"] == res["B"]["landlord"]["WP"]


def test_every_deal_is_played_under_all_six_seatings():
    rec = run_records("rule", "random", deals=3, seed=0)
    assert len(rec) == 18
    np.testing.assert_array_equal(rec[:, COL["deal"]], np.repeat(np.arange(3), 6))
    np.testing.assert_array_equal(rec[:, COL["seating"]], np.tile(np.arange(6), 3))
    assert sorted(DUPLICATE_SEATINGS) == sorted({"".join(p) for p in
                                                 [("A", "A", "B"), ("A", "B", "A"), ("B", "A", "A"),
                                                  ("B", "B", "A"), ("B", "A", "B"), ("A", "B", "B")]})
    # the six hands of a deal start from the same cards and first bidder
    assert len(set(rec[:6, COL["first_bidder"]])) == 1


def test_deals_and_seat_seeds_depend_only_on_seed_and_index():
    d1, d2 = make_deal(5, 7), make_deal(5, 7)
    np.testing.assert_array_equal(d1.hands, d2.hands)
    assert not np.array_equal(make_deal(5, 8).hands, d1.hands)
    assert seat_seed(5, 7, 0) == seat_seed(5, 7, 0) != seat_seed(5, 7, 1)


# ---------------------------------------------------------------------------- rule vs random
def test_rule_agent_beats_random_clearly(rule_vs_random):
    a = rule_vs_random["A"]
    lo, hi = a["score_ci95"]
    assert a["mean_score"] > 2.0 and lo > 0.0 and lo < a["mean_score"] < hi
    assert a["win_rate_landlord_h2h"] > 0.8 and a["win_rate_farmer_h2h"] > 0.8


# ---------------------------------------------------------------------------- output
def test_figures_are_present_and_consistent(rule_vs_random):
    res = rule_vs_random
    assert res["deals"] == 60 and res["hands"] == 360 and res["seatings"] == list(DUPLICATE_SEATINGS)
    for side in ("A", "B"):
        x = res[side]
        for key in ("mean_score", "score_se", "score_ci95", "landlord_share", "landlord_bids", "mean_landlord_bid",
                    "win_rate_landlord", "win_rate_farmer", "win_rate_landlord_h2h", "win_rate_farmer_h2h",
                    "mean_score_as_landlord", "mean_score_as_farmer",
                    "bids", "double_rate", "redouble_rate", "bombs_per_hand", "seat_hands", "landlord_hands"):
            assert key in x, key
        assert x["seat_hands"] == 60 * 9  # each agent holds 9 of the 18 seats of a deal's six hands
        assert math.isclose(sum(v for v in x["bids"].values()), 1.0)
        assert math.isclose(sum(v for v in x["landlord_bids"].values() if v is not None), 1.0)
    a, b = res["A"], res["B"]
    # zero-sum: every hand sums to zero, so do the seats' totals and the two agents' means
    assert res["max_abs_hand_sum"] == 0 and sum(res["seat_totals"]) == 0
    assert res["total_score"]["A"] == -res["total_score"]["B"]
    assert a["mean_score"] == -b["mean_score"]
    assert math.isclose(a["mean_score"], res["total_score"]["A"] / res["hands"])
    assert math.isclose(a["mean_score"], np.mean(res["per_deal_score_a"]))
    assert math.isclose(a["landlord_share"] + b["landlord_share"], 1.0)
    n_played = round(res["hands"] * (1 - res["void_rate"]))
    assert a["landlord_hands"] + b["landlord_hands"] == n_played
    assert math.isclose(sum(v["mean_score_a"] * v["hands"] for v in res["by_seating"].values()),
                        res["total_score"]["A"])
    json.dumps(res)  # JSON-ready


def test_fixed_landlord_figures():
    res = evaluate("rule", "random", deals=15, seed=2, mode="fixed-landlord")
    assert res["hands"] == 30 and res["void_rate"] == 0.0 and res["config"]["rules"] == "douzero"
    a, b = res["A"], res["B"]
    for x in (a, b):
        for role in ("landlord", "farmer", "overall"):
            assert set(x[role]) == {"WP", "ADP"}
    assert math.isclose(a["landlord"]["WP"] + b["farmer"]["WP"], 1.0)
    assert math.isclose(a["landlord"]["ADP"], -b["farmer"]["ADP"])
    assert math.isclose(a["overall"]["ADP"], a["mean_score"])  # A's score per hand is its mean ADP
    assert a["overall"]["WP"] > 0.8
    assert a["landlord_share"] == 0.5 and a["landlord_bids"]["1"] == 1.0  # bid 1, as DouZero / RLCard
    assert a["double_rate"] is None  # no doubling in this protocol


# ---------------------------------------------------------------------------- determinism
def test_same_seed_same_numbers_and_workers_do_not_change_them():
    one = evaluate("rule", "random", deals=8, seed=11)
    again = evaluate("rule", "random", deals=8, seed=11)
    two = evaluate("rule", "random", deals=8, seed=11, workers=2)
    for res in (again, two):
        res["config"].pop("workers"), one["config"].pop("workers", None)
        assert res == one
    assert evaluate("rule", "random", deals=8, seed=12)["per_deal_score_a"] != one["per_deal_score_a"]


def test_agent_objects_are_accepted_and_not_mutated():
    r = RandomAgent(seed=123)
    state = r.rng.bit_generator.state
    res = evaluate(RuleAgent(), r, deals=3, seed=0)
    assert res["hands"] == 18 and r.rng.bit_generator.state == state
    assert res == evaluate("rule", "random", deals=3, seed=0) | {"config": res["config"]}


# ---------------------------------------------------------------------------- bad input
def test_unknown_agent_name():
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        evaluate("rule", "nobody", deals=5)


def test_missing_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        evaluate(str(tmp_path / "ckpt.pt"), "random", deals=5)


@pytest.mark.parametrize("deals", [0, -3, 2.5, True])
def test_zero_or_bad_deal_count(deals):
    with pytest.raises(ValueError, match="deals must be a positive integer"):
        evaluate("rule", "random", deals=deals)


def test_bad_mode_and_workers():
    with pytest.raises(ValueError, match="mode must be one of"):
        evaluate("rule", "random", deals=2, mode="tournament")
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        evaluate("rule", "random", deals=2, workers=0)


def test_an_illegal_action_names_the_agent():
    class Cheater:
        def act(self, observation):
            return 0  # a pass, even on a lead or when bidding

        def __repr__(self):
            return "Cheater()"

    with pytest.raises(AgentError, match=r"agent A \(Cheater\(\)\) at seat \d, deal 0, phase BID: illegal action 0"):
        evaluate(Cheater(), "random", deals=1)


def test_an_agent_error_keeps_the_hands_played_before_it():
    class Boom(RuleAgent):
        calls = 0

        def act_batch(self, decisions):
            Boom.calls += 1
            if Boom.calls == 40:
                raise RuntimeError("kaboom")
            return super().act_batch(decisions)

    with pytest.raises(AgentError, match=r"agent B \(.*\) failed at seat \d, deal \d+, phase [A-Z]+: "
                                         r"RuntimeError: kaboom") as e:
        evaluate("rule", Boom(), deals=30, seed=0, tables=4)
    rec = e.value.records
    assert 0 < len(rec) < 180 and rec.shape[1] == len(FIELDS)
    # the hands it holds are real: each equals the same hand in a clean run
    clean = run_records("rule", "rule", deals=30, seed=0)
    key = {(int(r[COL["deal"]]), int(r[COL["seating"]])): r for r in clean}
    for r in rec:
        np.testing.assert_array_equal(r, key[(int(r[COL["deal"]]), int(r[COL["seating"]]))])


class ReturnsGarbage(RuleAgent):
    def act_batch(self, decisions):
        return np.zeros(len(decisions) + 1, np.int64)


def test_an_agent_returning_the_wrong_shape_names_it():
    with pytest.raises(AgentError, match=r"agent B .* act_batch must return \d+ integer action ids"):
        evaluate("random", ReturnsGarbage(), deals=2)


# ---------------------------------------------------------------------------- batched == one hand at a time
def play_hand_aec(env, players, d, seed, index, seating):
    """The reference: one hand through the AEC env, one ``act(observation)`` per decision, each seat's
    agent reset with its seat seed (the evaluator's contract), recorded as ``arena.FIELDS``."""
    options = {"deal": {"hands": d.hands, "bottom": d.bottom, "first_bidder": d.first_bidder}}
    if not env.rules.bidding:
        options["landlord"] = d.first_bidder
    env.reset(options=options)
    g = env.game
    for s in range(3):
        reset_agent(players[s], seat_seed(seed, index, s))
    while not g.is_over:
        s = g.current_player
        env.step(players[s].act(env.observe(AGENTS[s])))
    row = np.zeros(len(FIELDS), dtype=np.int64)
    row[COL["deal"]], row[COL["seating"]], row[COL["first_bidder"]] = index, seating, g.first_bidder
    row[COL["score0"]:COL["score2"] + 1] = g.scores
    row[COL["void"]] = g.void
    row[COL["landlord"]], row[COL["bid"]], row[COL["winner"]] = g.landlord, g.bid, g.winner
    row[COL["bid0"]:COL["bid2"] + 1] = g.bids
    row[COL["dbl0"]:COL["dbl2"] + 1] = g.double_choice
    row[COL["redouble"]] = g.redouble_choice
    for s, m in g.plays:
        if MOVE_TYPE[m] in (MoveType.BOMB, MoveType.ROCKET):
            row[COL["bombs0"] + s] += 1
    row[COL["spring"]], row[COL["anti_spring"]], row[COL["plays"]] = g.spring, g.anti_spring, len(g.plays)
    return row


def one_hand_records(a, b, deals, seed, mode):
    import copy

    fixed = mode == "fixed-landlord"
    env = raw_env(rules="douzero" if fixed else "rulebook")
    seats = ([copy.deepcopy(a) for _ in range(3)], [copy.deepcopy(b) for _ in range(3)])
    rows = [play_hand_aec(env, [seats[k][s] for s, k in enumerate(j.seats)], j.deal, seed, j.index, j.seating)
            for j in jobs_for(seed, 0, deals, mode)]
    return np.array(rows)


@pytest.fixture(scope="module")
def small_dmc():
    torch = pytest.importorskip("torch", reason="the DMC agent needs the train extra")

    from agents.dmc import DMCAgent, DMCModel

    torch.manual_seed(0)
    return DMCAgent(DMCModel([32], [32, 16], hand_after=True))


@pytest.mark.parametrize("mode", ["duplicate", "fixed-landlord"])
def test_batched_evaluation_equals_one_hand_at_a_time(mode, small_dmc):
    """Every hand record of the batched evaluation (tables of 7, refilled as hands end) equals the
    same hand played alone through the AEC env, for random, rule and a small DMC network."""
    seen = []
    for a, b in ((RandomAgent(seed=5), RuleAgent()), (small_dmc, RandomAgent()), (RuleAgent(), small_dmc)):
        deals = 8 if mode == "duplicate" else 15
        batched = run_records(a, b, deals=deals, seed=8, mode=mode, tables=7)
        reference = one_hand_records(a, b, deals, seed=8, mode=mode)
        np.testing.assert_array_equal(batched, reference)
        seen.append(batched)
    seen = np.concatenate(seen)
    # what the comparison covered: bombs, springs and wins of both sides; voids, doubles, redoubles
    assert (seen[:, COL["bombs0"]:COL["bombs2"] + 1] > 0).any() and seen[:, COL["anti_spring"]].any()
    won = seen[seen[:, COL["void"]] == 0]
    assert (won[:, COL["winner"]] == won[:, COL["landlord"]]).any() and (won[:, COL["winner"]] != won[:, COL["landlord"]]).any()
    if mode == "duplicate":
        assert seen[:, COL["void"]].any() and (seen[:, COL["dbl0"]:COL["dbl2"] + 1] == 1).any()
        assert (seen[:, COL["redouble"]] == 1).any() and (seen[:, COL["redouble"]] == 0).any()


def test_batch_size_does_not_change_a_result(small_dmc):
    one = evaluate(small_dmc, "rule", deals=10, seed=2, tables=1)
    many = evaluate(small_dmc, "rule", deals=10, seed=2, tables=64)
    assert one == many


# ---------------------------------------------------------------------------- command line
def test_cli_prints_a_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert cli.main(["--a", "rule", "--b", "random", "--deals", "4", "--seed", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "score/hand [95% CI]" in text and "win rate as landlord" in text and "hands/s" in text
    res = json.loads(out.read_text())
    assert res["config"]["a"] == "rule" and res["hands"] == 24 and "A" in res and "B" in res


def test_cli_fixed_landlord_table(capsys):
    assert cli.main(["--a", "rule", "--b", "random", "--deals", "3", "--mode", "fixed-landlord"]) == 0
    assert "WP as landlord" in capsys.readouterr().out


def test_cli_errors(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli.main(["--a", "rule", "--b", "random", "--deals", "0"])
    assert e.value.code == 2 and "--deals must be at least 1" in capsys.readouterr().err
    assert cli.main(["--a", "rule", "--b", "nobody", "--deals", "2"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    assert cli.main(["--a", str(tmp_path / "missing.pt"), "--b", "random", "--deals", "2"]) == 2
    assert "not found" in capsys.readouterr().err


def test_cli_checks_the_out_path_before_evaluating(tmp_path, capsys, monkeypatch):
    called = []
    monkeypatch.setattr("agents.cli.evaluate.evaluate", lambda *a, **k: called.append(1))  # the program behind evaluate.py
    for out, msg in ((tmp_path / "nope" / "r.json", "does not exist"), (tmp_path, "is a directory")):
        with pytest.raises(SystemExit) as e:
            cli.main(["--a", "rule", "--b", "random", "--deals", "2", "--out", str(out)])
        assert e.value.code == 2 and msg in capsys.readouterr().err
    assert not called


def test_cli_rules_option_plays_those_rules_and_refuses_unknown_ones(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["--a", "rule", "--b", "random", "--deals", "3", "--rules", "doubling=false", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["config"]["rules"] == "bidding=true,doubling=false"
    assert res["A"]["double_rate"] is None  # no doubling turn at all
    records = run_records("rule", "random", 3, 0, rules="doubling=false")  # no farmer ever chose to double or not
    assert (records[:, COL["dbl0"]:COL["dbl2"] + 1] == -1).all()
    with pytest.raises(SystemExit) as e:
        cli.main(["--a", "rule", "--b", "random", "--deals", "2", "--rules", "houserules"])
    assert e.value.code == 2 and "unknown preset 'houserules'" in capsys.readouterr().err


def test_cli_foreign_checkpoint_dict_is_a_clear_error(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="checkpoints need the train extra")

    path = tmp_path / "foreign.pt"
    torch.save({"agent": "rule", "config": {"foo": 1}}, path)
    assert cli.main(["--a", str(path), "--b", "random", "--deals", "2"]) == 2
    err = capsys.readouterr().err
    assert "cannot be loaded" in err and "foreign.pt" in err and "Traceback" not in err


class FailsLate(RuleAgent):
    """The rule agent until its 30th call, then an illegal id."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def act_batch(self, decisions):
        self.calls += 1
        out = super().act_batch(decisions)
        if self.calls >= 30:
            out[0] = -7
        return out

    def __repr__(self):
        return "FailsLate()"


def test_cli_agent_error_keeps_the_partial_results(tmp_path, capsys, monkeypatch):
    import agents.loader as loader

    monkeypatch.setitem(loader._REGISTRY, "fails-late", lambda ck: FailsLate())
    out = tmp_path / "r.json"
    assert cli.main(["--a", "rule", "--b", "fails-late", "--deals", "40", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "illegal action -7" in err and "were played in every seating" in err
    res = json.loads(out.read_text())
    assert res["error"].startswith("agent B (FailsLate())") and res["completed_hands"] > 0
    assert res["partial"]["hands"] % 6 == 0 and 0 < res["partial"]["deals"] < 40


@pytest.mark.parametrize("mode", ["duplicate", "fixed-landlord"])
def test_save_replays_writes_every_hand_as_a_record_that_replays(tmp_path, mode):
    """evaluate(..., replay_dir=) / evaluate.py --save-replays: one hand record per hand played, each
    replaying on the scalar Game to the scores the batched env gave (issue 15)."""
    from ddz_env import record
    from agents.evaluation.protocols import DUPLICATE_SEATINGS, run_records

    rows = run_records("rule", "random", 6, seed=3, mode=mode, replay_dir=tmp_path)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == len(rows) == 6 * (len(DUPLICATE_SEATINGS) if mode == "duplicate" else 2)
    by_name = {f.name: record.load(f) for f in files}
    for row in rows:
        # the file name says the deal and who sat where: A-rule-B-random, seats as in the players
        (name, rec), = [(n, r) for n, r in by_name.items() if r["meta"]["deal"] == row[COL["deal"]]
                        and r["meta"]["seating"] == row[COL["seating"]]]
        seats = "".join(p[0] for p in rec["players"])  # "A: rule" -> "A"
        assert name == f"deal{row[COL['deal']]:06d}-A-rule-B-random-seats-{seats}.json", name
        game = record.replay(rec)
        assert game.scores.tolist() == row[COL["score0"]:COL["score2"] + 1].tolist()
        assert rec["meta"] == {"seed": 3, "deal": int(row[COL["deal"]]), "seating": int(row[COL["seating"]]),
                               "mode": mode}
        assert sorted(p.split(": ")[1] for p in rec["players"]) in (["random", "random", "rule"],
                                                                     ["random", "rule", "rule"])
        if mode == "fixed-landlord":
            assert rec["deal"]["landlord"] is not None and not rec["deal"]["doubling"]


def test_save_replays_cli(tmp_path):
    out = tmp_path / "hands"
    r = subprocess.run([sys.executable, "evaluate.py", "--a", "rule", "--b", "random", "--deals", "2",
                        "--save-replays", str(out), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert len(list(out.glob("*.json"))) == 12 and "saved 12 hand records" in r.stdout
    (tmp_path / "afile").write_text("x")
    r = subprocess.run([sys.executable, "evaluate.py", "--a", "rule", "--b", "random", "--deals", "2",
                        "--save-replays", str(tmp_path / "afile")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "is a file" in r.stderr


# ---------------------------------------------------------------------------- issue 22: faults
def _players(folder) -> dict:
    from ddz_env import record

    return {f.name: record.load(f)["players"] for f in sorted(folder.glob("*.json"))}


def test_replay_labels_are_what_the_user_named_with_any_workers(tmp_path):
    """Issue 22 (11): with one worker the labels were reprs (``A: RuleAgent(bid_at=...)``), with two
    the names; now the names (or the path as typed) either way."""
    one, two = tmp_path / "one", tmp_path / "two"
    evaluate("rule", "random", deals=2, seed=1, workers=1, replay_dir=one)
    evaluate("rule", "random", deals=2, seed=1, workers=2, replay_dir=two)
    p1, p2 = _players(one), _players(two)
    assert p1 == p2 and len(p1) == 12
    assert {x for players in p1.values() for x in players} == {"A: rule", "B: random"}


def test_replay_label_of_a_checkpoint_is_its_path_as_typed(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="checkpoints need the train extra")
    from agents.loader import PRETRAINED

    monkeypatch.chdir(os.path.dirname(os.path.dirname(PRETRAINED)))  # agents/
    typed = os.path.join("pretrained", "dmc.pt")
    evaluate(typed, "rule", deals=1, seed=0, replay_dir=tmp_path / "r")
    assert {x for p in _players(tmp_path / "r").values() for x in p} == {f"A: {typed}", "B: rule"}


def test_cli_save_replays_folder_is_checked_before_playing(tmp_path, capsys, monkeypatch):
    """Issue 22 (5): a read-only folder was found after playing (a traceback, a 0-byte record).
    Root passes permission checks, so the read-only mount is played by the write probe failing."""
    import errno
    import tempfile

    called = []
    monkeypatch.setattr("agents.cli.evaluate.evaluate", lambda *a, **k: called.append(1))
    (tmp_path / "afile").write_text("x")
    for folder, msg in ((tmp_path / "afile", "it is a file"), (tmp_path / "afile" / "sub", "is a file, so no folder")):
        with pytest.raises(SystemExit) as e:
            cli.main(["--a", "rule", "--b", "random", "--deals", "2", "--save-replays", str(folder)])
        assert e.value.code == 2 and msg in capsys.readouterr().err

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    for flag, where in (("--save-replays", tmp_path / "ro"), ("--out", tmp_path / "r.json")):
        with pytest.raises(SystemExit) as e:
            cli.main(["--a", "rule", "--b", "random", "--deals", "2", flag, str(where)])
        err = capsys.readouterr().err
        assert e.value.code == 2 and "Read-only file system" in err and err.count("error:") == 1
    assert not called and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    with pytest.raises(ValueError, match="replay_dir.*Read-only file system"):  # the library checks too
        evaluate("rule", "random", deals=1, replay_dir=tmp_path / "ro")


def test_cli_save_replays_on_a_disk_that_fills_keeps_the_figures(tmp_path, capsys, monkeypatch):
    """Issue 22 (5): a full disk during --save-replays was a traceback, no figures and a 0-byte
    record; now every hand is played, the table printed and written, one error line says how many
    records were saved, and no partial or temporary file is left."""
    import builtins
    import errno

    from ddz_env import files

    real_open, opened = builtins.open, []

    def fills_up(path, mode="r", *args, **kwargs):
        if "w" in mode and os.path.basename(os.fspath(path)).startswith(".deal"):
            opened.append(path)
            if len(opened) > 5:
                f = real_open(path, mode, *args, **kwargs)
                f.write("{")
                f.close()
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *args, **kwargs)
    monkeypatch.setattr(files, "open", fills_up, raising=False)
    hands, out = tmp_path / "hands", tmp_path / "r.json"
    rc = cli.main(["--a", "rule", "--b", "random", "--deals", "3", "--save-replays", str(hands), "--out", str(out),
                   "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 1 and "score/hand [95% CI]" in cap.out and "18 hands" in cap.out
    assert cap.err.count("error:") == 1 and "No space left on device" in cap.err
    assert "5 of the 18 records were saved" in cap.err and "figures above are complete" in cap.err
    res = json.loads(out.read_text())
    assert res["hands"] == 18 and "No space left on device" in res["replay_error"]
    assert res["A"] == evaluate("rule", "random", deals=3)["A"]
    assert sorted(p.name for p in hands.iterdir()) == sorted(p.name for p in hands.glob("deal*.json"))
    assert len(list(hands.iterdir())) == 5 and all(len(_players(hands)[n]) == 3 for n in _players(hands))


def test_cli_out_that_cannot_be_written_after_the_run_is_one_error_line(tmp_path, capsys, monkeypatch):
    import errno

    from ddz_env import files

    def full(path, text, encoding="utf-8"):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr("agents.cli.evaluate.write_text", full)
    out = tmp_path / "r.json"
    out.write_text("old")
    assert cli.main(["--a", "rule", "--b", "random", "--deals", "2", "--out", str(out), "--no-progress"]) == 1
    cap = capsys.readouterr()
    assert "score/hand" in cap.out and cap.err.count("error:") == 1 and "left as it was" in cap.err
    assert out.read_text() == "old" and files.write_text is not full


def test_a_killed_worker_process_fails_the_run_instead_of_hanging(tmp_path):
    """A multiprocessing.Pool replaced a killed worker but never returned its task: the run waited
    forever. Now a RuntimeError that says a worker died (the subprocess' timeout catches a hang)."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers")
    script = ("import sys; sys.path.insert(0, %r)\n"
              "from faulty_agents import DiesInAWorker\n"
              "from agents import evaluate\n"
              "try:\n"
              "    evaluate(DiesInAWorker(), 'random', deals=8, seed=0, workers=2)\n"
              "except RuntimeError as e:\n"
              "    print('RuntimeError:', e)\n" % here)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    assert "RuntimeError: an evaluation worker process died" in r.stdout and "Traceback" not in r.stderr


def test_cli_ctrl_c_is_one_line_not_a_traceback(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("agents.cli.evaluate.evaluate", interrupted)
    assert cli.main(["--a", "rule", "--b", "random", "--deals", "2", "--save-replays", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert "interrupted: no figures; the hand records already in" in err and "Traceback" not in err


def test_replay_file_names_are_short_and_file_system_safe():
    from agents.evaluation.protocols import file_label, replay_name

    assert replay_name(7, ("rule", "pretrained"), (0, 1, 0)) == "deal000007-A-rule-B-pretrained-seats-ABA.json"
    assert file_label("runs/my run/model.pt") == "runs_my_run_model.pt"
    assert file_label("douzero:/data/baselines/douzero_WP?bidder=rule") == "s_douzero_WP_bidder_rule"
    assert file_label("../..") == "agent" and file_label("C:\\x\\y") == "C_x_y"
    for label in ("a" * 100, "<img src=x>", "rule?bid_at=0.3,0.4"):
        name = replay_name(0, (label, "rule"), (1, 1, 0))
        assert len(name) <= 80 and re.fullmatch(r"[A-Za-z0-9.+_-]+", name), name
