"""What the AEC env tests share (tests/core/test_env_*.py): the R19 worked deal and hand-playing helpers."""
from __future__ import annotations


import numpy as np

from ddz_env import Game
from ddz_env.actions import (
    action_from_string,
)
from ddz_env.cards import MAX_COUNTS


AGENTS = ["player_0", "player_1", "player_2"]

# The R19 worked example as a fixed deal (see test_r19_rulebook_example_through_env).
# Seat 0 bids 3 and is landlord; seat 1 (farmer 1) holds the bomb 2222, the rocket and a
# straight 3..K; seat 2 (farmer 2) holds the rest.
R19_DEAL = {
    "hands": ["333444555666777AA", "3456789TJQK2222BR", "888999TTTJJJQQQKK"],
    "bottom": "KAA",
    "first_bidder": 0,
}

# ---------------------------------------------------------------------------- helpers
def a(text: str) -> int:
    return action_from_string(text)


def random_legal(e, rng) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return int(rng.choice(np.flatnonzero(mask)))


def play_out(e, rng, on_step=None) -> list[int]:
    """Random legal actions until the hand ends (all agents terminated); returns the actions."""
    actions = []
    while not e.terminations[e.agent_selection]:
        if on_step is not None:
            on_step(e)
        x = random_legal(e, rng)
        actions.append(x)
        e.step(x)
    return actions


def finish_dead_steps(e) -> int:
    n = 0
    while e.agents:
        assert n < 3
        agent = e.agent_selection
        assert e.terminations[agent] or e.truncations[agent]
        e.step(None)
        n += 1
    return n


def obs_all(e) -> dict:
    return {ag: {k: v.copy() for k, v in e.observe(ag).items()} for ag in e.agents}


def assert_obs_equal(o1: dict, o2: dict) -> None:
    assert o1.keys() == o2.keys()
    for ag in o1:
        for k in ("observation", "action_mask"):
            np.testing.assert_array_equal(o1[ag][k], o2[ag][k], err_msg=f"{ag} {k}")


def conserved(g: Game) -> bool:
    total = g.hands.sum(axis=0) + g.played.sum(axis=0) + (0 if g.bottom_revealed else g.bottom)
    return bool((total == MAX_COUNTS).all())
