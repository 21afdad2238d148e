"""The move table: every legal move of R9-R13 exactly once, built at import.

Ids are stable and ordered by (type, chain length, main rank, kickers), so all
moves sharing a *body* (type, length, main rank) form one contiguous *group*.
Whether a move beats another depends only on the groups (R14-R16: kickers never
matter), which lets ``legal.py`` answer with a (groups x groups) table.

Id 0 is the pass. Arrays (index = move id):

| array | shape, dtype | content |
|---|---|---|
| `MOVE_COUNTS` | (N, 15) int8 | cards of each rank the move uses |
| `MOVE_TYPE` | (N,) int8 | a `MoveType` |
| `MOVE_LENGTH` | (N,) int8 | chain length (distinct body ranks); 1 for non-chains |
| `MOVE_RANK` | (N,) int8 | main rank: lowest body rank (-1 for pass) |
| `MOVE_KICKERS` | (N, 15) int8 | the kicker (wing) cards of each rank |
| `MOVE_NCARDS` | (N,) int8 | total cards |
| `MOVE_BITS` | (N,) uint64 | thermometer code of `MOVE_COUNTS` (see `thermometer`) |
| `MOVE_GROUP` | (N,) int32 | index of the move's body group |
"""
from __future__ import annotations

import itertools
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from .cards import (ACE, BLACK_JOKER, MAX_COUNTS, MAX_HAND, NUM_RANKS, RANKS, RED_JOKER, counts_string, as_counts, as_id,
                    parse_cards)


class MoveType(IntEnum):
    PASS = 0
    SINGLE = 1
    PAIR = 2
    TRIO = 3
    TRIO_SINGLE = 4
    TRIO_PAIR = 5
    STRAIGHT = 6
    PAIR_CHAIN = 7
    AIRPLANE = 8
    AIRPLANE_SINGLES = 9
    AIRPLANE_PAIRS = 10
    FOUR_TWO_SINGLES = 11
    FOUR_TWO_PAIRS = 12
    BOMB = 13
    ROCKET = 14


NUM_MOVE_TYPES = len(MoveType)
PASS = 0
PASS_STRING = "pass"
#: types whose kickers may not come from another whole bomb / the rocket held in hand (R13)
FOUR_WITH_TWO = (MoveType.FOUR_TWO_SINGLES, MoveType.FOUR_TWO_PAIRS)

# --- thermometer codes: rank r with c cards lights bits 4r .. 4r+c-1 (jokers: bit 52, 53)
THERMO = np.zeros((NUM_RANKS, 5), dtype=np.uint64)
for _r in range(NUM_RANKS):
    for _c in range(int(MAX_COUNTS[_r]) + 1):
        THERMO[_r, _c] = np.uint64(((1 << _c) - 1) << (4 * _r if _r < BLACK_JOKER else 52 + _r - BLACK_JOKER))


def thermometer(counts: np.ndarray) -> np.ndarray:
    """uint64 code of count vectors ``(..., 15)``: ``a`` fits in ``b`` iff ``a & ~b == 0``."""
    counts = np.asarray(counts)
    codes = THERMO[np.arange(NUM_RANKS), counts]
    return np.bitwise_or.reduce(codes, axis=-1)


