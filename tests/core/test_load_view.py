"""VectorDouDizhu.load_view: a seat's view plus the hidden cards is the position itself (for search)."""
from __future__ import annotations

import numpy as np
import pytest

from ddz_env.beliefs import sample_hidden
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu

B = 64


def _hidden_of(env: VectorDouDizhu, b: int, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """The true cards of the next and previous seats of ``seat`` at table b, and its bottom."""
    return (np.stack([env.hands[b, (seat + 1) % 3], env.hands[b, (seat + 2) % 3]])[None],
            env.state.bottom[b][None])


def _positions(seed: int, steps: int):
    """(env snapshot, table) pairs at play decisions of random play, with the state to continue."""
    env = VectorDouDizhu(B, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step(env.random_actions(rng), observe=False)
        yield env


def test_a_loaded_view_is_the_position_and_plays_out_to_the_same_scores():
    """R3-R8, R17-R19: every field the rest of the hand depends on comes back from the planes; the two
    tables then score the same hand the same (seats rotated), over thousands of positions."""
    checked = scored = 0
    for env in _positions(seed=3, steps=120):
        play = np.flatnonzero(env.phase == Phase.PLAY)
        if play.size == 0:
            continue
        planes = env.observe()
        sim = VectorDouDizhu(play.size, seed=0)
        for j, b in enumerate(play):
            seat = int(env.current_player[b])
            h, bt = _hidden_of(env, b, seat)
            sim.load_view([j], planes[b], h, bt)
        np.testing.assert_array_equal(sim.observe(), planes[play])
        for j, b in enumerate(play):
            np.testing.assert_array_equal(sim.legal_actions(j), env.legal_actions(b))
        checked += play.size
        # play both to the end with the same random moves; compare the rotated final scores
        real = VectorDouDizhu(play.size, seed=0)
        real.load_state_dict({"arrays": {k: v[play] if v.shape[:1] == (B,) else v
                                         for k, v in env.state_dict()["arrays"].items()},
                              "rngs": [env.state_dict()["rngs"][b] for b in play], "fresh": False})
        rot = real.current_player.copy()
        ambiguous = np.zeros(play.size, bool)
        for j in range(play.size):  # R18's one fact the planes may lack (see load_view)
            lord = int(real.landlord[j])
            ambiguous[j] = real.state.moves_made[j, lord] != sim.state.moves_made[j, (lord - rot[j]) % 3]
        done = np.zeros(play.size, bool)
        rng = np.random.default_rng(int(b))
        for _ in range(120):
            a = real.random_actions(rng)
            live_a = np.where(done, sim.default_actions(), a)
            _, _, d_real, info_r = real.step(np.where(done, real.default_actions(), a), observe=False)
            _, _, d_sim, info_s = sim.step(live_a, observe=False)
            new = d_real & ~done
            assert np.array_equal(new, d_sim & ~done)
            for j in np.flatnonzero(new & ~ambiguous):
                r = rot[j]
                np.testing.assert_array_equal(np.roll(info_r["final_scores"][j], -r), info_s["final_scores"][j])
                scored += 1
            done |= new
            if done.all():
                break
        assert done.all()
    assert checked > 2000 and scored > 2000, (checked, scored)


def test_load_view_of_drawn_hidden_cards_gives_the_seat_its_observation():
    """R21: any draw of sample_hidden is a position the seat cannot tell from the real one."""
    env = VectorDouDizhu(B, seed=5)
    rng = np.random.default_rng(5)
    n = 0
    for _ in range(60):
        env.step(env.random_actions(rng), observe=False)
        planes = env.observe()
        for b in np.flatnonzero(env.phase == Phase.PLAY)[:4]:
            hands, bottoms = sample_hidden(planes[b], 8, seed=n)
            sim = VectorDouDizhu(8, seed=0)
            sim.load_view(np.arange(8), planes[b], hands, bottoms)
            np.testing.assert_array_equal(sim.observe(), np.broadcast_to(planes[b], (8,) + planes[b].shape))
            for j in range(8):
                np.testing.assert_array_equal(sim.legal_actions(j), env.legal_actions(b))
            n += 1
    assert n > 100


def test_load_view_refuses_what_is_no_play_position_and_changes_nothing():
    env = VectorDouDizhu(4, seed=1)
    planes = env.observe()  # bidding
    before = env.state_dict()["arrays"]
    h, bt = np.zeros((1, 2, 15), np.int8), np.zeros((1, 15), np.int8)
    with pytest.raises(ValueError, match="not a play decision"):
        env.load_view([0], planes[0], h, bt)
    rng = np.random.default_rng(0)
    while not (env.phase == Phase.PLAY).any():
        env.step(env.random_actions(rng), observe=False)
    b = int(np.flatnonzero(env.phase == Phase.PLAY)[0])
    p = env.observe()[b]
    before = env.state_dict()["arrays"]
    wrong = np.zeros((1, 2, 15), np.int8)
    with pytest.raises(ValueError, match="disagree with the planes"):
        env.load_view([0], p, wrong, bt)
    with pytest.raises(ValueError, match="expected hands"):
        env.load_view([0, 1], p, wrong, bt)
    with pytest.raises(ValueError, match="distinct indices"):
        env.load_view([9], p, wrong, bt)
    after = env.state_dict()["arrays"]
    assert all(np.array_equal(before[k], after[k]) for k in before)
