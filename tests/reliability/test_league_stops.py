"""Issue 38, case 4: the league keeps what it played. Ctrl-C printed a ``KeyboardInterrupt`` traceback and
wrote nothing; a killed worker ended with no figures; a full disk ended in a traceback after the table, leaving
a heatmap without its JSON; one run named three ways was rated as three agents."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from agents import RuleAgent, register
from agents.cli.evaluate import main as evaluate_main
from faulty_agents import DiesInAWorker


class InterruptedAtItsFirstDecision(RuleAgent):
    """A person pressing Ctrl-C while this agent plays (its first decision raises KeyboardInterrupt)."""

    def act_batch(self, decisions):
        raise KeyboardInterrupt


for name, cls in (("test-ctrl-c", InterruptedAtItsFirstDecision), ("test-dies-in-worker", DiesInAWorker)):
    register(name, lambda ck, cls=cls: cls(), overwrite=True)


def league(tmp_path, *agents: str, extra=()) -> tuple[int, str]:
    return evaluate_main(["--league", *agents, "--deals", "3", "--seed", "1", "--no-progress",
                          "--out", str(tmp_path / "league.json"), *extra])


def test_ctrl_c_keeps_the_finished_pairs_marked_partial_and_prints_one_line(tmp_path, capsys):
    code = league(tmp_path, "random", "rule", "test-ctrl-c")
    err = capsys.readouterr().err
    assert code == 130 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "stopped in pair 2 of 3 (random vs test-ctrl-c): interrupted (Ctrl-C)" in err
    data = json.loads((tmp_path / "league.json").read_text())
    assert data["partial"] is True and data["pairs_played"] == 1 and data["pairs_total"] == 3
    (pair,) = data["pairs"]
    # the finished pair's figures are the full evaluation's
    from agents.evaluation.protocols import evaluate

    want = evaluate("random", "rule", deals=3, seed=1)["A"]
    assert (pair["a"], pair["b"]) == ("random", "rule") and pair["mean_score_a"] == pytest.approx(want["mean_score"])
    assert not (tmp_path / "league.png").exists()


def test_a_killed_worker_keeps_the_finished_pairs():
    """A worker killed (SIGKILL, as the out-of-memory killer) in the second pair: the first is kept."""
    from agents.evaluation.league import LeagueStopped, play_league

    with pytest.raises(LeagueStopped) as e:
        play_league(["random", "rule", DiesInAWorker()], deals=4, seed=1, workers=2)
    stop = e.value
    assert not stop.interrupted and "worker process died" in stop.reason and "pair 2 of 3" in stop.reason
    data = stop.to_json()
    assert data["partial"] and [(x["a"], x["b"]) for x in data["pairs"]] == [("random", "rule")]
    assert data["pairs"][0]["deals"] == 4 and len(data["pairs"][0]["score_ci95_a"]) == 2


def test_one_run_named_three_ways_is_one_agent(tmp_path, capsys):
    import torch

    run = tmp_path / "run"
    run.mkdir()
    torch.save({"agent": "rule", "config": {}}, run / "checkpoint.pt")
    for alias in (f"{run}/", f"{run}/checkpoint.pt", f"{tmp_path}/./run"):
        code = evaluate_main(["--league", "random", str(run), alias, "--deals", "2", "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and f"as {str(run)!r}: the same checkpoint" in err, (alias, err)


def _mount_small(target, size: str):
    if os.geteuid() != 0:
        pytest.skip("a full disk is a small tmpfs, which needs root to mount")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        pytest.skip(f"mount is not allowed here ({p.stderr.strip()[:120]})")


def test_a_full_disk_leaves_the_json_or_nothing_never_a_heatmap_alone(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    _mount_small(out, "8k")  # room for the JSON (a few KB), not for the PNG (tens of KB)
    try:
        code = league(out, "random", "rule")
        err = capsys.readouterr().err
        assert code == 0 and "warning: no heatmap" in err and "Traceback" not in err
        data = json.loads((out / "league.json").read_text())
        assert data["png"] is None and not data.get("partial") and len(data["pairs"]) == 1
        assert not (out / "league.png").exists()
        # a disk too full for the JSON: one line, nothing written
        (out / "league.json").unlink()
        (out / "filler").write_bytes(np.zeros(7 * 1024, np.uint8).tobytes())
        code = league(out, "random", "rule")
        err = capsys.readouterr().err
        assert code == 1 and "could not be written" in err and "No space left on device" in err
        assert sorted(p.name for p in out.iterdir()) == ["filler"]
    finally:
        subprocess.run(["umount", "-l", str(out)], capture_output=True)
