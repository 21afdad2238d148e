"""Reading observation planes back, through the one layout table (:data:`ddz_env.observation.LAYOUT`).

=========================  ===================================================================================
:func:`read_cards`         the counts of a card channel run (``hand``, ``unseen``, ``bottom``, ``played``, ...)
:func:`read_cards_left`    the cards each relative seat holds
:func:`read_bids`          each relative seat's bid and who bid first
:func:`read_doubling`      the doubling choices as the observer may know them (R5), the redouble
:func:`read_history_seats` the relative seat of each history slot
:func:`read_history`       the play history: each slot's relative seat, move id and cards (a :class:`History`)
:func:`read_status`        phase, own role, the landlord's relative seat, the seat of the move to beat, bombs,
                           rocket (a :class:`Status`)
:func:`landlord_seat`      the landlord's relative seat seen from a role
=========================  ===================================================================================

Each takes ``(..., 29, 4, 15)`` planes (any leading shape) and inverts what
``observation.encode`` / ``observe_game`` / ``observe_batch`` wrote; agents read planes only through these.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .cards import NUM_RANKS, NUM_SEATS
from .moves import move_of_counts
from .observation import EMPTY_SLOT, HISTORY, LAYOUT_BY_NAME, PLANE_CELLS
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
    return cells.reshape(cells.shape[:-2] + (PLANE_CELLS,)).argmax(axis=-1).astype(np.int64)


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


class History(NamedTuple):
    """The play history read back (:func:`read_history`), slot 0 the most recent play; the slots hold
    plays from slot 0 on, the empty ones after them."""

    seats: Any  # (..., HISTORY) int64: the relative seat of each slot, -1 an empty slot
    moves: Any  # (..., HISTORY) int64: the move id: PASS for a pass, EMPTY_SLOT for an empty slot, -1 for
    #             cards that are no move (planes no env wrote)
    cards: Any  # (..., HISTORY, 15) int8: the cards of each slot (zeros for a pass or an empty slot)

    def plays(self) -> list[tuple[int, int]]:
        """One observation's plays, oldest first, as ``(relative seat, move id)`` pairs."""
        n = int((np.asarray(self.seats) >= 0).sum())
        return [(int(s), int(m)) for s, m in zip(self.seats[:n][::-1], self.moves[:n][::-1])]


def read_history(planes: np.ndarray) -> History:
    """The ``history`` and ``history_seats`` channels of ``(..., 29, 4, 15)`` planes read back (a
    :class:`History`): the one reader of the plays the planes carry, each slot's move id looked up
    by its cards (``moves.move_of_counts``)."""
    cards = read_cards(planes, "history")
    seats = read_history_seats(planes)
    moves = np.full(seats.shape, EMPTY_SLOT, np.int64)
    flat_cards, flat_moves = cards.reshape(-1, NUM_RANKS), moves.reshape(-1)
    for i in np.flatnonzero(seats.reshape(-1) >= 0).tolist():
        flat_moves[i] = move_of_counts(flat_cards[i])
    return History(seats, moves, cards)


def landlord_seat(role):
    """The landlord's relative seat (0 the observer, 1 the next seat, 2 the previous) as seen by a seat
    of ``role`` (``rules.Role``), -1 where the role is -1 (no landlord yet): an int for an int, else an
    int64 array."""
    if isinstance(role, (int, np.integer)):
        return -1 if role < 0 else int(-role % NUM_SEATS)
    r = np.asarray(role, np.int64)
    return np.where(r >= 0, -r % NUM_SEATS, -1)


class Status(NamedTuple):
    """The ``status`` channel read back (:func:`read_status`), every field (...,) int64 or bool."""

    phase: Any  # Phase
    role: Any  # the observer's Role, -1 before the landlord is known
    beat_seat: Any  # relative seat that played the move to beat, -1 when leading (and outside play)
    bombs: Any  # bombs played, capped at 13
    rocket: Any  # bool: the rocket was played
    landlord: Any  # the landlord's relative seat (from the role: landlord_seat), -1 before it is known


def read_status(planes: np.ndarray) -> Status:
    """The inverse of the status plane of ``(..., 29, 4, 15)`` planes: phase, own role, the seat of the
    move to beat, bombs (0..13) and the rocket (see :data:`LAYOUT`, channel ``status``), and the
    landlord's relative seat that the role gives."""
    p = LAYOUT_BY_NAME["status"].of(planes)[..., 0, :, :]
    role = _one_hot_index(p[..., 1, :NUM_SEATS])
    return Status(phase=p[..., 0, :len(Phase)].argmax(axis=-1).astype(np.int64),
                  role=role, beat_seat=_one_hot_index(p[..., 2, :NUM_SEATS]),
                  bombs=p[..., 3, :14].argmax(axis=-1).astype(np.int64), rocket=p[..., 3, 14] > 0,
                  landlord=landlord_seat(role))


__all__ = ["read_cards", "read_cards_left", "read_bids", "read_doubling", "read_history_seats", "read_history",
           "read_status", "landlord_seat", "History", "Status"]
