"""Vectorized legality: which moves of the table a hand may play now.

A move is playable when its cards fit in the hand (R8) and, for four-with-two,
no kicker is split from another whole bomb or the rocket held (R13). When
responding it must also beat the move on the table (R14-R16); passing is legal
only when responding (R8).

How it stays fast without a loop over moves: hands and moves are 54-bit
thermometer codes (``moves.thermometer``), so "fits" is one AND. First the ~300
body groups are filtered (body fits and the group beats the last move's group,
a table lookup); then only the moves of the surviving groups are tested. The
same code serves one hand or a batch of B hands.
"""
from __future__ import annotations

import numpy as np

from .cards import MAX_COUNTS, NUM_RANKS, RANKS, as_counts, as_id
from .moves import (
    BEATS, FOUR_KICKER_RANKS, GROUP_BODY_BITS, GROUP_SIZE, GROUP_START, GROUP_TYPE, MOVE_BITS, MOVE_GROUP,
    MOVE_STRINGS, NUM_GROUPS, NUM_MOVES, PASS, THERMO, MoveType, move_id, thermometer,
)

# Extended groups: column 0 is the pass (id 0, no cards), then the body groups.
_EXT_START = np.concatenate([[PASS], GROUP_START]).astype(np.int64)
_EXT_SIZE = np.concatenate([[1], GROUP_SIZE]).astype(np.int64)
_EXT_BODY = np.concatenate([[0], GROUP_BODY_BITS]).astype(np.uint64)
# _EXT_BEATS[h, 1 + g] = BEATS[h, g]; the pass column is open only when responding
_EXT_BEATS = np.zeros((NUM_GROUPS + 1, NUM_GROUPS + 1), dtype=bool)
_EXT_BEATS[:, 1:] = BEATS
_EXT_BEATS[:NUM_GROUPS, 0] = True
_EXT_BEATS.flags.writeable = False
_RANK_BITS = (1 << np.arange(NUM_RANKS)).astype(np.int32)
_JOKER_BITS = np.int32((1 << 13) | (1 << 14))


# --- single-hand fast path tables
_THERMO_FLAT = THERMO.ravel()
_THERMO_OFF = np.arange(NUM_RANKS) * THERMO.shape[1]
# responding to a move of group h: the candidate ids (pass first) are _RESP_IDS[_RESP_PTR[h]:_RESP_PTR[h + 1]]
_resp = [np.concatenate([np.arange(_EXT_START[e], _EXT_START[e] + _EXT_SIZE[e]) for e in np.nonzero(_EXT_BEATS[h])[0]])
         for h in range(NUM_GROUPS)]
_RESP_PTR = np.concatenate([[0], np.cumsum([len(r) for r in _resp])]).astype(np.int64)
_RESP_IDS = np.concatenate(_resp).astype(np.int64)
# leading: the few hundred moves without many kickers are tested directly; the four kicker-heavy
# types (airplanes with wings, four-with-two: 24,000 moves in ~100 groups) are tested group body first
_HEAVY = np.isin(GROUP_TYPE, [MoveType.AIRPLANE_SINGLES, MoveType.AIRPLANE_PAIRS,
                              MoveType.FOUR_TWO_SINGLES, MoveType.FOUR_TWO_PAIRS])
_HEAVY_GROUPS = np.nonzero(_HEAVY)[0]
_HEAVY_BODY = GROUP_BODY_BITS[_HEAVY_GROUPS]
_LIGHT_IDS = np.concatenate([np.arange(GROUP_START[g], GROUP_START[g] + GROUP_SIZE[g]) for g in np.nonzero(~_HEAVY)[0]])
_LIGHT_BITS = MOVE_BITS[_LIGHT_IDS]
_RESP_BITS = MOVE_BITS[_RESP_IDS]
_RESP_PTR_LIST = _RESP_PTR.tolist()
_MOVE_GROUP_LIST = MOVE_GROUP.tolist()
#: thermometer bits of the 4th card of each rank 3..2, and of both jokers
_FOURTH_CARD_BITS = np.uint64(sum(1 << (4 * r + 3) for r in range(13)))
_ROCKET_BITS = np.uint64((1 << 52) | (1 << 53))
for _a in (_RESP_IDS, _RESP_PTR, _RESP_BITS, _LIGHT_IDS, _LIGHT_BITS, _HEAVY_BODY, _HEAVY_GROUPS):
    _a.flags.writeable = False


