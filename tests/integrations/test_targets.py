"""The one target function every learner reads (agents.integrations.targets): its table, scalars and arrays
alike, and the learners that read it (DMC's experience, our PPO, TorchRL's regrouping, RLlib's tables)."""
from __future__ import annotations

import numpy as np
import pytest

from agents.integrations.targets import TARGETS, hand_target


def test_the_table_of_targets():
    s = np.array([-48, -2, 0, 3, 60])
    bids = np.array([False, True, False, True, False])
    assert hand_target(s, bids, "sign_play", 8).tolist() == [-1, -0.25, 0, 0.375, 1]
    assert hand_target(s, None, "scale", 8).tolist() == [-6, -0.25, 0, 0.375, 7.5]
    assert hand_target(s, None, "sign", 8).tolist() == [-1, -1, 0, 1, 1]
    assert hand_target(s, None, "none", 8).tolist() == [-48, -2, 0, 3, 60]
    assert set(TARGETS) == {"scale", "sign", "none", "sign_play"}


def test_scalars_give_floats_and_one_bidding_flag_serves_an_array():
    assert hand_target(-6, True, "sign_play", 8) == -0.75 and isinstance(hand_target(-6, True), float)
    assert hand_target(-6, False, "sign_play", 8) == -1.0
    assert hand_target(np.array([4, -4]), True, "sign_play", 8).tolist() == [0.5, -0.5]
    assert hand_target(np.array([4, -4]), True).dtype == np.float32


def test_errors():
    with pytest.raises(ValueError, match="which decisions are bids"):
        hand_target(3, None, "sign_play")
    with pytest.raises(ValueError, match="unknown target 'win'"):
        hand_target(3, True, "win")


def test_the_learners_read_it():
    """DMC's transform and our PPO's per-hand targets give what the one function gives."""
    from agents.dmc.learner.experience import transform_target
    from agents.dmc.model import BIDDING_NET

    s = np.array([12, -6, -6, 24], np.int64)
    net = np.array([BIDDING_NET, 0, 1, 2])
    assert transform_target(s, "sign_play", 8, net).tolist() == hand_target(s, net == BIDDING_NET).tolist()
    from agents.ppo.selfplay import hand_targets

    seat = np.array([0, 1, 2, 0])
    bidding = np.array([True, True, False, False])
    values = np.zeros(4, np.float32)
    _, ret = hand_targets(seat, bidding, values, np.array([12, -6, -6]), 1.0, 8.0, "sign_play")
    assert ret.tolist() == [1.5, -0.75, -1.0, 1.0]  # lam 1, values 0: each return is its trajectory's end
