"""``search:BASE?endgame=N``: the search agent solving its drawn deals exactly (ddz_env/endgame.py) at
decisions with at most N cards in the hands, and ending its rollouts there with the exact value."""
from __future__ import annotations

import numpy as np
import pytest

from agents import load
from agents.base import BatchAgent, Decisions
from agents.evaluation.protocols import evaluate
from agents.search.agent import SearchAgent, check_spec
from ddz_env.beliefs import sample_hidden
from ddz_env.endgame import Position, move_values
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu


class FirstLegal(BatchAgent):
    name = "first"

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        return decisions.legal_ids[decisions.legal_starts[:-1]].copy()


def small_decisions(cards: int, seed: int, tables: int = 32) -> Decisions:
    """Play decisions (several legal moves) of random play held at the first position with at most
    ``cards`` cards in the hands."""
    env = VectorDouDizhu(tables, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(400):
        st = env.state
        hold = (st.phase == Phase.PLAY) & (st.n_cards.sum(axis=1) <= cards)
        if hold.all():
            break
        env.step(env.random_actions(rng), observe=False, active=~hold)
    d = Decisions.of_env(env)
    keep = np.flatnonzero((d.phase == Phase.PLAY) & (np.diff(d.legal_starts) > 1)
                          & (env.state.n_cards.sum(axis=1) <= cards))
    return d.take(keep)


def test_exact_decision_scores_are_the_solver_values_on_the_drawn_deals():
    """At a decision with at most N cards, every legal move is a candidate and its score on each drawn
    deal is the solver's exact R19 value for the seat (the same deals, drawn from the same seed)."""
    d = small_decisions(10, seed=1)
    assert len(d) >= 5
    agent = SearchAgent(FirstLegal(), samples=6, candidates=2, seed=3, endgame=10)
    for i in range(min(len(d), 8)):
        one = d.take(np.array([i]))
        cands = agent.candidate_moves(one, FirstLegal().act_batch(one))[0]
        assert sorted(cands.tolist()) == sorted(one.legal(0).tolist())  # all the legal moves
        scores, _ = agent.rollout_scores(one, [cands])[0]
        seed = int(agent._rng(one, 0, 2).integers(2**63))
        hands, bottoms = sample_hidden(one.observation[0], 6, seed=seed, prior="deck")
        env = VectorDouDizhu(6, seed=None)
        env.load_view(np.arange(6), one.observation[0], hands, bottoms)
        for k in range(6):
            want = move_values(Position.of_batch(env.state, k), cands, seat=0)
            assert scores[:, k].tolist() == [want[int(m)] for m in cands]
    assert agent.stats["exact_decisions"] == min(len(d), 8) and agent.stats["steps"] == 0  # no rollout stepped


def test_rollouts_end_with_the_exact_value_once_small():
    """Decisions with more cards: the rollouts reaching N cards stop there (counted), the choices legal."""
    d = small_decisions(24, seed=2)
    agent = SearchAgent(FirstLegal(), rollout=load("random"), samples=4, candidates=3, seed=1, endgame=12)
    got = agent.act_batch(d)
    for i in range(len(d)):
        assert got[i] in d.legal(i)
    assert agent.stats["exact_rollouts"] > 0 and agent.stats["exact_decisions"] == 0


def test_the_exact_search_leaves_a_base_move_that_loses_for_a_sure_win():
    """Where some move wins on every drawn deal and the base's (the smallest id) does not, the exact
    search never plays a move of lower mean exact value than the base's, and it does switch (to the best
    mean among the moves whose paired gain stands out of the noise, ``better_than_base``)."""
    found = 0
    for seed in range(4):
        d = small_decisions(9, seed=seed)
        agent = SearchAgent(FirstLegal(), samples=8, candidates=2, seed=seed, endgame=9)
        base = FirstLegal().act_batch(d)
        for i in range(len(d)):
            one = d.take(np.array([i]))
            cands = agent.candidate_moves(one, base[i:i + 1])[0]
            scores, weights = agent.rollout_scores(one, [cands])[0]
            sure = (scores > 0).all(axis=1)
            if sure.any() and not sure[0]:
                means = scores @ weights
                move = agent.act_batch(one)[0]
                j = cands.tolist().index(move)
                assert means[j] >= means[0]
                found += j != 0
    assert found >= 1


def test_endgame_option_is_parsed_and_checked():
    assert check_spec("search:random?endgame=12") == ("random", {"endgame": 12})
    assert load("search:random?endgame=12&samples=2").endgame == 12
    for spec, words in (("search:random?endgame=-1", "endgame must be a whole number"),
                        ("search:random?endgame=99", "endgame must be a whole number"),
                        ("search:random?endgame=x", "not a whole number")):
        with pytest.raises(ValueError, match=words):
            load(spec)


def test_endgame_search_plays_whole_hands_through_the_evaluator():
    res = evaluate("search:random?samples=2&candidates=2&endgame=9", "random", deals=2, seed=3, progress=False)
    assert res["hands"] == 12
