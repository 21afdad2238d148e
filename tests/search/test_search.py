"""The search agent ``search:BASE`` (agents/search): legal, seeded, its seat's view only, BASE's bids,
the immediate win found, and one-line errors for bad specs."""
from __future__ import annotations

import numpy as np
import pytest

from agents import load
from agents.base import BatchAgent, Decisions
from agents.evaluation.protocols import evaluate
from agents.search.agent import SearchAgent, check_spec, visible_plays
from ddz_env.beliefs import sample_hidden
from ddz_env.moves import MOVE_NCARDS
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu


class FirstLegal(BatchAgent):
    """The smallest legal id (a single before a pair): a base the search can improve on."""

    name = "first"

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        return decisions.legal_ids[decisions.legal_starts[:-1]].copy()


def decisions_of(env: VectorDouDizhu, idx=None) -> Decisions:
    return Decisions.of_env(env, None if idx is None else np.asarray(idx))


def positions(seed: int, tables: int = 48, steps: int = 40) -> VectorDouDizhu:
    env = VectorDouDizhu(tables, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step(env.random_actions(rng), observe=False)
    return env


def test_search_returns_legal_moves_and_the_base_choice_outside_the_play():
    """Every choice is legal; bids, doubles, redoubles and forced plays are the base agent's (R3-R6)."""
    agent = SearchAgent(FirstLegal(), rollout=load("random"), samples=4, candidates=3, seed=1)
    for seed in range(3):
        env = positions(seed, steps=seed * 7 + 1)
        d = decisions_of(env)
        base = np.asarray(agent.base.act_batch(d))
        got = agent.act_batch(d)
        for i in range(len(d)):
            assert got[i] in d.legal(i)
            if d.phase[i] != Phase.PLAY or d.legal(i).size == 1:
                assert got[i] == base[i]
    assert agent.cost()["decisions"] > 0


def test_search_is_deterministic_for_a_seed_however_the_decisions_are_batched():
    env = positions(4)
    d = decisions_of(env)
    play = np.flatnonzero((d.phase == Phase.PLAY) & (np.diff(d.legal_starts) > 1))
    assert play.size >= 5
    a1 = SearchAgent(FirstLegal(), samples=6, candidates=3, seed=7).act_batch(d)
    a2 = SearchAgent(FirstLegal(), samples=6, candidates=3, seed=7)
    one_by_one = np.array([a2.act_batch(d.take(np.array([i])))[0] for i in range(len(d))])
    np.testing.assert_array_equal(a1, one_by_one)


def test_search_sees_only_its_seats_observation():
    """R21: two tables whose seat on turn sees the same planes (the hidden cards differ) get the same move."""
    env = positions(6)
    b = int(np.flatnonzero((env.phase == Phase.PLAY) & (np.diff(env.legal_sets()[2]) > 1))[0])
    planes = env.observe()[b]
    hands, bottoms = sample_hidden(planes, 2, seed=3)
    assert not np.array_equal(hands[0], hands[1])
    twin = VectorDouDizhu(2, seed=0)
    twin.load_view([0, 1], planes, hands, bottoms)
    d = decisions_of(twin)
    np.testing.assert_array_equal(d.observation[0], d.observation[1])
    agent = SearchAgent(FirstLegal(), samples=8, candidates=4, seed=0)
    got = [agent.act_batch(d.take(np.array([i])))[0] for i in (0, 1)]
    assert got[0] == got[1]


def test_search_finds_the_move_that_goes_out_when_the_base_does_not():
    """A seat that can play its whole hand as one move wins at once (R17): the search takes it where
    the base (the smallest legal id) plays a part of it; its mean score is the best of its candidates."""
    found = 0
    for seed in range(12):
        env = positions(seed, tables=64, steps=60)
        d = decisions_of(env)
        left = np.array([int(d.observation[i, 0].sum()) for i in range(len(d))])  # own cards (hand plane)
        for i in range(len(d)):
            legal = d.legal(i)
            if d.phase[i] != Phase.PLAY:
                continue
            out = legal[MOVE_NCARDS[legal] == left[i]]
            if out.size == 0 or legal[0] in out:
                continue
            agent = SearchAgent(FirstLegal(), samples=16, candidates=len(legal), seed=seed)
            one = d.take(np.array([i]))
            cands = agent.candidate_moves(one, FirstLegal().act_batch(one))
            scores, weights = agent.rollout_scores(one, cands)[0]
            means = scores @ weights
            win = means[np.isin(cands[0], out)]
            assert (win > 0).all() and win.max() >= means.max()
            if win.max() > means[0]:
                assert agent.act_batch(one)[0] in out
                found += 1
    assert found >= 3, found


def test_search_plays_whole_hands_through_the_evaluator():
    """``search:BASE`` is an ordinary agent spec: evaluate seats it (duplicate, a few deals)."""
    res = evaluate("search:random?samples=2&candidates=2", "random", deals=2, seed=3, progress=False)
    assert res["hands"] == 12


@pytest.mark.parametrize("spec, message", [
    ("search:", "no base agent"),
    ("search:random?samples=0", "samples must be a whole number of at least 1"),
    ("search:random?samples=-3", "samples must be a whole number of at least 1"),
    ("search:random?sample=8", "unknown option 'sample' (did you mean 'samples'?)"),
    ("search:random?samples=1.5", "option samples='1.5' is not a whole number"),
    ("search:random?candidates=", "option 'candidates' needs a value"),
    ("search:random?prior=flat", "prior must be 'deck' or 'cards'"),
    ("search:random?margin=nan", "margin must be a finite number"),
    ("search:nosuchagent", "nosuchagent"),
])
def test_bad_search_specs_are_one_line_errors(spec, message):
    with pytest.raises((ValueError, FileNotFoundError)) as e:
        load(spec)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_check_spec_takes_the_options_after_the_last_question_mark():
    assert check_spec("search:douzero:dir?bidder=rule?samples=8") == ("douzero:dir?bidder=rule", {"samples": 8})
    assert check_spec("search:pretrained") == ("pretrained", {})


def test_the_belief_search_rebuilds_the_whole_public_history_from_its_own_decisions():
    """With ``belief`` the agent keeps each stream's play history: the planes show the last 15 plays, its
    own decisions come every third play, so stitched together they give every play of the hand (checked
    against the real history, relative seats, over hands much longer than 15 plays)."""
    B = 16
    env = VectorDouDizhu(B, seed=9)
    agent = SearchAgent(FirstLegal(), belief=FirstLegal(), candidates=1)
    agent.begin_hands(np.arange(3 * B), np.zeros(3 * B, np.int64))
    truth: list[list[tuple[int, int]]] = [[] for _ in range(B)]
    checked = long = 0
    rng = np.random.default_rng(9)
    for _ in range(400):
        d = decisions_of(env)
        acts = agent.act_batch(d)
        # half the tables play at random (long hands, many passes), half as the agent says
        acts = np.where(np.arange(B) % 2 == 0, acts, env.random_actions(rng))
        for b in np.flatnonzero(d.phase == Phase.PLAY):
            s = int(d.seat[b])
            want = [((seat - s) % 3, m) for seat, m in truth[b]]
            assert agent._plays[int(d.stream[b])] == want
            checked += 1
            long += len(want) > 15
            agent._last[int(d.stream[b])] = int(acts[b])  # (what the table plays: the agent's or a random move)
        for b in np.flatnonzero(d.phase == Phase.PLAY):
            truth[b].append((int(d.seat[b]), int(acts[b])))
        _, _, done, _ = env.step(acts, observe=False)
        for b in np.flatnonzero(done):
            truth[b] = []
            agent.begin_hands(np.arange(3 * b, 3 * b + 3), np.zeros(3, np.int64))
    assert checked > 2000 and long > 200, (checked, long)


def test_the_belief_search_weighs_its_deals_and_falls_back_to_uniform_without_the_history():
    env = positions(11, tables=32, steps=70)
    d = decisions_of(env)
    hist = np.array([len(visible_plays(d.observation[i]))
                     for i in range(len(d))])
    many = (d.phase == Phase.PLAY) & (np.diff(d.legal_starts) > 1)
    agent = SearchAgent(load("pretrained"), belief=load("pretrained"), samples=8, candidates=2)
    short = np.flatnonzero(many & (hist < 15))[:3]
    full = np.flatnonzero(many & (hist == 15))[:3]
    assert short.size and full.size
    agent.act_batch(d.take(short))  # the planes hold every play: weighted
    assert agent.cost()["weighted"] == short.size and 1 <= agent.cost()["mean_ess"] <= 8
    agent.act_batch(d.take(full))  # first seen after 15 plays: the history is not known, uniform
    assert agent.cost()["unweighted"] == full.size
    assert load("search:random?belief=random&temperature=0.5").temperature == 0.5
    with pytest.raises(ValueError, match="temperature must be a positive number"):
        load("search:random?belief=random&temperature=0")