def legal_ids_unchecked(counts: np.ndarray, last: int) -> np.ndarray:
    """Legal ids of one validated count vector against move id ``last`` (0: lead)."""
    held = _THERMO_FLAT.take(_THERMO_OFF + counts).sum()
    not_held = ~held
    h = _MOVE_GROUP_LIST[last]
    if h != NUM_GROUPS:
        lo, hi = _RESP_PTR_LIST[h], _RESP_PTR_LIST[h + 1]
        ids = _RESP_IDS[lo:hi][(_RESP_BITS[lo:hi] & not_held) == 0]
    else:
        ids = _LIGHT_IDS[(_LIGHT_BITS & not_held) == 0]
        fit = _HEAVY_GROUPS[(_HEAVY_BODY & not_held) == 0]
        if fit.size:
            cand = np.concatenate([np.arange(GROUP_START[g], GROUP_START[g] + GROUP_SIZE[g]) for g in fit])
            cand = cand[(MOVE_BITS[cand] & not_held) == 0]
            ids = np.sort(np.concatenate([ids, cand]))
    if held & _FOURTH_CARD_BITS or held & _ROCKET_BITS == _ROCKET_BITS:  # a whole bomb or the rocket in hand
        ids = ids[(FOUR_KICKER_RANKS[ids] & bomb_rank_bits(counts[None, :])[0]) == 0]
    return ids


def _check_last(last_moves: np.ndarray) -> None:
    if last_moves.ndim != 1:
        raise ValueError(f"last_moves must have shape (B,), got {last_moves.shape}")
    if last_moves.size and last_moves.dtype.kind not in "iu":  # a float id is never truncated
        raise TypeError(f"last_moves must be integer move ids, got an array of dtype {last_moves.dtype}")
    if last_moves.size and (last_moves.min() < 0 or last_moves.max() >= NUM_MOVES):
        bad = last_moves[(last_moves < 0) | (last_moves >= NUM_MOVES)][0]
        raise ValueError(f"last move id {int(bad)} out of range [0, {NUM_MOVES})")


def bomb_rank_bits(hands: np.ndarray) -> np.ndarray:
    """(B,) bitmask of ranks held as a whole bomb, plus both joker bits when the rocket is held."""
    four = (hands[:, :13] == 4) @ _RANK_BITS[:13]
    rocket = (hands[:, 13] > 0) & (hands[:, 14] > 0)
    return (four | np.where(rocket, _JOKER_BITS, 0)).astype(np.int32)


def _check_hands(hands: np.ndarray, n: int) -> None:
    if hands.ndim != 2 or hands.shape[1] != NUM_RANKS:
        raise ValueError(f"hands must have shape (B, {NUM_RANKS}), got {hands.shape}")
    if hands.shape[0] != n:
        raise ValueError(f"{hands.shape[0]} hands but {n} last moves")
    if hands.size and hands.dtype.kind not in "iu":  # NaN or 2.9 threes are no count
        raise TypeError(f"hands must be an integer array of card counts, got dtype {hands.dtype}")
    bad = (hands < 0) | (hands > MAX_COUNTS)
    if bad.any():
        b, r = np.argwhere(bad)[0]
        raise ValueError(f"hand {b} holds an impossible count {int(hands[b, r])} of rank {RANKS[r]!r}")


