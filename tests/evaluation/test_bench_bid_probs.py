"""benchmarks/bench_bid_probs.py: a policy's own probabilities at the first bid turn."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from common import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_bid_probs import bid_probabilities, first_bids, main  # noqa: E402


def test_the_probabilities_are_the_policys_softmax_and_their_favourite_is_the_agents_bid(tmp_path, capsys):
    from agents.integrations.move_policy import MoveScoringAgent, MoveScoringPolicy, save_policy
    from ddz_env.actions import bid_action

    torch.manual_seed(0)
    policy = MoveScoringPolicy(state_layers=(32,), head_layers=(16,), hand_after=True)
    with torch.no_grad():  # (away from the uniform softmax a fresh policy starts at)
        for w in policy.parameters():
            w.add_(0.5 * torch.randn_like(w))
    path = tmp_path / "p.pt"
    save_policy(policy, path)
    planes, rows, ids = first_bids(64, seed=5)
    assert np.array_equal(ids[:4], [bid_action(b) for b in range(4)])
    p = bid_probabilities(str(path), planes, rows, ids)
    assert p.shape == (64, 4) and np.allclose(p.sum(1), 1.0)
    assert p.std(0).max() > 1e-3  # (the deals' hands move the probabilities)
    starts = np.arange(0, ids.size + 1, 4)
    greedy = MoveScoringAgent(policy).policy.act_compact(planes, starts, ids)
    assert np.array_equal(ids[:4][p.argmax(1)], greedy)
    main([str(path), "--deals", "16"])
    assert "p.pt" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(path), "--deals", "0"])
