"""Belief weights (agents/search/weights.py): exact against an independent replay on the scalar Game,
by hand on a made-up agent, and normalised with their effective sample size."""
from __future__ import annotations

import numpy as np
import pytest

from agents import load
from agents.base import BatchAgent, Decisions
from agents.search.weights import action_probabilities, belief_weights, weighted_deals
from ddz_env.beliefs import sample_deals
from ddz_env.game import Game
from ddz_env.observation import HIDDEN, observe_game, seat_history
from ddz_env.rules import Phase


class CountingAgent(BatchAgent):
    """Values = cards the move plays (bids and doubles: their id): a made-up agent with values."""

    name = "counting"

    def values(self, d: Decisions) -> list[np.ndarray]:
        from ddz_env.moves import MOVE_NCARDS

        out = []
        for i in range(len(d)):
            ids = d.legal(i)
            out.append(np.where(ids < MOVE_NCARDS.size, MOVE_NCARDS[np.minimum(ids, MOVE_NCARDS.size - 1)],
                                ids % 7).astype(np.float32))
        return out

    def act_batch(self, d: Decisions) -> np.ndarray:
        return np.array([d.legal(i)[int(np.argmax(v))] for i, v in enumerate(self.values(d))])


def game_after(seed: int, plays: int) -> Game:
    rng = np.random.default_rng(seed)
    while True:
        g = Game.deal(rng)
        k = 0
        while not g.is_over and (g.phase != Phase.PLAY or k < plays):
            k += g.phase == Phase.PLAY
            legal = g.legal_actions()
            g.step(int(rng.choice(legal)))
        if not g.is_over:
            return g


def scalar_log_weight(deal, game: Game, seat: int, agent, temperature: float) -> float:
    """The same weight one decision at a time on the scalar Game (observe_game, Decisions.from_observation)."""
    g = Game.from_deal(deal.hands, deal.bottom, deal.first_bidder)
    logw = 0.0
    for s, a in seat_history(game.history, game.doubles_revealed, seat):
        if a == HIDDEN:
            break
        if s != seat and g.legal_actions().size > 1:
            mask = g.legal_action_mask()
            d = Decisions.from_observation({"observation": observe_game(g, s), "action_mask": mask}, seat=s)
            v = np.asarray(agent.values(d)[0], np.float64) / temperature
            p = np.exp(v - v.max())
            logw += np.log(p[np.searchsorted(d.legal(0), a)] / p.sum())
        g.step(a)
    return logw


@pytest.mark.parametrize("seed, plays", [(1, 0), (2, 5), (3, 14)])
def test_weights_equal_a_scalar_replay_of_each_deal(seed, plays):
    game = game_after(seed, plays)
    seat = game.current_player
    deals = sample_deals(game, seat, 12, seed=seed)
    agent = CountingAgent()
    w, ess = belief_weights(game, seat, deals, agent, temperature=0.7)
    logw = np.array([scalar_log_weight(d, game, seat, agent, 0.7) for d in deals])
    expect = np.exp(logw - logw.max())
    expect /= expect.sum()
    np.testing.assert_allclose(w, expect, rtol=1e-6, atol=1e-12)
    assert abs(w.sum() - 1) < 1e-9 and 1 <= ess <= 12
    assert ess == pytest.approx(1 / np.square(expect).sum())


def test_probabilities_by_hand():
    """Three legal moves valued 0, 1, 2 at temperature 1: softmax e^v / (1 + e + e^2); a trembling
    greedy agent without values: 1 - tremble on its choice, tremble / 2 on each other."""
    legal = np.array([5, 6, 7])

    class Fixed(BatchAgent):
        def values(self, d):
            return [np.array([0.0, 1.0, 2.0])]

        def act_batch(self, d):
            return np.array([7])

    mask = np.zeros(24648, np.int8)
    mask[legal] = 1
    d = Decisions.from_observation({"observation": np.zeros((29, 4, 15), np.int8), "action_mask": mask})
    z = 1 + np.e + np.e ** 2
    for a, p in ((5, 1 / z), (6, np.e / z), (7, np.e ** 2 / z)):
        assert action_probabilities(Fixed(), d, np.array([a]), temperature=1.0)[0] == pytest.approx(p)

    class NoValues(BatchAgent):
        def act_batch(self, d):
            return np.array([7])

    assert action_probabilities(NoValues(), d, np.array([7]), tremble=0.1)[0] == pytest.approx(0.9)
    assert action_probabilities(NoValues(), d, np.array([5]), tremble=0.1)[0] == pytest.approx(0.05)


def test_weighted_deals_with_the_pretrained_agent():
    game = game_after(4, 6)
    seat = game.current_player
    deals, w, ess = weighted_deals(game, seat, 32, seed=0, agent=load("pretrained"))
    assert len(deals) == 32 and w.shape == (32,) and abs(w.sum() - 1) < 1e-9 and 1 <= ess <= 32
    assert ess < 32  # the other seats' choices say something about the cards


def test_bad_arguments_are_errors():
    game = game_after(5, 2)
    seat = game.current_player
    deals = sample_deals(game, seat, 2, seed=0)
    for kw, msg in (({"temperature": 0}, "temperature"), ({"temperature": float("nan")}, "temperature"),
                    ({"tremble": 1.0}, "tremble")):
        with pytest.raises(ValueError, match=msg):
            belief_weights(game, seat, deals, CountingAgent(), **kw)
    with pytest.raises(ValueError, match="no deals"):
        belief_weights(game, seat, [], CountingAgent())
