"""Play seeded deals between seated agents and record each hand as a row of integers.

Everything random is keyed by (seed, deal index[, seat]), never by the order in which
hands are played: deal ``i`` of seed ``s`` is the same cards whichever worker plays
it, and the agent in seat ``k`` is reseeded with the same number on every seating of
that deal. So two identical agents make identical choices in every seating (duplicate
self-play scores exactly 0), and ``--workers N`` gives the numbers of one worker.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ddz_env.cards import deal as deal_cards
from ddz_env.env import AGENTS, raw_env
from ddz_env.moves import MOVE_TYPE, MoveType

from .base import reset_agent

#: columns of a hand record (one int64 row per hand)
FIELDS = (
    "deal", "seating", "first_bidder",
    "score0", "score1", "score2",
    "void", "landlord", "bid", "winner",
    "bid0", "bid1", "bid2",  # -1 not asked, 0 pass, 1..3
    "dbl0", "dbl1", "dbl2",  # -1 not asked (landlord, void, doubling off), 0 no, 1 yes
    "redouble",  # -1 not asked, 0 no, 1 yes
    "bombs0", "bombs1", "bombs2",  # bombs and rockets played by each seat
    "spring", "anti_spring", "plays",
)
COL = {name: i for i, name in enumerate(FIELDS)}
_IS_BOMBISH = np.isin(MOVE_TYPE, [MoveType.BOMB, MoveType.ROCKET])


class AgentError(RuntimeError):
    """An agent failed or chose an illegal action; names the agent, seat, deal and phase."""


@dataclass(frozen=True)
class Deal:
    hands: np.ndarray  # (3, 15)
    bottom: np.ndarray  # (15,)
    first_bidder: int  # with bidding off: the landlord's seat


def make_deal(seed: int, index: int) -> Deal:
    """Deal ``index`` of ``seed``: independent of every other deal and of who plays it."""
    rng = np.random.default_rng([int(seed), int(index)])
    hands, bottom = deal_cards(rng)
    return Deal(hands, bottom, int(rng.integers(3)))


def seat_seed(seed: int, index: int, seat: int) -> int:
    """The seed an agent in ``seat`` gets for deal ``index`` (the same on every seating)."""
    return int(np.random.SeedSequence([int(seed), int(index), int(seat), 0xD0]).generate_state(1)[0])


def play_hand(env: raw_env, players: Sequence[Any], d: Deal, seed: int, index: int, seating: int = 0,
              names: Sequence[str] = ("?", "?", "?")) -> np.ndarray:
    """Play one hand of deal ``d`` with ``players[seat]`` in each seat; return its record row."""
    options = {"deal": {"hands": d.hands, "bottom": d.bottom, "first_bidder": d.first_bidder}}
    if not env.bidding:
        options["landlord"] = d.first_bidder
    env.reset(options=options)
    g = env.game
    for s in range(3):
        reset_agent(players[s], seat_seed(seed, index, s))
    while not g.is_over:
        s = g.current_player
        obs = env.observe(AGENTS[s])
        try:
            a = players[s].act(obs, env)
        except Exception as e:
            raise AgentError(f"agent {names[s]} ({players[s]!r}) failed at seat {s}, deal {index}, "
                             f"phase {g.phase.name}: {type(e).__name__}: {e}") from e
        try:
            env.step(a)
        except (ValueError, TypeError) as e:
            raise AgentError(f"agent {names[s]} ({players[s]!r}) at seat {s}, deal {index}: {e}") from None
    row = np.zeros(len(FIELDS), dtype=np.int64)
    row[COL["deal"]], row[COL["seating"]], row[COL["first_bidder"]] = index, seating, g.first_bidder
    row[COL["score0"]:COL["score2"] + 1] = g.scores
    row[COL["void"]] = g.void
    row[COL["landlord"]], row[COL["bid"]], row[COL["winner"]] = g.landlord, g.bid, g.winner
    row[COL["bid0"]:COL["bid2"] + 1] = g.bids
    row[COL["dbl0"]:COL["dbl2"] + 1] = g.double_choice
    row[COL["redouble"]] = g.redouble_choice
    for s, m in g.plays:
        if _IS_BOMBISH[m]:
            row[COL["bombs0"] + s] += 1
    row[COL["spring"]], row[COL["anti_spring"]], row[COL["plays"]] = g.spring, g.anti_spring, len(g.plays)
    return row


__all__ = ["FIELDS", "COL", "Deal", "AgentError", "make_deal", "seat_seed", "play_hand"]
