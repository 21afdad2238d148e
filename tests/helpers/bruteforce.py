"""An independent, deliberately plain reference for the rules core.

Written from ``/work/shared/RULINGS.md`` only.  It must not import
``ddz_env.moves`` or ``ddz_env.legal`` (the code under test); it only borrows
the card-string helpers of ``ddz_env.cards``.

* ``classify_brute(counts)`` looks at a multiset of cards and decides, by
  direct rule logic (R2, R9-R13, move level), which move it is.  It collects
  *every* reading of the cards and insists there is at most one (our rulings
  make every set of cards a single, unambiguous move, R11).
* ``all_moves_brute()`` is the set of every multiset ``classify_brute``
  accepts, found by filtering a generous superset of candidates.
* ``legal_brute(hand, last)`` is "every sub-multiset of the hand that is a
  move", i.e. every accepted multiset that fits in the hand, then R8 (pass),
  R13 (hand-level kicker restriction for four-with-two) and R14-R16 (beating).
* ``legal_brute_exhaustive(hand, last)`` is the same thing computed the
  slowest possible way (``itertools.product`` over the hand's counts, then
  ``classify_brute``) -- only for small hands; the tests use it to check that
  ``legal_brute``'s shortcut through ``all_moves_brute`` loses nothing.

Types are plain ints numbered as in the project's ``MoveType`` enum.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from ddz_env.cards import RANKS, parse_cards, to_string

# --- move types (numbering of the public MoveType enum)
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

TYPE_NAMES = {
    PASS: "PASS", SINGLE: "SINGLE", PAIR: "PAIR", TRIO: "TRIO", TRIO_SINGLE: "TRIO_SINGLE",
    TRIO_PAIR: "TRIO_PAIR", STRAIGHT: "STRAIGHT", PAIR_CHAIN: "PAIR_CHAIN", AIRPLANE: "AIRPLANE",
    AIRPLANE_SINGLES: "AIRPLANE_SINGLES", AIRPLANE_PAIRS: "AIRPLANE_PAIRS",
    FOUR_TWO_SINGLES: "FOUR_TWO_SINGLES", FOUR_TWO_PAIRS: "FOUR_TWO_PAIRS", BOMB: "BOMB", ROCKET: "ROCKET",
}

# --- ranks (R1): index into "3456789TJQKA2BR"
ACE = RANKS.index("A")      # 11: highest rank a chain may use (R9)
TWO = RANKS.index("2")      # 12
BLACK = RANKS.index("B")    # 13
RED = RANKS.index("R")      # 14
NUM_RANKS = 15
#: the single 54-card deck: four of each of 3..2, one of each joker (R1, R2)
DECK = (4,) * 13 + (1, 1)
#: no hand ever holds more than 20 cards (R1, R7), so no longer move can be played
MAX_MOVE_CARDS = 20

STRING_PASS = "pass"


def _as_tuple(counts) -> tuple[int, ...]:
    if isinstance(counts, str):
        counts = parse_cards(counts)
    t = tuple(int(x) for x in counts)
    assert len(t) == NUM_RANKS, t
    assert all(0 <= x <= cap for x, cap in zip(t, DECK)), f"not cards of one deck: {t}"
    return t


# ---------------------------------------------------------------------------
# move level: what is this set of cards?
# ---------------------------------------------------------------------------

def interpretations(counts) -> list[tuple[int, int, int]]:
    """Every reading ``(type, chain length, lowest body rank)`` of the cards under R2, R9-R13."""
    c = _as_tuple(counts)
    n = sum(c)
    out: list[tuple[int, int, int]] = []
    if n == 0 or n > MAX_MOVE_CARDS:
        return out
    present = [r for r in range(NUM_RANKS) if c[r] > 0]

    # R2: the two jokers together are the rocket
    if n == 2 and c[BLACK] == 1 and c[RED] == 1:
        out.append((ROCKET, 1, BLACK))

    # single
    if n == 1:
        out.append((SINGLE, 1, present[0]))

    # pair / trio / bomb: 2, 3 or 4 cards of one rank (jokers can never be two of a rank)
    if len(present) == 1 and present[0] < BLACK:
        r = present[0]
        if c[r] == 2:
            out.append((PAIR, 1, r))
        if c[r] == 3:
            out.append((TRIO, 1, r))
        if c[r] == 4:
            out.append((BOMB, 1, r))

    # R10: trio + single of another rank (a joker is fine), trio + pair of another rank
    if len(present) == 2:
        for r, o in (present, present[::-1]):
            if c[r] == 3 and c[o] == 1:
                out.append((TRIO_SINGLE, 1, r))
            if c[r] == 3 and c[o] == 2:
                out.append((TRIO_PAIR, 1, r))

    # R9: chains -- consecutive ranks, all within 3..A, every rank the same count
    if present and present[-1] - present[0] + 1 == len(present) and present[-1] <= ACE:
        length = len(present)
        per_rank = {c[r] for r in present}
        if per_rank == {1} and length >= 5:
            out.append((STRAIGHT, length, present[0]))
        if per_rank == {2} and length >= 3:
            out.append((PAIR_CHAIN, length, present[0]))
        if per_rank == {3} and length >= 2:
            out.append((AIRPLANE, length, present[0]))

    # R11, R12: airplane body (>= 2 consecutive trios within 3..A) plus wings
    has_trio = [c[r] >= 3 for r in range(ACE + 1)]  # ranks 3..A holding at least three cards
    for length in range(2, sum(has_trio) + 1):
        for low in range(0, ACE - length + 2):
            body = range(low, low + length)
            assert body[-1] <= ACE
            if not all(has_trio[low:low + length]):
                continue
            wings = list(c)
            for r in body:
                wings[r] -= 3
            if any(wings[r] > 0 for r in body):
                continue  # R11/R12: no wing may be of a body rank
            n_wings = sum(wings)
            # R11: n single wings; two may share a rank, three may not (so never a whole four);
            # never both jokers
            if (n_wings == length
                    and all(w <= 2 for w in wings)
                    and not (wings[BLACK] == 1 and wings[RED] == 1)):
                out.append((AIRPLANE_SINGLES, length, low))
            # R12: n pairs of n different ranks, no jokers
            if (n_wings == 2 * length
                    and all(w in (0, 2) for w in wings)
                    and sum(1 for w in wings if w == 2) == length
                    and wings[BLACK] == 0 and wings[RED] == 0):
                out.append((AIRPLANE_PAIRS, length, low))

    # R13: four + two singles (may share a rank, never the two jokers);
    #      four + two pairs (two pairs of different ranks)
    for r in range(13):
        if c[r] != 4:
            continue
        rest = list(c)
        rest[r] = 0
        if sum(rest) == 2 and not (rest[BLACK] == 1 and rest[RED] == 1):
            out.append((FOUR_TWO_SINGLES, 1, r))
        if sum(rest) == 4 and all(x in (0, 2) for x in rest) and sum(1 for x in rest if x == 2) == 2:
            out.append((FOUR_TWO_PAIRS, 1, r))
    return out


def classify_brute(counts):
    """``(type, length, main_rank)`` of the move made of exactly these cards, or ``None``.

    ``counts`` is a (15,) count vector (or a card string).  ``length`` is the
    chain length for chains / airplanes and 1 otherwise; ``main_rank`` is the
    lowest body rank (the rocket's is the black joker).
    """
    found = interpretations(counts)
    if len(found) > 1:
        raise AssertionError(f"cards {to_string(np.array(_as_tuple(counts)))!r} read as several moves: {found}")
    return found[0] if found else None


def body_counts(move_type: int, length: int, rank: int) -> tuple[int, ...]:
    """The body (the part compared under R16) of a move; the rest are kickers / wings."""
    body = [0] * NUM_RANKS
    if move_type == ROCKET:
        body[BLACK] = body[RED] = 1
    elif move_type in (SINGLE, PAIR, TRIO, BOMB):
        body[rank] = {SINGLE: 1, PAIR: 2, TRIO: 3, BOMB: 4}[move_type]
    elif move_type in (TRIO_SINGLE, TRIO_PAIR):
        body[rank] = 3
    elif move_type in (FOUR_TWO_SINGLES, FOUR_TWO_PAIRS):
        body[rank] = 4
    elif move_type in (STRAIGHT, PAIR_CHAIN, AIRPLANE, AIRPLANE_SINGLES, AIRPLANE_PAIRS):
        width = {STRAIGHT: 1, PAIR_CHAIN: 2}.get(move_type, 3)
        for r in range(rank, rank + length):
            body[r] = width
    else:
        raise ValueError(move_type)
    return tuple(body)


# ---------------------------------------------------------------------------
# the universe of moves
# ---------------------------------------------------------------------------

def _multisets(size: int, caps) -> "itertools.Iterator[tuple[int, ...]]":
    """Every count vector with the given total and 0 <= count[r] <= caps[r]."""
    caps = tuple(caps)

    def rec(i: int, left: int):
        if i == len(caps):
            if left == 0:
                yield ()
            return
        for k in range(min(caps[i], left) + 1):
            for tail in rec(i + 1, left - k):
                yield (k,) + tail

    yield from rec(0, size)


def _add(a, b) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b))


def candidate_multisets():
    """A generous superset of every move (every multiset R9-R13 could accept), with many non-moves.

    * every multiset of at most 6 cards (singles .. four + two singles, rocket, and their near misses);
    * every set of cards with the same count (1, 2, 3) on each rank present (straights, pair
      chains, airplanes and all their broken variants, incl. 2s and jokers);
    * a four of any rank plus ANY 4 other cards (four + two pairs);
    * three of each of 2..5 consecutive ranks of 3..A plus ANY n cards of any rank, body ranks
      included (airplane + single wings);
    * the same bodies plus any n pairs (pairs of any of 3..2, incl. doubled pairs = a four) and,
      for n = 2, plus ANY 4 cards (airplane + pair wings).
    """
    for size in range(1, 7):
        yield from _multisets(size, DECK)
    for width in (1, 2, 3):
        for mask in range(1, 1 << NUM_RANKS):
            c = tuple(width if (mask >> r) & 1 else 0 for r in range(NUM_RANKS))
            if all(x <= cap for x, cap in zip(c, DECK)) and sum(c) <= MAX_MOVE_CARDS:
                yield c
    for r in range(13):
        four = tuple(4 if i == r else 0 for i in range(NUM_RANKS))
        caps = tuple(cap - x for cap, x in zip(DECK, four))
        for rest in _multisets(4, caps):
            yield _add(four, rest)
    for length in range(2, 6):
        for low in range(0, ACE - length + 2):
            body = tuple(3 if low <= i < low + length else 0 for i in range(NUM_RANKS))
            caps = tuple(cap - x for cap, x in zip(DECK, body))
            for rest in _multisets(length, caps):
                yield _add(body, rest)
            if 5 * length <= MAX_MOVE_CARDS:
                pair_caps = tuple(cap // 2 for cap in caps)
                for pairs in _multisets(length, pair_caps):
                    yield _add(body, tuple(2 * p for p in pairs))
                if length == 2:
                    for rest in _multisets(4, caps):
                        yield _add(body, rest)


@functools.lru_cache(maxsize=None)
def all_moves_brute() -> dict[str, tuple[tuple[int, ...], tuple[int, int, int]]]:
    """canonical string -> (counts, (type, length, main_rank)) for every multiset classify_brute accepts."""
    moves: dict[str, tuple[tuple[int, ...], tuple[int, int, int]]] = {}
    seen: set[tuple[int, ...]] = set()
    for c in candidate_multisets():
        if c in seen:
            continue
        seen.add(c)
        info = classify_brute(c)
        if info is not None:
            moves[to_string(np.array(c))] = (c, info)
    return moves


@functools.lru_cache(maxsize=None)
def _universe():
    items = sorted(all_moves_brute().items())
    strings = [s for s, _ in items]
    counts = np.array([c for _, (c, _) in items], dtype=np.int8)
    infos = [info for _, (_, info) in items]
    return strings, counts, infos


# ---------------------------------------------------------------------------
# hand level: what may this hand play now?
# ---------------------------------------------------------------------------

def beats_brute(move: tuple[int, int, int], move_cards: int, last: tuple[int, int, int], last_cards: int) -> bool:
    """R8, R14-R16: may ``move`` (type, length, rank; ``move_cards`` cards) answer ``last``?"""
    m_type, m_len, m_rank = move
    l_type, l_len, l_rank = last
    if l_type == ROCKET:
        return False                      # R15: nothing beats the rocket
    if m_type == ROCKET:
        return True                       # R15: the rocket beats everything else
    if m_type == BOMB:
        if l_type == BOMB:
            return m_rank > l_rank        # R15: a higher bomb beats a lower one
        return True                       # R14, R15: a bomb beats any ordinary move (four-with-two too)
    if l_type == BOMB:
        return False                      # only a higher bomb or the rocket answers a bomb
    # R8, R16: same type, same card count, same chain length, higher main rank; kickers never matter
    return m_type == l_type and m_len == l_len and move_cards == last_cards and m_rank > l_rank


def _kicker_ok(hand: tuple[int, ...], counts: tuple[int, ...], info: tuple[int, int, int]) -> bool:
    """R13 hand level: a four-with-two takes no kicker from another whole bomb or from the rocket held."""
    m_type, m_len, m_rank = info
    if m_type not in (FOUR_TWO_SINGLES, FOUR_TWO_PAIRS):
        return True  # R11: airplanes are only barred at move level (whole four / both jokers)
    body = body_counts(m_type, m_len, m_rank)
    kickers = [c - b for c, b in zip(counts, body)]
    for r in range(13):
        if kickers[r] > 0 and hand[r] == 4:
            return False
    if hand[BLACK] == 1 and hand[RED] == 1 and (kickers[BLACK] > 0 or kickers[RED] > 0):
        return False
    return True


def _last_info(last):
    if last is None:
        return None
    lc = _as_tuple(last)
    info = classify_brute(lc)
    if info is None:
        raise ValueError(f"last move {to_string(np.array(lc))!r} is no move")
    return info, sum(lc)


def legal_brute(hand_counts, last_counts_or_none=None) -> set[str]:
    """Canonical strings of everything ``hand`` may play; ``"pass"`` for the pass.

    ``last_counts_or_none`` is the move on the table (counts or card string), ``None`` on a lead.
    """
    hand = _as_tuple(hand_counts)
    last = _last_info(last_counts_or_none)
    strings, counts, infos = _universe()
    fits = np.nonzero((counts <= np.array(hand, dtype=np.int8)).all(axis=1))[0]
    out: set[str] = set()
    if last is not None:
        out.add(STRING_PASS)             # R8: a responder may always pass; a leader never
    for i in fits:
        c = tuple(int(x) for x in counts[i])
        info = infos[i]
        if not _kicker_ok(hand, c, info):
            continue
        if last is not None and not beats_brute(info, sum(c), last[0], last[1]):
            continue
        out.add(strings[i])
    return out


def legal_brute_exhaustive(hand_counts, last_counts_or_none=None) -> set[str]:
    """``legal_brute`` computed by classifying literally every sub-multiset of the hand (small hands only)."""
    hand = _as_tuple(hand_counts)
    last = _last_info(last_counts_or_none)
    n_subsets = 1
    for x in hand:
        n_subsets *= x + 1
    assert n_subsets <= 200_000, "hand too large for the exhaustive reference"
    out: set[str] = set()
    if last is not None:
        out.add(STRING_PASS)
    for sub in itertools.product(*(range(x + 1) for x in hand)):
        info = classify_brute(sub)
        if info is None or not _kicker_ok(hand, sub, info):
            continue
        if last is not None and not beats_brute(info, sum(sub), last[0], last[1]):
            continue
        out.add(to_string(np.array(sub)))
    return out


def cards(text: str) -> tuple[int, ...]:
    """Shorthand: card string -> count tuple."""
    return _as_tuple(parse_cards(text))
