"""The features a heuristic plays from, decoded from a seat's observation planes (:class:`SeatFeatures`).

Heuristic agents read only these, so by construction they use nothing a seat may
not know (R21): the planes hold the own hand, public plays, cards left and bids.
Seats are relative, as in the planes: 0 self, 1 next (acts after), 2 previous.

(Not to be confused with ``ddz_env.view``, what a *person* is shown of a hand.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddz_env.cards import MAX_COUNTS
from ddz_env.observation import LAYOUT_BY_NAME
from ddz_env.readers import landlord_seat, read_bids, read_cards, read_cards_left, read_status
from ddz_env.rules import Phase, Role

from .planner import move_of

#: the roles, as ddz_env.rules.Role numbers them (plain ints)
LANDLORD, FARMER_AFTER, FARMER_BEFORE = int(Role.LANDLORD), int(Role.FARMER_AFTER), int(Role.FARMER_BEFORE)


@dataclass(frozen=True)
class SeatFeatures:
    hand: np.ndarray  # (15,) own cards
    others: np.ndarray  # (15,) cards in the other two hands together (deck - own - played)
    left: tuple[int, int, int]  # cards held by relative seat 0, 1, 2
    phase: int  # ddz_env.rules.Phase: 0 bid, 1 double, 2 redouble, 3 play, 4 over
    role: int  # ddz_env.rules.Role: 0 landlord, 1 farmer after it, 2 farmer before it; -1 before it is known
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
        return landlord_seat(self.role)

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


#: channel numbers of the runs decode reads, from the layout (ddz_env.observation.LAYOUT)
_HAND, _BOTTOM, _PLAYED, _TO_BEAT, _LEFT, _BIDS, _STATUS = (
    LAYOUT_BY_NAME[n].start for n in ("hand", "bottom", "played", "to_beat", "cards_left", "bids", "status"))
if _TO_BEAT + 1 != LAYOUT_BY_NAME["to_beat"].stop or max(_HAND, _BOTTOM, _PLAYED + 2) > _TO_BEAT:  # pragma: no cover
    raise ImportError("decode sums the card runs hand .. to_beat in one pass: they must lead the layout")


def decode(planes: np.ndarray) -> SeatFeatures:
    """The features held in one observation (29, 4, 15).

    The rule agent decodes every one of its decisions, so this reads the planes in a few numpy calls
    (one sum for all card runs; scalar reads of the status and bids rows), about 30 us, where the
    layout's general readers (``read_cards``, ``read_status``, ``read_bids``, for batches) take
    about 80 us for one observation. ``tests/baselines/test_agents.py`` checks that both agree."""
    counts = planes[:_TO_BEAT + 1].sum(axis=1, dtype=np.int8)  # thermometer planes -> counts, every card run
    hand = counts[_HAND]
    played = counts[_PLAYED] + counts[_PLAYED + 1] + counts[_PLAYED + 2]
    left = tuple(int(x) for x in planes[_LEFT:_LEFT + 3].reshape(3, -1).argmax(axis=1))
    status = planes[_STATUS]
    phase = int(status[0, :len(Phase)].argmax())
    role = int(status[1, :3].argmax()) if status[1, :3].any() else -1
    beat_seat = int(status[2, :3].argmax()) if status[2, :3].any() else -1
    to_beat = move_of(counts[_TO_BEAT]) if counts[_TO_BEAT].any() else 0
    bottom = counts[_BOTTOM].copy() if counts[_BOTTOM].any() else None
    bids = planes[_BIDS, :3, :4]
    highest = int(np.nonzero(bids.any(axis=0))[0].max()) if bids.any() else 0
    return SeatFeatures(hand=hand.copy(), others=(MAX_COUNTS - hand - played).astype(np.int8), left=left, phase=phase,
                role=role, to_beat=to_beat, beat_seat=beat_seat, bottom=bottom, highest_bid=highest)


def decode_with_readers(planes: np.ndarray) -> SeatFeatures:
    """:func:`decode` through the layout's general readers (the reference the tests compare it with)."""
    hand = read_cards(planes, "hand")
    played = read_cards(planes, "played").sum(axis=0, dtype=np.int8)
    beat_cards = read_cards(planes, "to_beat")
    bottom = read_cards(planes, "bottom")
    left = tuple(int(x) for x in read_cards_left(planes))
    status = read_status(planes)
    bids, _ = read_bids(planes)
    return SeatFeatures(hand=hand, others=(MAX_COUNTS - hand - played).astype(np.int8), left=left, phase=int(status.phase),
                role=int(status.role), to_beat=move_of(beat_cards) if beat_cards.any() else 0,
                beat_seat=int(status.beat_seat), bottom=bottom if bottom.any() else None,
                highest_bid=max(int(bids.max()), 0))


def __getattr__(name: str):
    """``View``, this class's name in release 0.1.0 (``agents.view.View``), with a DeprecationWarning until its
    removal in 0.3.0 (CHANGELOG.md)."""
    if name == "View":
        import warnings

        warnings.warn("agents.view.View is agents.baselines.features.SeatFeatures now: import it from there (the old "
                      "name goes in the next release)", DeprecationWarning, stacklevel=2)
        return SeatFeatures
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SeatFeatures", "decode", "decode_with_readers", "LANDLORD", "FARMER_AFTER", "FARMER_BEFORE"]
