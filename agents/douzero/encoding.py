"""DouZero's features, computed from a seat's observation planes alone (R21); numpy only.

DouZero (Zha et al. 2021, the ``douzero`` package) scores each candidate move with
``Q(z, x)``: ``z`` (5, 162) is its last 15 plays, oldest first, three plays per LSTM step;
``x`` is the state features followed by the candidate's 54 cards. Its card vector is a
4 x 13 thermometer matrix flattened column by column (rank 3's four rows first, then 4's...)
followed by the two jokers: 54 cells. The rows, per position (DouZero's names):

* landlord (373 = 319 + 54): own hand, the cards in the two other hands together, the move
  to beat, cards played by the farmer before the landlord (``landlord_up``), by the farmer
  after it (``landlord_down``), cards left of ``landlord_up`` and of ``landlord_down``
  (one-hot of 17), bombs and rockets played (one-hot of 15), the candidate;
* a farmer (484 = 430 + 54): own hand, the others' cards, the landlord's played cards, the
  partner's played cards, the move to beat, the landlord's last action, the partner's last
  action (a pass or nothing yet: zeros), the landlord's cards left (one-hot of 20), the
  partner's cards left (one-hot of 17), bombs and rockets, the candidate.

A one-hot of ``n`` cards left lights cell ``n - 1`` (as DouZero). Everything here comes from
the planes of :mod:`ddz_env.observation`: the own hand, the played cards per relative seat,
the move to beat, the 15-play history with its seats, the cards left and the bomb count.

Card lists convert both ways: DouZero writes a card as an int, 3..14 for 3..A, 17 for 2,
20 for the black joker and 30 for the red one (:func:`to_douzero`, :func:`from_douzero`).
"""
from __future__ import annotations

import numpy as np

from ddz_env.cards import HAND_SIZE, MAX_COUNTS, MAX_HAND, NUM_RANKS, NUM_SEATS, RANKS, as_counts
from ddz_env.moves import MOVE_COUNTS, NUM_MOVES
from ddz_env.readers import landlord_seat, read_cards_left
from ddz_env.observation import (
    CH_HAND, CH_HISTORY, CH_HISTORY_SEATS, CH_PLAYED, CH_STATUS, CH_TO_BEAT, HISTORY,
)

#: DouZero's int for each of this project's ranks (index = rank 0..14, as ``ddz_env.cards.RANKS``)
DOUZERO_CARD = np.array([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30], np.int64)
_RANK_OF = {int(c): r for r, c in enumerate(DOUZERO_CARD)}
DOUZERO_CARD.flags.writeable = False

POSITIONS = ("landlord", "landlord_down", "landlord_up")  # by role: 0 landlord, 1 farmer after it, 2 before
CARDS = 54  # DouZero's card vector
STATE_DIM = {"landlord": 319, "farmer": 430}  # x without the candidate's 54 cells
X_DIM = {"landlord": 373, "farmer": 484}
Z_SHAPE = (5, 162)


def to_douzero(cards) -> list[int]:
    """DouZero's sorted card list of a card string (``"TTJB"``) or a (15,) count vector: ``[10, 10, 11, 20]``."""
    counts = as_counts(cards)
    return np.repeat(DOUZERO_CARD, counts.astype(np.int64)).tolist()


def from_douzero(cards) -> np.ndarray:
    """(15,) int8 counts of a DouZero card list (ints 3..14, 17, 20, 30, any order); ``ValueError``
    naming an unknown card or an impossible count."""
    counts = np.zeros(NUM_RANKS, np.int8)
    for c in cards:
        try:
            counts[_RANK_OF[int(c)]] += 1
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"bad DouZero card {c!r} in {list(cards)!r}: cards are 3..14, 17 (2), 20 (black joker), "
                             f"30 (red joker)") from None
    over = np.flatnonzero(counts > MAX_COUNTS)
    if over.size:
        r = int(over[0])
        raise ValueError(f"bad DouZero card list {list(cards)!r}: {int(counts[r])} cards of rank {RANKS[r]!r}")
    return counts


def from_douzero_string(cards) -> str:
    """This project's card string of a DouZero card list (``[10, 10, 11, 20]`` -> ``"TTJB"``)."""
    return "".join(RANKS[r] * int(n) for r, n in enumerate(from_douzero(cards)))


def counts54(counts: np.ndarray) -> np.ndarray:
    """DouZero's 54-cell vectors (..., 54) int8 of count vectors (..., 15)."""
    counts = np.asarray(counts)
    out = np.empty(counts.shape[:-1] + (CARDS,), np.int8)
    therm = np.arange(4) < counts[..., :13, None]  # (..., 13, 4): rank-major, thermometer row minor
    out[..., :52] = therm.reshape(counts.shape[:-1] + (52,))
    out[..., 52:] = counts[..., 13:] > 0
    return out


def planes54(planes: np.ndarray) -> np.ndarray:
    """DouZero's 54-cell vectors (..., 54) int8 of thermometer planes (..., 4, 15)."""
    planes = np.asarray(planes)
    out = np.empty(planes.shape[:-2] + (CARDS,), np.int8)
    out[..., :52] = np.swapaxes(planes[..., :, :13], -1, -2).reshape(planes.shape[:-2] + (52,))
    out[..., 52:] = planes[..., 0, 13:]
    return out


#: every move id's 54 cells (the pass: zeros), the candidate part of ``x``
MOVE54 = counts54(MOVE_COUNTS)
MOVE54.flags.writeable = False
assert MOVE54.shape == (NUM_MOVES, CARDS)


