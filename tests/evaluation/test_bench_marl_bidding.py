"""benchmarks/bench_marl_bidding.py: an agent's play with another agent's bids, paired against its own."""
from __future__ import annotations

import sys

import numpy as np

from common import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_marl_bidding import PlayAndBid, main  # noqa: E402


def test_each_phase_goes_to_its_agent():
    """random plays, rule bids and doubles: every bid/double decision is rule's, every play random's."""
    import agents
    from ddz_env.rules import Phase
    from ddz_env.vector import VectorDouDizhu
    from agents.base import Decisions

    split, rule = PlayAndBid("random", "rule"), agents.load("rule")
    env = VectorDouDizhu(32, seed=4)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        d = Decisions.of_env(env)
        got = split.act_batch(d)
        bidding = d.phase != int(Phase.PLAY)
        assert np.array_equal(got[bidding], rule.act_batch(d.take(np.flatnonzero(bidding))))
        for i in range(len(d)):
            assert got[i] in d.legal(i)
        seen.update(np.unique(d.phase).tolist())
        env.step(env.random_actions(rng))
    assert {int(Phase.BID), int(Phase.PLAY)} <= seen


def test_an_agent_with_its_own_bids_gains_nothing(capsys):
    """rule with rule's bids is rule: both rows the same per deal, the paired gain exactly 0."""
    out = main(["rule", "--bidder", "rule", "--against", "random", "--deals", "3", "--seed", "2"])
    a, b = (r["per_deal_score_a"] for r in out["rows"].values())
    assert a == b and out["gain"] == 0.0
    assert "gain from rule's bidding: +0.000" in capsys.readouterr().out
