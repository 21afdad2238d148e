"""Ranks, card strings <-> count vectors, the deck and seeded dealing.

Inside the package a hand is a length-15 vector of counts, one entry per rank
(R1). Suits only give each of the 54 cards an identity for shuffling (R1: they
never matter for play), so a card id is ``4 * rank + suit`` for 3..2 and
52 / 53 for the black / red joker.
"""
from __future__ import annotations

import operator

import numpy as np

#: the players at the table (R1); the one definition (``rules``, ``game`` and ``vector`` read it from here)
NUM_SEATS = 3
RANKS = "3456789TJQKA2BR"
NUM_RANKS = 15
BLACK_JOKER = 13
RED_JOKER = 14
#: the highest rank allowed in a chain (A); chains never hold a 2 or a joker (R9)
ACE = 11
TWO = 12
#: how many cards of each rank the single 54-card deck holds (R1, R2)
MAX_COUNTS = np.array([4] * 13 + [1, 1], dtype=np.int8)
DECK_SIZE = 54
HAND_SIZE = 17
BOTTOM_SIZE = 3
#: the most cards a hand holds: the landlord's 17 and the bottom (R7)
MAX_HAND = HAND_SIZE + BOTTOM_SIZE  # 20

_RANK_INDEX = {ch: i for i, ch in enumerate(RANKS)}
_RANK_INDEX["t"] = _RANK_INDEX["T"]
_RANK_INDEX["j"] = _RANK_INDEX["J"]
_RANK_INDEX["q"] = _RANK_INDEX["Q"]
_RANK_INDEX["k"] = _RANK_INDEX["K"]
_RANK_INDEX["a"] = _RANK_INDEX["A"]
_RANK_INDEX["b"] = _RANK_INDEX["B"]
_RANK_INDEX["r"] = _RANK_INDEX["R"]

