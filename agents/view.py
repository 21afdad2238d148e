"""A seat's public view, decoded from its observation planes.

Heuristic agents read only this, so by construction they use nothing a seat may
not know (R21): the planes hold the own hand, public plays, cards left and bids.
Seats are relative, as in the planes: 0 self, 1 next (acts after), 2 previous.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddz_env.cards import MAX_COUNTS
from ddz_env.observation import (
    CH_BIDS, CH_BOTTOM, CH_CARDS_LEFT, CH_HAND, CH_PLAYED, CH_STATUS, CH_TO_BEAT,
)

from .hand import move_of

LANDLORD, FARMER_AFTER, FARMER_BEFORE = 0, 1, 2


@dataclass(frozen=True)
class View:
    hand: np.ndarray  # (15,) own cards
    others: np.ndarray  # (15,) cards in the other two hands together (deck - own - played)
    left: tuple[int, int, int]  # cards held by relative seat 0, 1, 2
    phase: int  # 0 bid, 1 double, 2 redouble, 3 play, 4 over
    role: int  # -1 before the landlord is known, 0 landlord, 1 farmer after it, 2 farmer before it
    to_beat: int  # move id to beat, 0 when leading (or not in play)
    beat_seat: int  # relative seat that played ``to_beat``, -1 when leading
    bottom: np.ndarray | None  # (15,) once revealed
    highest_bid: int  # 0 when nobody bid yet

    @property
    def n_cards(self) -> int:
        return self.left[0]

    @property
    def partner(self) -> int:
        """Relative seat of the partner farmer; -1 for the landlord or before bidding ends."""
        return {FARMER_AFTER: 1, FARMER_BEFORE: 2}.get(self.role, -1)

    @property
    def landlord(self) -> int:
        """Relative seat of the landlord; -1 before bidding ends."""
        return {LANDLORD: 0, FARMER_AFTER: 2, FARMER_BEFORE: 1}.get(self.role, -1)

    def opponents(self) -> tuple[int, ...]:
        if self.role == LANDLORD:
            return (1, 2)
        if self.role in (FARMER_AFTER, FARMER_BEFORE):
            return (self.landlord,)
        return (1, 2)

    def min_opponent_left(self) -> int:
        return min(self.left[s] for s in self.opponents())

    def max_opponent_left(self) -> int:
        return max(self.left[s] for s in self.opponents())


def decode(planes: np.ndarray) -> View:
    """The public view held in one observation (29, 4, 15)."""
    counts = planes[:CH_TO_BEAT + 1].sum(axis=1, dtype=np.int8)  # thermometer planes -> counts
    hand = counts[CH_HAND]
    played = counts[CH_PLAYED] + counts[CH_PLAYED + 1] + counts[CH_PLAYED + 2]
    flat = planes[CH_CARDS_LEFT:CH_CARDS_LEFT + 3].reshape(3, 60)
    left = tuple(int(x) for x in flat.argmax(axis=1))
    status = planes[CH_STATUS]
    phase = int(status[0].argmax())
    role = int(status[1, :3].argmax()) if status[1, :3].any() else -1
    beat_seat = int(status[2, :3].argmax()) if status[2, :3].any() else -1
    to_beat = move_of(counts[CH_TO_BEAT]) if counts[CH_TO_BEAT].any() else 0
    bottom = counts[CH_BOTTOM].copy() if counts[CH_BOTTOM].any() else None
    bids = planes[CH_BIDS, :3, :4]
    highest = int(np.nonzero(bids.any(axis=0))[0].max()) if bids.any() else 0
    return View(hand=hand.copy(), others=(MAX_COUNTS - hand - played).astype(np.int8), left=left, phase=phase,
                role=role, to_beat=to_beat, beat_seat=beat_seat, bottom=bottom, highest_bid=highest)


__all__ = ["View", "decode", "LANDLORD", "FARMER_AFTER", "FARMER_BEFORE"]
