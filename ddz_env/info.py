"""The game's facts in one frozen record: :data:`GAME` (a :class:`GameInfo`).

What the envs, the trainers and the docs need to know of the game as a whole, derived here once
from the tables that decide it (the deck, the move table, the action space, the observation
layout, the phases, R19's score):

=====================  ========================================================================
field                  value and where it comes from
=====================  ========================================================================
num_seats              3
agents                 the AEC env's agent names, ``player_0`` .. ``player_2`` (seat order)
deck_size, hand_size   54 cards; 17 dealt to each seat, 3 to the bottom (R1, R2)
max_hand               20: the landlord's 17 + the bottom (R7)
num_moves              the move table's ids, pass included (``moves.NUM_MOVES``)
num_actions            moves + 4 bids + 2 doubles + 2 redoubles (``actions.NUM_ACTIONS``)
obs_shape              the observation planes (``observation.OBS_SHAPE``)
phases                 ``rules.Phase`` names, in order
max_bombs              13: one per rank of four; and one rocket (the status plane's range)
max_decisions          the most decisions a hand can take: 3 bids, 2 doubles, 1 redouble and
                       at most 54 moves (every move plays a card) each followed by 2 passes
max_abs_score          a bound on any seat's score (R19): bid 3, both farmers doubled and
                       redoubled, 13 bombs, the rocket, a spring, the landlord against both
=====================  ========================================================================

``max_abs_score`` is a bound, not a score that a hand reaches (20 cards cannot hold 13 bombs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .actions import NUM_ACTIONS
from .cards import DECK_SIZE, HAND_SIZE, MAX_HAND, NUM_SEATS
from .moves import IS_BOMB, NUM_MOVES
from .observation import OBS_SHAPE
from .rules import Phase
from .scoring import hand_scores

_BIDS, _DOUBLES, _REDOUBLES = 3, 2, 1


@dataclass(frozen=True)
class GameInfo:
    """The game's facts (see the module doc for each field)."""

    num_seats: int
    agents: tuple[str, ...]
    deck_size: int
    hand_size: int
    max_hand: int
    num_moves: int
    num_actions: int
    obs_shape: tuple[int, ...]
    phases: tuple[str, ...]
    max_bombs: int
    max_decisions: int
    max_abs_score: int


def _max_abs_score(max_bombs: int) -> int:
    score = hand_scores(bid=3, landlord=0, doubled=np.array([False, True, True]), redoubled=True,
                        bombs=max_bombs, rockets=1, spring=True, anti_spring=False, farmers_won=False)
    return int(np.abs(score).max())


_MAX_BOMBS = int(IS_BOMB.sum())
GAME = GameInfo(
    num_seats=NUM_SEATS,
    agents=tuple(f"player_{s}" for s in range(NUM_SEATS)),
    deck_size=DECK_SIZE,
    hand_size=HAND_SIZE,
    max_hand=MAX_HAND,
    num_moves=NUM_MOVES,
    num_actions=NUM_ACTIONS,
    obs_shape=tuple(OBS_SHAPE),
    phases=tuple(p.name for p in Phase),
    max_bombs=_MAX_BOMBS,
    max_decisions=_BIDS + _DOUBLES + _REDOUBLES + DECK_SIZE * (1 + (NUM_SEATS - 1)),
    max_abs_score=_max_abs_score(_MAX_BOMBS),
)

__all__ = ["GameInfo", "GAME"]