#: rank of each of the 54 card ids
CARD_RANK = np.array([i // 4 for i in range(52)] + [BLACK_JOKER, RED_JOKER], dtype=np.int64)
_SUITS = "shdc"  # spades, hearts, diamonds, clubs: for rendering only


def parse_cards(text: str) -> np.ndarray:
    """Parse a rank string such as ``"33344456"`` or ``"BR"`` into counts.

    Any order is accepted; ``t``/``10`` may stand for T and letters may be lower
    case. Spaces are ignored. Unknown characters and impossible counts (five
    7s, two red jokers) raise ``ValueError`` naming the input.
    """
    if not isinstance(text, str):
        raise TypeError(f"card string expected, got {type(text).__name__}: {text!r}")
    counts = np.zeros(NUM_RANKS, dtype=np.int8)
    s = text.replace(" ", "").replace("10", "T")
    for ch in s:
        idx = _RANK_INDEX.get(ch)
        if idx is None:
            raise ValueError(
                f"bad card string {text!r}: unknown rank {ch!r} (ranks are {RANKS}, T = 10)"
            )
        counts[idx] += 1
    over = np.nonzero(counts > MAX_COUNTS)[0]
    if over.size:
        r = over[0]
        raise ValueError(
            f"bad card string {text!r}: {int(counts[r])} cards of rank {RANKS[r]!r}, "
            f"the deck holds {int(MAX_COUNTS[r])}"
        )
    return counts


def to_string(counts: np.ndarray) -> str:
    """Canonical rank string of a count vector, sorted low to high.

    The counts are validated as :func:`as_counts` does (``ValueError`` for 2.9 threes, NaN,
    negative or impossible counts; ``TypeError`` for a non-numeric vector).
    """
    return counts_string(as_counts(counts))


def counts_string(counts: np.ndarray) -> str:
    """:func:`to_string` of counts already validated (the package's own arrays: no check, for speed)."""
    return "".join(RANKS[r] * int(c) for r, c in enumerate(counts))


def check_integral(counts: np.ndarray, what: str = "card counts") -> None:
    """Raise unless the array ``counts`` holds whole numbers: ``TypeError`` for a non-numeric dtype,
    ``ValueError`` naming the first fractional, NaN or infinite entry (a count is never truncated).

    Integer and bool arrays pass at the cost of a dtype check; only float arrays are scanned.
    """
    kind = counts.dtype.kind
    if kind in "iub":
        return
    if kind != "f":
        raise TypeError(f"{what} must be integers, got an array of dtype {counts.dtype}: {counts.tolist()!r}")
    bad = ~(np.isfinite(counts) & (counts == np.trunc(counts)))
    if bad.any():
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        where = f"rank {RANKS[i[0]]!r}" if counts.shape == (NUM_RANKS,) else f"index {i}"
        raise ValueError(f"{what} must be whole numbers, got {counts[i].item()!r} at {where} of {counts.tolist()}")


def as_counts(hand: str | np.ndarray) -> np.ndarray:
    """Accept either a card string or a count vector; return validated counts (int8).

    A count vector is (15,) whole numbers within the deck (0..4, jokers 0..1): integer arrays,
    or floats holding whole numbers; a fractional, NaN or infinite count raises ``ValueError``.
    """
    if isinstance(hand, str):
        return parse_cards(hand)
    counts = np.asarray(hand)
    if counts.shape != (NUM_RANKS,):
        shown = f"{hand!r}" if counts.size <= NUM_RANKS else f"shape {counts.shape}"
        raise ValueError(f"a hand is a card string or a ({NUM_RANKS},) count vector, got {shown} "
                         f"(shape {counts.shape})")
    if counts.dtype.kind not in "iub":  # (the usual integer vector pays only this check)
        check_integral(counts, "card counts")
    if (counts < 0).any() or (counts > MAX_COUNTS).any():
        raise ValueError(f"impossible card counts {counts.tolist()} (each rank 0..4, each joker 0..1)")
    return counts.astype(np.int8)


def shuffle_deck(rng: np.random.Generator) -> np.ndarray:
    """A random permutation of the 54 card ids."""
    return rng.permutation(DECK_SIZE)


def deal(rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Deal 17/17/17 + 3 bottom cards (R1). Returns ``(hands (3, 15), bottom (15,))``."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    deck = shuffle_deck(rng)
    ranks = CARD_RANK[deck]
    hands = np.zeros((NUM_SEATS, NUM_RANKS), dtype=np.int8)
    for seat in range(NUM_SEATS):
        hands[seat] = np.bincount(ranks[seat * HAND_SIZE:(seat + 1) * HAND_SIZE], minlength=NUM_RANKS)
    bottom = np.bincount(ranks[NUM_SEATS * HAND_SIZE:], minlength=NUM_RANKS).astype(np.int8)
    return hands, bottom


def as_id(value, what: str = "id") -> int:
    """``value`` as a Python int, if it is an integer: an ``int``, a numpy integer scalar or a
    size-1 integer array (``np.array([5])``, as single-agent libraries pass actions).

    Anything else (a float, even ``3.0``; a string; a list; ``None``) raises ``TypeError`` naming
    it, so an id is never truncated. The one place the package turns ids (cards, moves, actions,
    slots, seats) into ints; it checks no range. Costs one ``operator.index`` for an int.
    """
    try:
        return operator.index(value)
    except TypeError:
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iu":
            return int(value.reshape(-1)[0])
    raise TypeError(f"{what} must be an integer (an int, a numpy integer or a size-1 integer array), "
                    f"got {type(value).__name__} {value!r}")


def card_name(card_id: int) -> str:
    """Human name of one card id (0..53), with suit (``"Ts"``, ``"B"``)."""
    card_id = as_id(card_id, "card id")  # TypeError for a float: never truncated
    if not 0 <= card_id < DECK_SIZE:  # (a negative id would wrap around the table)
        raise ValueError(f"card id {card_id} out of range [0, {DECK_SIZE})")
    r = int(CARD_RANK[card_id])
    if r >= BLACK_JOKER:
        return RANKS[r]
    return RANKS[r] + _SUITS[card_id % 4]
