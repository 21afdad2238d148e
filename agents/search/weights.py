"""Belief weights: how likely an agent was to make the moves a seat saw, under each drawn deal.

``ddz_env.beliefs`` draws deals a seat cannot rule out, uniformly (the deck's prior). A seat has
seen more than the cards, though: the other seats chose their bids, doubles and plays, and a deal in
which a sensible player would never have made those choices is less likely. Modelling the other seats
as an agent (any ``agents.load`` spec; by default the shipped DMC agent), each drawn deal gets the
importance weight

    w(deal) = prod over the other seats' decisions t of  P_agent(action_t | that seat's view at t, deal)

(R21: each view is rebuilt by replaying the public history on the deal, so it holds exactly what that
seat then knew), normalised to sum 1. ``P_agent`` is a softmax of the agent's ``values()`` over the
legal moves at ``temperature`` (in the agent's value units: the DMC agent's Q is the score / 8), or for
an agent without values a "trembling" greedy agent: ``1 - tremble`` on its choice, the rest spread
evenly. Forced decisions weigh 1. Bids, doubles, redoubles and plays all count; a doubling choice still
secret to the seat (R5) is not replayed, and neither is anything after it.

The effective sample size ``1 / sum(w ** 2)`` says how many uniform draws the weighted set is worth.

`belief_weights` weighs given deals for a seat of a `ddz_env.game.Game` (the env's
``env.unwrapped.game``); `weighted_deals` draws and weighs them; `replay_log_weights` is the
core, from the public history as ``(seat, action)`` pairs (what the search agent rebuilds from the
observations of its own decisions).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ddz_env.beliefs import sample_deal_arrays
from ddz_env.observation import HIDDEN, seat_history
from ddz_env.rules import Deal, as_seat
from ddz_env.vector import VectorDouDizhu

from ..base import Decisions, as_batch_agent

DEFAULT_TEMPERATURE = 0.1
DEFAULT_TREMBLE = 0.05
_TINY = 1e-12  # a probability floor: one impossible-looking move never zeroes every deal


def action_probabilities(agent: Any, decisions: Decisions, actions: np.ndarray,
                         temperature: float = DEFAULT_TEMPERATURE, tremble: float = DEFAULT_TREMBLE) -> np.ndarray:
    """(N,) the probability that ``agent`` takes ``actions[i]`` at decision i (see the module doc)."""
    n = len(decisions)
    counts = np.diff(decisions.legal_starts)
    p = np.ones(n, np.float64)
    many = np.flatnonzero(counts > 1)
    if many.size == 0:
        return p
    sub = decisions.take(many)
    if hasattr(agent, "values"):
        values = agent.values(sub)
        for j, i in enumerate(many):
            v = np.asarray(values[j], np.float64)
            if v.size != counts[i]:  # (an agent without values for this phase: trembling greedy below)
                values = None
                break
            z = (v - v.max()) / temperature
            e = np.exp(z)
            p[i] = e[np.searchsorted(sub.legal(j), actions[i])] / e.sum()
        if values is not None:
            return p
    chosen = np.asarray(agent.act_batch(sub))
    hit = chosen == actions[many]
    p[many] = np.where(hit, 1.0 - tremble, tremble / (counts[many] - 1))
    return p


def replay_log_weights(hands: np.ndarray, bottoms: np.ndarray, first_bidder: int, history: Sequence[tuple[int, int]],
                       seat: int, agent: Any, temperature: float = DEFAULT_TEMPERATURE,
                       tremble: float = DEFAULT_TREMBLE, rules: Any = None) -> np.ndarray:
    """(n,) log-weights of n deals (``hands`` (n, 3, 15) as dealt, ``bottoms`` (n, 15)): the history's
    actions of seats other than ``seat`` scored by ``agent`` in the view each then had, replayed on
    every deal at once. ``ValueError`` if an action is illegal under some deal (a deal the history
    rules out)."""
    hands = np.asarray(hands)
    n = hands.shape[0]
    env = VectorDouDizhu(n, seed=None, rules=rules)
    env.load_deals(np.arange(n), hands, np.asarray(bottoms), np.full(n, int(first_bidder)))
    agent = as_batch_agent(agent)
    logw = np.zeros(n, np.float64)
    for t, (s, a) in enumerate(history):
        if a == HIDDEN:
            break
        if not (env.current_player == s).all():
            raise ValueError(f"history step {t}: seat {s} acts, but the replay has seat "
                             f"{int(env.current_player[0])} on turn")
        acts = np.full(n, int(a), np.int64)
        if s != seat:
            d = Decisions.of_env(env)
            logw += np.log(np.maximum(action_probabilities(agent, d, acts, temperature, tremble), _TINY))
        env.step(acts, observe=False)
    return logw


def normalise(logw: np.ndarray) -> tuple[np.ndarray, float]:
    """``(weights summing to 1, effective sample size)`` of log-weights."""
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return w, float(1.0 / np.square(w).sum())


def belief_weights(game, seat, deals: Sequence[Deal], agent: Any = "pretrained",
                   temperature: float = DEFAULT_TEMPERATURE, tremble: float = DEFAULT_TREMBLE) -> tuple[np.ndarray, float]:
    """``(weights (n,), effective sample size)`` of ``deals`` (e.g. ``env.unwrapped.sample_deals``) for
    ``seat`` of ``game``: the other seats modelled as ``agent`` (a spec or an agent)."""
    from ..loader import load

    seat = as_seat(seat, "seat")
    if isinstance(temperature, bool) or not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if not 0 < tremble < 1:
        raise ValueError(f"tremble must be in (0, 1), got {tremble!r}")
    if len(deals) == 0:
        raise ValueError("belief_weights: no deals")
    model = load(agent) if isinstance(agent, str) else agent
    hands = np.stack([d.hands for d in deals])
    bottoms = np.stack([d.bottom for d in deals])
    fb = {int(d.first_bidder) for d in deals}
    if len(fb) != 1 or fb != {int(game.first_bidder)}:
        raise ValueError("belief_weights: the deals' first bidder is not the game's")
    history = seat_history(game.history, game.doubles_revealed, seat)
    logw = replay_log_weights(hands, bottoms, fb.pop(), history, seat, model, temperature, tremble, rules=game.rules)
    return normalise(logw)


def weighted_deals(game, seat, n: int, seed: Any = None, agent: Any = "pretrained",
                   temperature: float = DEFAULT_TEMPERATURE, tremble: float = DEFAULT_TREMBLE,
                   prior: str = "deck") -> tuple[list[Deal], np.ndarray, float]:
    """``n`` deals drawn for ``seat`` of ``game`` (``ddz_env.beliefs.sample_deal_arrays``) with their belief
    weights and the effective sample size."""
    hands, bottoms = sample_deal_arrays(game, seat, n, seed=seed, prior=prior)
    deals = [Deal._trusted(hands[i], bottoms[i], int(game.first_bidder), None) for i in range(hands.shape[0])]
    w, ess = belief_weights(game, seat, deals, agent, temperature, tremble)
    return deals, w, ess


__all__ = ["action_probabilities", "replay_log_weights", "normalise", "belief_weights", "weighted_deals",
           "DEFAULT_TEMPERATURE", "DEFAULT_TREMBLE"]
