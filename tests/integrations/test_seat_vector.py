"""VectorSeatEnv (agents/integrations/seat_vector.py): N tables, a learning seat at each, opponents acting in
batch. Every table waits at its learning seat after reset and step, opponents decide only at their own seats
and tables, an episode is the learning seat's hand with its R19 score as the reward, and seeds, refusals and
per-table resets behave as the single-seat env's."""
from __future__ import annotations

import numpy as np
import pytest

from agents.base import BatchAgent
from agents.baselines.random_agent import RandomAgent
from agents.integrations.seat_vector import VectorSeatEnv
from ddz_env.actions import NUM_ACTIONS


class Recorder(BatchAgent):
    """A random batch agent that keeps (table, seat) of every decision it is asked."""

    def __init__(self, seed=0):
        self.inner = RandomAgent(seed=seed)
        self.seen: list[tuple[int, int]] = []

    def act_batch(self, decisions):
        self.seen += [(int(s) // 3, int(s) % 3) for s in decisions.stream]
        return self.inner.act_batch(decisions)


def random_actions(env: VectorSeatEnv, rng) -> np.ndarray:
    starts, ids = env.legal_sets()
    return ids[starts[:-1] + (rng.random(env.num_envs) * np.diff(starts)).astype(np.int64)]


def test_tables_wait_at_the_learning_seat_and_opponents_decide_only_at_theirs():
    a, b = Recorder(1), Recorder(2)
    env = VectorSeatEnv(6, [a, b], seed=3)
    rng = np.random.default_rng(0)
    env.reset()
    for _ in range(200):
        assert (env.env.current_player == env.seat).all()  # every table waits at its learning seat
        seats = env.seat.copy()
        a.seen, b.seen = [], []
        _, _, terminal, _ = env.step(random_actions(env, rng))
        for k, agent in enumerate((a, b)):
            assert agent.seen, "both opponents act between two of the learner's decisions"
            assert all(t % 2 == k for t, _ in agent.seen)  # table t plays opponents[t % 2]
            # in a hand that went on, no opponent decision was at the learning seat
            assert all(s != seats[t] for t, s in agent.seen if not terminal[t])
    assert env.hands > 30


def test_an_episode_is_the_learning_seats_hand_and_the_reward_its_scaled_score():
    env = VectorSeatEnv(8, ["random", "rule"], seed=4, reward_scale=0.05)
    rng = np.random.default_rng(1)
    env.reset()
    length = np.zeros(8, np.int64)
    episodes = voids = 0
    for _ in range(300):
        seats = env.seat.copy()
        _, reward, terminal, info = env.step(random_actions(env, rng))
        length += 1
        np.testing.assert_array_equal(info["seat"], seats)
        assert not reward[~terminal].any() and not info["scores"][~terminal].any()
        for t in np.flatnonzero(terminal).tolist():
            scores = info["scores"][t]
            assert scores.sum() == 0  # R19: the landlord's score is the farmers' together
            assert reward[t] == pytest.approx(0.05 * scores[seats[t]])
            voids += int(not scores.any())
            assert length[t] >= 1
        episodes += int(terminal.sum())
        length[terminal] = 0
    assert episodes == env.hands > 50
    assert voids < episodes


def test_the_same_seed_and_actions_give_the_same_hands():
    def run(seed):
        env = VectorSeatEnv(4, ["random", "rule"], seed=seed)
        rng = np.random.default_rng(7)
        out = [env.reset()]
        for _ in range(60):
            out.append(env.step(random_actions(env, rng))[0])
        return out

    x, y, z = run(5), run(5), run(6)
    assert all(np.array_equal(p, q) for p, q in zip(x, y))
    assert not all(np.array_equal(p, q) for p, q in zip(x, z))


def test_an_illegal_action_is_refused_and_changes_nothing():
    env = VectorSeatEnv(4, "random", seed=2)
    rng = np.random.default_rng(3)
    env.reset()
    for _ in range(10):
        env.step(random_actions(env, rng))
    before = (env.observe().copy(), env.seat.copy(), env.acted.copy(), env.hands)
    good = random_actions(env, rng)
    bad = good.copy()
    bad[2] = NUM_ACTIONS + 3
    with pytest.raises(ValueError, match="hand 2"):
        env.step(bad)
    with pytest.raises(ValueError, match="4 integer action ids"):
        env.step(good[:3])
    with pytest.raises(ValueError, match="4 integer action ids"):
        env.step(good.astype(np.float64))
    after = (env.observe(), env.seat, env.acted, env.hands)
    assert all(np.array_equal(p, q) for p, q in zip(before[:3], after[:3])) and before[3] == after[3]
    env.step(good)


def test_reset_of_a_table_in_play_deals_it_afresh_and_keeps_the_others():
    env = VectorSeatEnv(4, "random", seed=9)
    rng = np.random.default_rng(4)
    env.reset()
    env.step(random_actions(env, rng))
    env.step(random_actions(env, rng))
    deals = [env.env.deal_of(b).hands.copy() for b in range(4)]
    obs = env.observe().copy()
    in_play = np.flatnonzero(env.acted)
    assert in_play.size
    t = int(in_play[0])
    out = env.reset(tables=[t])
    assert not env.acted[t]
    assert not np.array_equal(env.env.deal_of(t).hands, deals[t])
    for b in range(4):
        if b != t:
            np.testing.assert_array_equal(env.env.deal_of(b).hands, deals[b])
            np.testing.assert_array_equal(out[b], obs[b])
    assert (env.env.current_player == env.seat).all()
    with pytest.raises(ValueError, match="tables are 0..3"):
        env.reset(tables=[4])
    with pytest.raises(ValueError, match="not both"):
        env.reset(seed=1, tables=[0])


def test_legal_sets_padded_ids_and_dense_masks_agree():
    env = VectorSeatEnv(5, "rule", seed=1)
    rng = np.random.default_rng(2)
    env.reset()
    for _ in range(30):
        starts, ids = env.legal_sets()
        padded = env.padded_legal(1024)
        masks = env.action_masks()
        for b in range(5):
            row = ids[starts[b]:starts[b + 1]]
            np.testing.assert_array_equal(padded[b][:row.size], row)
            assert (padded[b][row.size:] == -1).all()
            np.testing.assert_array_equal(np.flatnonzero(masks[b]), row)
        env.step(random_actions(env, rng))
    widest = int(np.diff(env.legal_sets()[0]).max())
    with pytest.raises(ValueError, match=f"a legal set of {widest} moves is wider than {widest - 1}"):
        env.padded_legal(widest - 1)