def _one_hot(n: np.ndarray, size: int) -> np.ndarray:
    """(B, size) int8 with cell ``n - 1`` set (DouZero's cards-left one-hot; 0 wraps to the last cell, as its
    ``array[n - 1] = 1`` does, though a seat with no cards left never waits for a decision)."""
    out = np.zeros((n.shape[0], size), np.int8)
    out[np.arange(n.shape[0]), (n - 1) % size] = 1
    return out


def _public(planes: np.ndarray) -> dict:
    """The facts DouZero's features need, observer-relative (seat 0 self, 1 next, 2 previous), from (B, 29, 4, 15)."""
    B = planes.shape[0]
    hand = planes[:, CH_HAND].sum(axis=1)  # (B, 15) counts
    played = planes[:, CH_PLAYED:CH_PLAYED + 3].sum(axis=2)  # (B, 3, 15)
    left = read_cards_left(planes)  # (B, 3)
    status = planes[:, CH_STATUS, 3]
    bombs = status[:, :14].argmax(axis=1) + status[:, 14]  # bombs, plus the rocket (DouZero counts both)
    seats = planes[:, CH_HISTORY_SEATS, :3, :HISTORY]  # (B, 3, 15): [r, k] slot k played by relative seat r
    # each relative seat's last action: its most recent history slot (every seat acts once in 3 slots); zeros
    # for a pass or before it acted
    k = np.arange(HISTORY)
    has = seats.any(axis=2)  # (B, 3)
    slot = np.where(seats.astype(bool), k, HISTORY).min(axis=2)  # (B, 3) the most recent slot of each seat
    hist54 = planes54(planes[:, CH_HISTORY:CH_HISTORY + HISTORY])  # (B, 15, 54), most recent first
    last = np.where(has[:, :, None], hist54[np.arange(B)[:, None], np.minimum(slot, HISTORY - 1)], 0)
    z = hist54[:, ::-1].reshape(B, *Z_SHAPE)  # oldest first, 3 plays per step
    return dict(hand=hand, played=played, left=left, bombs=bombs, last=last.astype(np.int8), z=z,
                to_beat=planes54(planes[:, CH_TO_BEAT]))


def encode_states(planes: np.ndarray, roles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DouZero's state features of B play-phase decisions of one kind, from their observation planes.

    ``roles`` (B,): all 0 (landlord: state (B, 319)) or all farmers, 1 or 2 (state (B, 430)).
    Returns ``(state int8, z (B, 5, 162) int8)``; a candidate's ``x`` row is ``[state, MOVE54[move]]``.
    """
    planes = np.asarray(planes)
    roles = np.asarray(roles, dtype=np.int64)
    if planes.ndim != 4 or planes.shape[1:] != (CH_STATUS + 1, 4, NUM_RANKS):
        raise ValueError(f"planes must be (B, {CH_STATUS + 1}, 4, {NUM_RANKS}), got {planes.shape}")
    if roles.shape != planes.shape[:1]:
        raise ValueError(f"roles must be ({planes.shape[0]},), got {roles.shape}")
    lord = roles == 0
    if not (lord.all() or ((roles == 1) | (roles == 2)).all()):
        raise ValueError(f"one call encodes landlord decisions (role 0) or farmer ones (roles 1, 2), got roles "
                         f"{sorted(set(roles.tolist()))}")
    p = _public(planes)
    B = planes.shape[0]
    rows = np.arange(B)
    hand54 = counts54(p["hand"])
    others54 = counts54(MAX_COUNTS - p["hand"] - p["played"].sum(axis=1))
    bombs = np.zeros((B, 15), np.int8)
    bombs[rows, p["bombs"]] = 1
    if B and lord[0]:
        # relative seat 1 (next) is landlord_down, 2 (previous) landlord_up
        parts = [hand54, others54, p["to_beat"], counts54(p["played"][:, 2]), counts54(p["played"][:, 1]),
                 _one_hot(p["left"][:, 2], HAND_SIZE), _one_hot(p["left"][:, 1], HAND_SIZE), bombs]
    else:
        # the landlord is relative seat 2 for the farmer after it (role 1), seat 1 for the one before it
        lord_rel = landlord_seat(roles)
        mate_rel = NUM_SEATS - lord_rel
        parts = [hand54, others54, counts54(p["played"][rows, lord_rel]), counts54(p["played"][rows, mate_rel]),
                 p["to_beat"], p["last"][rows, lord_rel], p["last"][rows, mate_rel],
                 _one_hot(p["left"][rows, lord_rel], MAX_HAND), _one_hot(p["left"][rows, mate_rel], HAND_SIZE), bombs]
    state = np.concatenate(parts, axis=1).astype(np.int8) if B else \
        np.zeros((0, STATE_DIM["landlord" if lord.all() else "farmer"]), np.int8)
    return state, p["z"]


def candidate_rows(state: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The ``x`` rows (len(moves), state width + 54) of one decision's candidate ``moves`` (move ids)."""
    moves = np.asarray(moves, dtype=np.int64)
    return np.concatenate([np.broadcast_to(state, (moves.size, state.shape[-1])), MOVE54[moves]], axis=1)


__all__ = ["DOUZERO_CARD", "POSITIONS", "STATE_DIM", "X_DIM", "Z_SHAPE", "MOVE54", "to_douzero", "from_douzero",
           "from_douzero_string", "counts54", "planes54", "encode_states", "candidate_rows"]