def _build() -> dict:
    rows: list[tuple[int, int, int, dict[int, int], dict[int, int]]] = []  # type, length, rank, body, kickers

    def add(t: MoveType, length: int, rank: int, body: dict[int, int], kick: dict[int, int] | None = None):
        rows.append((int(t), length, rank, body, kick or {}))

    normal = range(13)  # 3..2
    for r in range(NUM_RANKS):
        add(MoveType.SINGLE, 1, r, {r: 1})
    for r in normal:
        add(MoveType.PAIR, 1, r, {r: 2})
    for r in normal:
        add(MoveType.TRIO, 1, r, {r: 3})
    for r in normal:
        for k in range(NUM_RANKS):
            if k != r:
                add(MoveType.TRIO_SINGLE, 1, r, {r: 3}, {k: 1})
    for r in normal:
        for k in normal:
            if k != r:
                add(MoveType.TRIO_PAIR, 1, r, {r: 3}, {k: 2})

    def chains(width: int, min_len: int):
        max_len = min(12, MAX_HAND // width)
        for n in range(min_len, max_len + 1):
            for r in range(0, ACE - n + 2):
                yield n, r

    for n, r in chains(1, 5):
        add(MoveType.STRAIGHT, n, r, {r + i: 1 for i in range(n)})
    for n, r in chains(2, 3):
        add(MoveType.PAIR_CHAIN, n, r, {r + i: 2 for i in range(n)})
    for n, r in chains(3, 2):
        add(MoveType.AIRPLANE, n, r, {r + i: 3 for i in range(n)})
    # R11: n single wings, not a body rank, at most two of a rank, never both jokers
    for n, r in chains(4, 2):
        body = {r + i: 3 for i in range(n)}
        free = [k for k in range(NUM_RANKS) if k not in body]
        for combo in itertools.combinations_with_replacement(free, n):
            kick: dict[int, int] = {}
            for k in combo:
                kick[k] = kick.get(k, 0) + 1
            if any(c > min(2, int(MAX_COUNTS[k])) for k, c in kick.items()):
                continue
            if BLACK_JOKER in kick and RED_JOKER in kick:
                continue
            add(MoveType.AIRPLANE_SINGLES, n, r, body, kick)
    # R12: n pairs of n different ranks, no body rank, no jokers
    for n, r in chains(5, 2):
        body = {r + i: 3 for i in range(n)}
        free = [k for k in range(13) if k not in body]
        for combo in itertools.combinations(free, n):
            add(MoveType.AIRPLANE_PAIRS, n, r, body, {k: 2 for k in combo})
    # R13: four + two singles (may share a rank, never both jokers); four + two pairs of different ranks
    for r in normal:
        free = [k for k in range(NUM_RANKS) if k != r]
        for a, b in itertools.combinations_with_replacement(free, 2):
            if a == b and a >= BLACK_JOKER:
                continue
            if a == BLACK_JOKER and b == RED_JOKER:
                continue
            kick = {a: 1} if a != b else {a: 2}
            if a != b:
                kick[b] = 1
            add(MoveType.FOUR_TWO_SINGLES, 1, r, {r: 4}, kick)
    for r in normal:
        free = [k for k in normal if k != r]
        for a, b in itertools.combinations(free, 2):
            add(MoveType.FOUR_TWO_PAIRS, 1, r, {r: 4}, {a: 2, b: 2})
    for r in normal:
        add(MoveType.BOMB, 1, r, {r: 4})
    add(MoveType.ROCKET, 1, BLACK_JOKER, {BLACK_JOKER: 1, RED_JOKER: 1})

    n_moves = len(rows) + 1
    counts = np.zeros((n_moves, NUM_RANKS), dtype=np.int8)
    kickers = np.zeros((n_moves, NUM_RANKS), dtype=np.int8)
    mtype = np.zeros(n_moves, dtype=np.int8)
    length = np.zeros(n_moves, dtype=np.int8)
    rank = np.full(n_moves, -1, dtype=np.int8)
    for i, (t, n, r, body, kick) in enumerate(rows, start=1):
        mtype[i], length[i], rank[i] = t, n, r
        for k, c in body.items():
            counts[i, k] += c
        for k, c in kick.items():
            counts[i, k] += c
            kickers[i, k] += c
    return dict(counts=counts, kickers=kickers, type=mtype, length=length, rank=rank)


_T = _build()
MOVE_COUNTS: np.ndarray = _T["counts"]
MOVE_KICKERS: np.ndarray = _T["kickers"]
MOVE_TYPE: np.ndarray = _T["type"]
MOVE_LENGTH: np.ndarray = _T["length"]
MOVE_RANK: np.ndarray = _T["rank"]
MOVE_NCARDS: np.ndarray = MOVE_COUNTS.sum(axis=1).astype(np.int8)
NUM_MOVES: int = len(MOVE_TYPE)  # 24,640: pass + 24,639 moves
MOVE_BITS: np.ndarray = thermometer(MOVE_COUNTS)
#: the moves that double the stake when played (R19): the 13 bombs, and the rocket
IS_BOMB: np.ndarray = MOVE_TYPE == MoveType.BOMB
IS_ROCKET: np.ndarray = MOVE_TYPE == MoveType.ROCKET
#: the bomb test: a bomb or the rocket, the moves that beat any ordinary move (R15) and double the stake (R18)
IS_BOMB_OR_ROCKET: np.ndarray = IS_BOMB | IS_ROCKET
for _a in (MOVE_COUNTS, MOVE_KICKERS, MOVE_TYPE, MOVE_LENGTH, MOVE_RANK, MOVE_NCARDS, MOVE_BITS, IS_BOMB, IS_ROCKET,
           IS_BOMB_OR_ROCKET):
    _a.flags.writeable = False

MOVE_STRINGS: tuple[str, ...] = (PASS_STRING,) + tuple(counts_string(c) for c in MOVE_COUNTS[1:])
_MOVE_INDEX: dict[str, int] = {s: i for i, s in enumerate(MOVE_STRINGS)}
if len(_MOVE_INDEX) != NUM_MOVES:  # a set of cards is never two different moves
    raise AssertionError("move table holds the same cards twice")
#: a move's cards (its int8 counts as bytes) -> its id; no cards -> PASS (R11: a set of cards is one move)
_MOVE_OF_COUNTS: dict[bytes, int] = {MOVE_COUNTS[m].tobytes(): m for m in range(NUM_MOVES)}


def move_of_counts(counts) -> int:
    """The id of the move made of exactly these cards, a (15,) count vector: ``PASS`` for no cards, -1 for
    cards that are no move. The one lookup of a move by its cards (the planes carry cards, not ids: the
    readers, the rule agent's planner and the belief sampler ask it). A dict lookup, about 1 us."""
    return _MOVE_OF_COUNTS.get(np.asarray(counts, dtype=np.int8).tobytes(), -1)

#: bitmask (bit r = rank r) of the kicker ranks of four-with-two moves; 0 for every other move.
#: A four-with-two may not take a kicker from another whole bomb or the rocket in hand (R13).
FOUR_KICKER_RANKS: np.ndarray = np.where(
    np.isin(MOVE_TYPE, FOUR_WITH_TWO), ((MOVE_KICKERS > 0) * (1 << np.arange(NUM_RANKS))).sum(axis=1), 0
).astype(np.int32)

# --- body groups: contiguous id ranges sharing (type, length, rank)
_key = MOVE_TYPE.astype(np.int64) * 10_000 + MOVE_LENGTH.astype(np.int64) * 100 + MOVE_RANK.astype(np.int64)
_starts = np.concatenate([[1], np.nonzero(np.diff(_key[1:]))[0] + 2])
GROUP_START: np.ndarray = _starts.astype(np.int64)
GROUP_SIZE: np.ndarray = np.diff(np.append(_starts, NUM_MOVES)).astype(np.int64)
NUM_GROUPS: int = len(GROUP_START)
GROUP_TYPE = MOVE_TYPE[GROUP_START]
GROUP_LENGTH = MOVE_LENGTH[GROUP_START]
GROUP_RANK = MOVE_RANK[GROUP_START]
MOVE_GROUP = np.full(NUM_MOVES, NUM_GROUPS, dtype=np.int32)  # pass -> NUM_GROUPS ("nothing to beat")
MOVE_GROUP[1:] = np.repeat(np.arange(NUM_GROUPS, dtype=np.int32), GROUP_SIZE)
#: thermometer code of each group's body (the move without its kickers)
GROUP_BODY_BITS: np.ndarray = thermometer(MOVE_COUNTS[GROUP_START] - MOVE_KICKERS[GROUP_START])
if not (np.all(np.diff(_key[1:]) >= 0) and len(np.unique(_key[1:])) == NUM_GROUPS):
    raise AssertionError("move ids are not contiguous by body group")


def _beats_table() -> np.ndarray:
    """``BEATS[h, g]``: a move of group g may answer a move of group h (R8, R14-R16).

    Row ``NUM_GROUPS`` is the lead (nothing to beat): every group may be led.
    """
    t, n, r = GROUP_TYPE[:, None], GROUP_LENGTH[:, None], GROUP_RANK[:, None]
    t2, n2, r2 = GROUP_TYPE[None, :], GROUP_LENGTH[None, :], GROUP_RANK[None, :]
    ordinary = (t != MoveType.BOMB) & (t != MoveType.ROCKET)
    same = ordinary & (t2 == t) & (n2 == n) & (r2 > r)
    bomb_on_ordinary = ordinary & (t2 == MoveType.BOMB)
    higher_bomb = (t == MoveType.BOMB) & (t2 == MoveType.BOMB) & (r2 > r)
    rocket = (t != MoveType.ROCKET) & (t2 == MoveType.ROCKET)
    beats = same | bomb_on_ordinary | higher_bomb | rocket
    return np.vstack([beats, np.ones((1, NUM_GROUPS), dtype=bool)])


BEATS: np.ndarray = _beats_table()
BEATS.flags.writeable = False


class MoveInfo(NamedTuple):
    id: int
    type: MoveType
    length: int
    rank: int
    cards: str

    @property
    def rank_name(self) -> str:
        return RANKS[self.rank] if self.rank >= 0 else ""


def move_to_string(move_id: int) -> str:
    """Canonical card string of a move id (``"pass"`` for 0)."""
    m = as_id(move_id, "move id")
    if not 0 <= m < NUM_MOVES:
        raise ValueError(f"move id {m} out of range [0, {NUM_MOVES})")
    return MOVE_STRINGS[m]


def move_id(cards: str | np.ndarray) -> int:
    """Id of the move made of exactly these cards (any order); ``"pass"`` gives 0.

    Raises ``ValueError`` if the cards are no move of R9-R13.
    """
    if isinstance(cards, str) and cards.strip().lower() == PASS_STRING:
        return PASS
    counts = as_counts(cards)
    canon = counts_string(counts)
    mid = _MOVE_INDEX.get(canon)
    if mid is None or mid == PASS:
        shown = cards if isinstance(cards, str) else canon
        raise ValueError(f"{shown!r} is not a legal move (no type of R9-R13 is made of the cards {canon!r})")
    return mid


def classify(cards: str | np.ndarray) -> MoveInfo:
    """Type, chain length and main rank of a set of cards, e.g. ``classify("33344456")``."""
    mid = move_id(cards)
    return MoveInfo(mid, MoveType(int(MOVE_TYPE[mid])), int(MOVE_LENGTH[mid]), int(MOVE_RANK[mid]), MOVE_STRINGS[mid])


def _as_move(move, what: str) -> int:
    """A move id from an id (range-checked), a card string or a count vector."""
    if isinstance(move, (int, np.integer)):
        m = int(move)
    elif isinstance(move, str) or np.ndim(move) > 0:
        return move_id(move)
    else:
        m = as_id(move, what)  # TypeError for a float, None...
    if not 0 <= m < NUM_MOVES:  # (a negative id would wrap around the table)
        raise ValueError(f"{what} {m} out of range [0, {NUM_MOVES})")
    return m


def beats(move: int | str, last: int | str | None) -> bool:
    """Whether ``move`` may answer ``last`` (``None``/pass: a lead, any move goes).

    Each is a move id in [0, NUM_MOVES), a card string or a count vector; anything else
    raises (``ValueError`` for an id out of range, ``TypeError`` for a float id).
    """
    m = _as_move(move, "move id")
    if last is None:
        return m != PASS
    h = _as_move(last, "last move id")
    if m == PASS:
        return h != PASS
    return bool(BEATS[MOVE_GROUP[h], MOVE_GROUP[m]])


__all__ = [
    "MoveType", "MoveInfo", "PASS", "PASS_STRING", "NUM_MOVES", "NUM_GROUPS",
    "MOVE_COUNTS", "MOVE_KICKERS", "MOVE_TYPE", "MOVE_LENGTH", "MOVE_RANK", "MOVE_NCARDS", "MOVE_BITS",
    "MOVE_GROUP", "MOVE_STRINGS", "GROUP_START", "GROUP_SIZE", "GROUP_TYPE", "GROUP_LENGTH", "GROUP_RANK",
    "GROUP_BODY_BITS", "BEATS", "FOUR_KICKER_RANKS", "THERMO", "thermometer", "IS_BOMB", "IS_ROCKET", "IS_BOMB_OR_ROCKET",
    "move_to_string", "move_id", "move_of_counts", "classify", "beats", "parse_cards", "as_id",
]