def legal_ids_batch(hands: np.ndarray, last_moves: np.ndarray, validate: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Compact legal sets for B hands: ``(rows, ids)``, sorted by row then id.

    ``hands`` is (B, 15) counts; ``last_moves`` (B,) the move id to beat, 0 when
    leading. Hand b may play exactly ``ids[rows == b]`` (0 = pass). Internal callers
    whose hands come from the rules themselves pass ``validate=False``.
    """
    hands = np.asarray(hands)
    if validate:
        last_moves = np.asarray(last_moves)
        _check_last(last_moves)
        _check_hands(hands, last_moves.shape[0])
    last_moves = np.asarray(last_moves, dtype=np.int64)
    if hands.shape[0] == 1:  # one hand: the single-hand path has less overhead
        ids = legal_ids_unchecked(hands[0], int(last_moves[0]))
        return np.zeros(ids.size, dtype=np.int64), ids
    if last_moves.size and last_moves.min() > 0:  # all respond: only the groups that beat the table
        return response_ids_batch(hands, last_moves)
    hand_bits = thermometer(hands)
    not_held = ~hand_bits
    groups_ok = (_EXT_BODY[None, :] & not_held[:, None]) == 0
    groups_ok &= _EXT_BEATS[MOVE_GROUP[last_moves]]
    b, g = np.divmod(np.flatnonzero(groups_ok), groups_ok.shape[1])  # 2-D np.nonzero is ~8x slower
    sizes = _EXT_SIZE[g]
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if ends.size else 0
    rows = np.repeat(b, sizes)
    ids = np.arange(total, dtype=np.int64) + np.repeat(_EXT_START[g] - (ends - sizes), sizes)
    ok = (MOVE_BITS[ids] & not_held[rows]) == 0
    bombs = bomb_rank_bits(hands)
    if bombs.any():
        ok &= (FOUR_KICKER_RANKS[ids] & bombs[rows]) == 0
    return rows[ok], ids[ok]


# candidate body groups of a response, by the group of the move to beat (rows of legal._EXT_BEATS as lists)
_CAND_PTR = np.concatenate([[0], np.cumsum(_EXT_BEATS.sum(axis=1))]).astype(np.int64)
_CAND_GROUP = np.nonzero(_EXT_BEATS)[1].astype(np.int64)
_CAND_BODY = _EXT_BODY[_CAND_GROUP]


def response_ids_batch(hands: np.ndarray, last_moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``legal_ids_batch`` for hands that all respond (every ``last_moves`` != 0); no validation.

    A response can only be one of the ~20 body groups that beat the move on the table, so
    only those are tested instead of all ~300: about 1.6x faster on batches of responses.
    """
    B = hands.shape[0]
    if B == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    not_held = ~np.bitwise_or.reduce(_THERMO_FLAT.take(_THERMO_OFF + hands), axis=1)  # moves.thermometer
    h = MOVE_GROUP[last_moves]
    start = _CAND_PTR[h]
    n = _CAND_PTR[h + 1] - start
    ends = n.cumsum()
    rows = np.arange(B).repeat(n)
    c = np.arange(int(ends[-1])) + (start - (ends - n)).repeat(n)
    ok = (_CAND_BODY[c] & not_held[rows]) == 0
    b = rows[ok]
    g = _CAND_GROUP[c[ok]]
    # from here on as legal_ids_batch: expand the surviving groups, test every move, then R13
    sizes = _EXT_SIZE[g]
    ends = sizes.cumsum()
    total = int(ends[-1]) if ends.size else 0
    rows = b.repeat(sizes)
    ids = np.arange(total, dtype=np.int64) + (_EXT_START[g] - (ends - sizes)).repeat(sizes)
    ok = (MOVE_BITS[ids] & not_held[rows]) == 0
    bombs = bomb_rank_bits(hands)
    if bombs.any():
        ok &= (FOUR_KICKER_RANKS[ids] & bombs[rows]) == 0
    return rows[ok], ids[ok]


def legal_mask_batch(hands: np.ndarray, last_moves: np.ndarray, out: np.ndarray | None = None,
                     validate: bool = True) -> np.ndarray:
    """(B, NUM_MOVES) boolean masks for B hands and the B moves they must beat (0: lead).

    Pass a reused C-contiguous ``out`` buffer (bool, (B, NUM_MOVES)) in a loop: a fresh
    25 MB array per call at B = 1024 costs more in page faults than the legality itself.
    """
    hands = np.asarray(hands)
    rows, ids = legal_ids_batch(hands, last_moves, validate)
    shape = (hands.shape[0], NUM_MOVES)
    if out is None:
        out = np.zeros(shape, dtype=bool)
    else:
        if out.shape != shape or out.dtype != bool or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous bool array of shape {shape}")
        out[...] = False  # (slice assignment is a memset; ndarray.fill on bool is slower)
    np.put(out.reshape(-1), rows * NUM_MOVES + ids, True)
    return out


def legal_ids(hand: str | np.ndarray, last_move: int | str | None = None) -> np.ndarray:
    """Sorted legal move ids of one hand (0 = pass, present only when responding)."""
    return legal_ids_unchecked(as_counts(hand), _as_last(last_move))


def legal_mask(hand: str | np.ndarray, last_move: int | str | None = None) -> np.ndarray:
    """(NUM_MOVES,) boolean mask of the moves ``hand`` may play against ``last_move``.

    ``last_move`` is a move id, a card string, or ``None``/0/``"pass"`` for a lead.
    """
    mask = np.zeros(NUM_MOVES, dtype=bool)
    np.put(mask, legal_ids(hand, last_move), True)
    return mask


def legal_moves(hand: str, last: str | None = None) -> list[str]:
    """Canonical strings of the legal moves (``"pass"`` first when responding)."""
    return [MOVE_STRINGS[i] for i in legal_ids(hand, last)]


def _as_last(last_move: int | str | None) -> int:
    if last_move is None:
        return PASS
    if isinstance(last_move, str):
        return move_id(last_move)
    try:
        last = as_id(last_move)  # 1.9 is not move 1
    except TypeError:
        raise TypeError(f"the last move is None, a card string or an integer move id, "
                        f"got {type(last_move).__name__} {last_move!r}") from None
    if not 0 <= last < NUM_MOVES:
        raise ValueError(f"last move id {last} out of range [0, {NUM_MOVES})")
    return last


__all__ = ["legal_ids_batch", "response_ids_batch", "legal_mask_batch", "legal_ids", "legal_mask", "legal_moves", "bomb_rank_bits"]
