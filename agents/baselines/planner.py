"""Split a hand into the fewest moves: the rule agent's plan.

A plan is a tuple of move ids that together use exactly the hand. It keeps every
bomb and the rocket whole, then chooses chains (straights, pair chains, airplanes)
by an exact search, rank by rank from the lowest, and leaves trios, pairs and
singles; trios and airplanes take the lowest loose singles or pairs as kickers
(never a 2 or a joker). Among plans with as many moves it prefers fewer low loose
cards (the ones an opponent beats cheaply).

The search visits a rank at a time: a chain holding rank r either started below r
(already chosen) or starts at r, so choosing the chains that start at each rank
covers every set of chains once. The search memoizes its states; plans are cached
per hand (an LRU of 32k hands): a 20-card hand takes about half a millisecond, a
repeated one nothing.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ddz_env.cards import ACE, BLACK_JOKER, NUM_RANKS, RED_JOKER, TWO
from ddz_env.moves import PASS, move_of_counts

#: a chain of width w (1 straight, 2 pair chain, 3 airplane) needs at least this many ranks
_MIN_LEN = {1: 5, 2: 3, 3: 2}
#: plan cost weight of a loose low single/pair (0 for an A and above): breaks ties between plans
_WEAK = 0.01


class Plan(NamedTuple):
    moves: tuple[int, ...]  # move ids, using every card of the hand once
    cost: float  # number of moves + a small penalty for low loose singles and pairs

    @property
    def n_moves(self) -> int:
        return len(self.moves)


def move_of(counts) -> int:
    """Move id of exactly these cards (a (15,) count vector, ``moves.move_of_counts``); ``KeyError`` if they
    are no move (or no cards)."""
    m = move_of_counts(counts)
    if m <= PASS:
        raise KeyError(f"no move is made of the cards {np.asarray(counts).tolist()}")
    return m


def _weak(rank: int) -> float:
    return max(0, ACE - rank) / ACE


def _leaf(c: tuple, planes: tuple) -> tuple[float, tuple]:
    """Cost and groups of a hand without chains; ``planes`` are the airplane lengths already taken.

    Groups are ``(kind, rank, kickers)``: kind 1/2/3 = single/pair/trio, kickers a tuple of
    (rank, count). The airplanes' wings come first (as ``("plane", i, kickers)`` with i the
    index into ``planes``), then trios take the lowest loose single or pair.
    """
    singles = [r for r in range(NUM_RANKS) if c[r] == 1]
    pairs = [r for r in range(TWO + 1) if c[r] == 2]
    trios = [r for r in range(TWO + 1) if c[r] == 3]
    cheap_s = [r for r in singles if r < TWO]
    cheap_p = [r for r in pairs if r < TWO]
    groups: list[tuple] = []
    for i in sorted(range(len(planes)), key=lambda k: -planes[k]):
        n = planes[i]
        if len(cheap_s) >= n:
            kick, cheap_s = tuple((r, 1) for r in cheap_s[:n]), cheap_s[n:]
        elif len(cheap_p) >= n:
            kick, cheap_p = tuple((r, 2) for r in cheap_p[:n]), cheap_p[n:]
        else:
            continue
        groups.append(("plane", i, kick))
    for t in trios:
        s = cheap_s[0] if cheap_s else None
        p = cheap_p[0] if cheap_p else None
        if s is not None and (p is None or s <= p):
            groups.append((3, t, ((s, 1),)))
            cheap_s = cheap_s[1:]
        elif p is not None:
            groups.append((3, t, ((p, 2),)))
            cheap_p = cheap_p[1:]
        else:
            groups.append((3, t, ()))
    used = {r for g in groups for r, _ in g[2]}
    weak = 0.0
    for r in singles:
        if r not in used:
            groups.append((1, r, ()))
            weak += _weak(r)
    for r in pairs:
        if r not in used:
            groups.append((2, r, ()))
            weak += _weak(r)
    n_moves = sum(1 for g in groups if g[0] != "plane")
    return n_moves + _WEAK * weak, tuple(groups)


def _chains_at(c: tuple, r: int):
    """(width, length) of every chain that starts at rank r and fits in ``c``."""
    for width, min_len in _MIN_LEN.items():
        n = 0
        while r + n <= ACE and c[r + n] >= width:
            n += 1
        for length in range(min_len, n + 1):
            yield width, length


def _search(c: tuple, r: int, planes: tuple, memo: dict) -> tuple[float, tuple]:
    """Cheapest (cost, chains) for ``c`` where chains may start only at ranks >= r.

    ``memo`` is private to one plan: states repeat within a search, rarely across hands.
    """
    while r <= ACE - 1 and c[r] == 0:
        r += 1
    key = (c, r, planes)
    found = memo.get(key)
    if found is not None:
        return found
    if r > ACE - 1:  # no chain fits from here (the shortest, an airplane, needs two ranks up to A)
        best = _leaf(c, planes)[0], ()
    else:
        best = _search(c, r + 1, planes, memo)
        for width, length in _chains_at(c, r):
            c2 = list(c)
            for k in range(r, r + length):
                c2[k] -= width
            p2 = tuple(sorted(planes + (length,))) if width == 3 else planes
            cost, chains = _search(tuple(c2), r, p2, memo)
            cost += 1
            if cost < best[0] - 1e-9:
                best = (cost, ((width, length, r),) + chains)
    memo[key] = best
    return best


@lru_cache(maxsize=1 << 15)
def _plan(counts: tuple) -> Plan:
    c = list(counts)
    moves: list[int] = []
    if c[BLACK_JOKER] and c[RED_JOKER]:
        rocket = np.zeros(NUM_RANKS, dtype=np.int8)
        rocket[BLACK_JOKER] = rocket[RED_JOKER] = 1
        moves.append(move_of(rocket))
        c[BLACK_JOKER] = c[RED_JOKER] = 0
    for r in range(TWO + 1):
        if c[r] == 4:
            bomb = np.zeros(NUM_RANKS, dtype=np.int8)
            bomb[r] = 4
            moves.append(move_of(bomb))
            c[r] = 0
    n_fixed = len(moves)  # bombs and the rocket: one move each
    cost, chains = _search(tuple(c), 0, (), {})
    rest = list(c)
    plane_bodies = []
    for width, length, start in chains:
        body = np.zeros(NUM_RANKS, dtype=np.int8)
        body[start:start + length] = width
        for k in range(start, start + length):
            rest[k] -= width
        if width == 3:
            plane_bodies.append((length, body))
        else:
            moves.append(move_of(body))
    plane_bodies.sort(key=lambda x: x[0])  # the order of the sorted ``planes`` tuple
    planes = tuple(n for n, _ in plane_bodies)
    _, groups = _leaf(tuple(rest), planes)
    winged = set()
    for g in groups:
        kind, rank, kick = g
        if kind == "plane":
            m = plane_bodies[rank][1].copy()
            winged.add(rank)
        else:
            m = np.zeros(NUM_RANKS, dtype=np.int8)
            m[rank] = kind
        for r, n in kick:
            m[r] += n
        moves.append(move_of(m))
    for i, (_, body) in enumerate(plane_bodies):
        if i not in winged:
            moves.append(move_of(body))
    return Plan(tuple(moves), cost + n_fixed)


def plan(hand) -> Plan:
    """The cheapest plan for a hand (a (15,) count vector)."""
    return _plan(tuple(int(x) for x in hand))


def plan_cost(hand) -> float:
    return _plan(tuple(int(x) for x in hand)).cost


__all__ = ["Plan", "plan", "plan_cost", "move_of"]
