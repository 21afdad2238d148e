"""ddz_env.info: the game's facts, derived once; each one checked against what decides it."""
from __future__ import annotations

import numpy as np

from ddz_env.actions import NUM_ACTIONS
from ddz_env.info import GAME
from ddz_env.moves import IS_BOMB, IS_ROCKET, MOVE_TYPE, MoveType
from ddz_env.observation import OBS_SHAPE
from ddz_env.readers import read_status
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu


def test_the_facts_are_the_tables():
    assert GAME.num_seats == 3 and GAME.agents == ("player_0", "player_1", "player_2")
    assert GAME.num_actions == NUM_ACTIONS and GAME.obs_shape == OBS_SHAPE
    assert GAME.phases == tuple(p.name for p in Phase)
    assert GAME.max_hand == 20 and GAME.deck_size - 3 * GAME.hand_size == 3
    assert GAME.max_bombs == 13 == int((MOVE_TYPE == MoveType.BOMB).sum()) and IS_ROCKET.sum() == 1
    assert not (IS_BOMB & IS_ROCKET).any()
    assert GAME.max_decisions == 168
    # R19: 3 x 2^(13 bombs + rocket + spring + double + redouble) for each farmer, the landlord both
    assert GAME.max_abs_score == 2 * 3 * 2 ** (13 + 1 + 1 + 2)


def test_random_hands_stay_within_the_bounds():
    """Thousands of random rulebook hands: none takes more decisions or scores more than the facts say;
    the status plane's bomb count stays in its range."""
    env = VectorDouDizhu(256, seed=3)
    rng = np.random.default_rng(3)
    steps = np.zeros(256, np.int64)
    longest = ended = 0
    biggest = 0
    while ended < 3000:
        _, _, done, info = env.step(env.random_actions(rng))
        steps += 1
        longest = max(longest, int(steps[done].max(initial=0)))
        biggest = max(biggest, int(np.abs(info["final_scores"]).max()))
        ended += int(done.sum())
        steps[done] = 0
    assert 30 < longest <= GAME.max_decisions
    assert 0 < biggest <= GAME.max_abs_score
    assert (read_status(env.observe()).bombs <= GAME.max_bombs).all()
