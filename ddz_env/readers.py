"""Reading observation planes back, through the one layout table (:data:`ddz_env.observation.LAYOUT`).

=========================  ===================================================================================
:func:`read_cards`         the counts of a card channel run (``hand``, ``unseen``, ``bottom``, ``played``, ...)
:func:`read_cards_left`    the cards each relative seat holds
:func:`read_bids`          each relative seat's bid and who bid first
:func:`read_doubling`      the doubling choices as the observer may know them (R5), the redouble
:func:`read_history_seats` the relative seat of each history slot
:func:`read_status`        phase, own role, the seat of the move to beat, bombs, rocket (a :class:`Status`)
=========================  ===================================================================================

Each takes ``(..., 29, 4, 15)`` planes (any leading shape) and inverts what
``observation.encode`` / ``observe_game`` / ``observe_batch`` wrote; agents read planes only through these.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .cards import NUM_RANKS, NUM_SEATS
from .observation import HISTORY, LAYOUT_BY_NAME
from .rules import Phase

_CARD_CHANNELS = ("hand", "unseen", "bottom", "played", "to_beat", "history")


def _one_hot_index(rows: np.ndarray) -> np.ndarray:
    """(...,) int64: the lit cell of each one-hot row (..., n), -1 where none is lit."""
    lit = rows.any(axis=-1)
    return np.where(lit, rows.argmax(axis=-1), -1).astype(np.int64)


def read_cards(planes: np.ndarray, name: str = "hand") -> np.ndarray:
    """Counts of a card run of ``(..., 29, 4, 15)`` planes (the inverse of its thermometer planes):
    ``(..., 15)`` int8 for a one-channel run (``hand``, ``unseen``, ``bottom``, ``to_beat``),
    ``(..., count, 15)`` for ``played`` (relative seats) and ``history`` (most recent first)."""
    if name not in _CARD_CHANNELS:
        raise ValueError(f"read_cards: {name!r} is no card channel; card channels: {', '.join(_CARD_CHANNELS)}")
    ch = LAYOUT_BY_NAME[name]
    counts = ch.of(planes).sum(axis=-2, dtype=np.int8)
    return counts[..., 0, :] if ch.count == 1 else counts


def read_cards_left(planes: np.ndarray) -> np.ndarray:
    """(..., 3) int64: the cards held by relative seat 0, 1, 2 (the ``cards_left`` channels)."""
    ch = LAYOUT_BY_NAME["cards_left"]
    cells = ch.of(planes)
    return cells.reshape(cells.shape[:-2] + (4 * NUM_RANKS,)).argmax(axis=-1).astype(np.int64)


def read_bids(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bids (..., 3), first_bidder (...,))`` int64 of the ``bids`` channel: each relative seat's bid
    (-1 not yet, 0 pass, 1..3) and the relative seat that bid first."""
    p = LAYOUT_BY_NAME["bids"].of(planes)[..., 0, :, :]
    return _one_hot_index(p[..., :3, :4]), _one_hot_index(p[..., 3, :3])


def read_doubling(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(doubling (..., 3), redouble (...,))`` int64 of the ``doubling`` channel, as the observer may
    know them (R5): each relative seat's choice (-1 unknown or not asked, 0 no, 1 double) and the
    landlord's (-1 not asked or not yet, 0 no, 1 redouble)."""
    p = LAYOUT_BY_NAME["doubling"].of(planes)[..., 0, :, :]
    return _one_hot_index(p[..., :3, :2]), _one_hot_index(p[..., 3, :2])


def read_history_seats(planes: np.ndarray) -> np.ndarray:
    """(..., HISTORY) int64 of the ``history_seats`` channel: the relative seat of each history slot (0 the
    most recent; -1 an empty slot). Whether a slot is a pass is its empty ``history`` plane."""
    p = LAYOUT_BY_NAME["history_seats"].of(planes)[..., 0, :, :]
    return _one_hot_index(np.swapaxes(p[..., :NUM_SEATS, :HISTORY], -1, -2))


class Status(NamedTuple):
    """The ``status`` channel read back (:func:`read_status`), every field (...,) int64 or bool."""

    phase: Any  # Phase
    role: Any  # the observer's Role, -1 before the landlord is known
    beat_seat: Any  # relative seat that played the move to beat, -1 when leading (and outside play)
    bombs: Any  # bombs played, capped at 13
    rocket: Any  # bool: the rocket was played


def read_status(planes: np.ndarray) -> Status:
    """The inverse of the status plane of ``(..., 29, 4, 15)`` planes: phase, own role, the seat of the
    move to beat, bombs (0..13) and the rocket (see :data:`LAYOUT`, channel ``status``)."""
    p = LAYOUT_BY_NAME["status"].of(planes)[..., 0, :, :]
    return Status(phase=p[..., 0, :len(Phase)].argmax(axis=-1).astype(np.int64),
                  role=_one_hot_index(p[..., 1, :NUM_SEATS]), beat_seat=_one_hot_index(p[..., 2, :NUM_SEATS]),
                  bombs=p[..., 3, :14].argmax(axis=-1).astype(np.int64), rocket=p[..., 3, 14] > 0)


__all__ = ["read_cards", "read_cards_left", "read_bids", "read_doubling", "read_history_seats", "read_status", "Status"]
