"""The exact endgame: a known deal of few cards solved to the end, the landlord against the farmers' team.

When every hand is known (a drawn deal, or a spectator's view) and few cards are left, the rest of the
play phase is a finite two-team game of perfect information: the landlord against the two farmers, who
share one result (R17: a farmer going out wins for both). This module solves it exactly with the
rulebook's score as the value.

Why one number serves every seat: by R19 each farmer scores ``bid * s * 2 ** (bombs + rockets + spring +
anti_spring + d_i + d_i * r)`` and the landlord minus their sum. Everything but ``s`` and the exponents
still to come (the bombs and rockets played from here on, spring, anti-spring: R18) is fixed by the
position, so every seat's score is a positive (landlord) or negative (farmers) multiple of one *unit*
value ``u = ±2 ** (bombs and rockets still to be played + spring + anti-spring)``, ``+`` when the
landlord goes out. The landlord maximises ``u``, both farmers minimise it: a zero-sum game between two
sides, solved by alpha-beta (minimax, fail-soft) with a transposition table. The table's key is what the
rest of the hand depends on: the three hands, the seat on turn, the move to beat, the passes since it
(R8: who made it follows), whether a farmer has played a card (spring, R18) and whether the landlord
has played more than its opening move (anti-spring, R18). The stakes (bid, doubles, redouble, the
bombs already played: R3, R5, R6, R19) only scale the unit into scores, through ``scoring.hand_scores``.

The moves are the project's own: each hand's legal ids against the move to beat come from
``legal.legal_ids_unchecked`` (R8-R16), asked once per (hand, move to beat) and remembered; a hand is
held as one integer (four bits per rank) so playing a move is one subtraction.

| function | what |
|---|---|
| `Position` | the play-phase state the value depends on; ``Position.of_game``, ``Position.of_batch`` |
| `solvable` | whether a state is in the play phase with at most ``max_cards`` cards in the hands |
| `solve` | ``Solution(value, move)``: the exact R19 score of the seat on turn and a best move |
| `solve_scores` | the three seats' exact final scores (R19) under best play of both sides |
| `move_values` | the exact score of the seat on turn after each of its legal moves |
| `unit_value` | the solver's own number ``u`` (the landlord's side's result, see above) |

Cost (``python benchmarks/bench_endgame.py``): see docs/search.md, "The exact endgame".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

import numpy as np

from .cards import MAX_COUNTS, NUM_RANKS, NUM_SEATS, RANKS
from .legal import legal_ids_unchecked
from .moves import IS_BOMB_OR_ROCKET, MOVE_COUNTS, MOVE_NCARDS, MOVE_RANK, NUM_MOVES, PASS
from .rules import Phase
from .scoring import hand_scores

#: the cards in the hands (all three together) at or below which the search agent solves by default
DEFAULT_MAX_CARDS = 12
#: ``solve`` refuses more cards than this unless told (the tree grows fast with the cards)
SOLVE_LIMIT = 24

_SHIFTS = 4 * np.arange(NUM_RANKS, dtype=np.int64)
#: a move's cards as one integer: 4 bits per rank (a hand minus a move it holds never borrows)
_CODE: list[int] = (MOVE_COUNTS.astype(np.int64) << _SHIFTS).sum(axis=1).tolist()
_NCARDS: list[int] = MOVE_NCARDS.tolist()
_BOMBISH: list[bool] = IS_BOMB_OR_ROCKET.tolist()
_INF = float("inf")


def _code(counts) -> int:
    return int((np.asarray(counts, dtype=np.int64) << _SHIFTS).sum())


def _counts(code: int) -> np.ndarray:
    return ((code >> _SHIFTS) & 15).astype(np.int8)


# ---------------------------------------------------------------------------------------- the moves
#: (hand code, move to beat) -> the legal moves, ordered for the search: (id, code, cards, bomb or rocket)
_MOVES: dict[tuple[int, int], tuple[tuple[int, int, int, bool], ...]] = {}
#: hand code -> bombs (and the rocket) it holds: each could double the stake once (R18)
_BOMBS: dict[int, int] = {}
_CACHE_LIMIT = 400_000


def _order(m: int, n: int) -> tuple:
    """Search order: moves that go out first (they end the hand), then more cards first, bombs and the
    rocket after the ordinary moves, low ranks first, the pass last."""
    if m == PASS:
        return (3, 0, 0)
    k = _NCARDS[m]
    return (0 if k == n else 1 + _BOMBISH[m], -k, int(MOVE_RANK[m]))


def _moves(hand: int, last: int) -> tuple[tuple[int, int, int, bool], ...]:
    key = (hand, last)
    got = _MOVES.get(key)
    if got is None:
        if len(_MOVES) > _CACHE_LIMIT:
            _MOVES.clear()
        counts = _counts(hand)
        n = int(counts.sum())
        ids = sorted(legal_ids_unchecked(counts, last).tolist(), key=lambda m: _order(m, n))
        got = _MOVES[key] = tuple((m, _CODE[m], _NCARDS[m], _BOMBISH[m]) for m in ids)
    return got


_PASS_FIRST: dict[tuple[int, int], tuple[tuple[int, int, int, bool], ...]] = {}


def _moves_pass_first(hand: int, last: int) -> tuple[tuple[int, int, int, bool], ...]:
    """``_moves`` with the pass first (but after a move that goes out): a farmer answering its partner's
    move tries letting it stand first."""
    key = (hand, last)
    got = _PASS_FIRST.get(key)
    if got is None:
        if len(_PASS_FIRST) > _CACHE_LIMIT:
            _PASS_FIRST.clear()
        mv = _moves(hand, last)
        n = int(_counts(hand).sum())
        out = [x for x in mv if x[0] != PASS and x[2] == n]
        got = _PASS_FIRST[key] = tuple(out + [x for x in mv if x[0] == PASS]
                                       + [x for x in mv if x[0] != PASS and x[2] != n])
    return got


def _bombs(hand: int) -> int:
    got = _BOMBS.get(hand)
    if got is None:
        c = _counts(hand)
        got = _BOMBS[hand] = int((c[:13] == 4).sum()) + int(c[13] > 0 and c[14] > 0)
    return got


# ---------------------------------------------------------------------------------------- the position
@dataclass(frozen=True)
class Position:
    """A play-phase position with every hand known, and the stakes that turn its result into scores.

    ``hands`` (3, 15) counts by absolute seat; ``turn`` the seat to act; ``last_move`` the move id to beat
    (``PASS``: ``turn`` leads) and ``passes`` the passes since it (0 or 1; its maker is the seat before
    ``turn``, or the one before that after a pass, R8); ``farmers_played``: a farmer has played a card
    (no spring then, R18); ``landlord_moves``: the landlord's plays so far, passes excluded (anti-spring
    needs exactly its opening one, R18; 0 only before its opening lead). The stakes: ``bid`` (R3),
    ``doubled`` (3,) bool per seat (R5; False for the landlord), ``redoubled`` (R6), ``bombs``: bombs
    and rockets played so far (R18, R19). Built checked: ``ValueError`` naming what is wrong.
    """

    hands: np.ndarray
    landlord: int
    turn: int
    last_move: int = PASS
    passes: int = 0
    farmers_played: bool = True
    landlord_moves: int = 2
    bid: int = 1
    doubled: tuple[bool, bool, bool] = (False, False, False)
    redoubled: bool = False
    bombs: int = 0

    def __post_init__(self) -> None:
        h = np.asarray(self.hands)
        if h.shape != (NUM_SEATS, NUM_RANKS):
            raise ValueError(f"endgame: hands must have shape (3, {NUM_RANKS}), got {h.shape}")
        if h.size and h.dtype.kind not in "iu":
            raise TypeError(f"endgame: hands must be integer card counts, got dtype {h.dtype}")
        bad = (h < 0) | (h > MAX_COUNTS)
        if bad.any():
            s, r = np.argwhere(bad)[0]
            raise ValueError(f"endgame: seat {s} holds an impossible count {int(h[s, r])} of rank {RANKS[r]!r}")
        over = h.sum(axis=0) > MAX_COUNTS
        if over.any():
            r = int(np.flatnonzero(over)[0])
            raise ValueError(f"endgame: the hands hold {int(h[:, r].sum())} cards of rank {RANKS[r]!r}, more than "
                             f"one deck has ({int(MAX_COUNTS[r])}, R1)")
        empty = np.flatnonzero(h.sum(axis=1) == 0)
        if empty.size:
            raise ValueError(f"endgame: seat {int(empty[0])} holds no card: the hand is over (R17), nothing to solve")
        for name in ("landlord", "turn"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < NUM_SEATS:
                raise ValueError(f"endgame: {name} must be a seat 0, 1 or 2, got {v!r}")
        last = self.last_move
        if isinstance(last, bool) or not isinstance(last, (int, np.integer)) or not 0 <= last < NUM_MOVES:
            raise ValueError(f"endgame: last_move must be a move id in [0, {NUM_MOVES}), got {last!r}")
        if self.passes not in (0, 1) or (last == PASS and self.passes != 0):
            raise ValueError(f"endgame: passes must be 0 when leading and 0 or 1 when responding (two passes "
                             f"give the lead back, R8), got {self.passes!r} with last_move {int(last)}")
        if isinstance(self.landlord_moves, bool) or not isinstance(self.landlord_moves, (int, np.integer)) \
                or self.landlord_moves < 0:
            raise ValueError(f"endgame: landlord_moves must be a whole number >= 0, got {self.landlord_moves!r}")
        if self.landlord_moves == 0 and (self.turn != self.landlord or last != PASS or self.farmers_played):
            raise ValueError("endgame: landlord_moves 0 is the start of the play, the landlord to lead and no farmer "
                             "played (R7, R8)")
        if self.bid not in (1, 2, 3):
            raise ValueError(f"endgame: bid must be 1, 2 or 3 (R3), got {self.bid!r}")
        dbl = tuple(bool(d) for d in np.asarray(self.doubled, dtype=bool).reshape(-1))
        if len(dbl) != NUM_SEATS or dbl[self.landlord]:
            raise ValueError(f"endgame: doubled must be 3 flags, False for the landlord (R5), got {self.doubled!r}")
        if isinstance(self.bombs, bool) or not isinstance(self.bombs, (int, np.integer)) or self.bombs < 0:
            raise ValueError(f"endgame: bombs must be a whole number >= 0, got {self.bombs!r}")
        hands = h.astype(np.int8)
        hands.flags.writeable = False
        for name, value in (("hands", hands), ("landlord", int(self.landlord)), ("turn", int(self.turn)),
                            ("last_move", int(last)), ("passes", int(self.passes)),
                            ("farmers_played", bool(self.farmers_played)),
                            ("landlord_moves", int(self.landlord_moves)), ("bid", int(self.bid)), ("doubled", dbl),
                            ("redoubled", bool(self.redoubled)), ("bombs", int(self.bombs))):
            object.__setattr__(self, name, value)

    @property
    def cards(self) -> int:
        """The cards in the three hands together."""
        return int(self.hands.sum())

    @classmethod
    def of_game(cls, game: Any) -> "Position":
        """The position of a ``game.Game`` in its play phase (copied: the game is not touched)."""
        if getattr(game, "phase", None) != Phase.PLAY:
            phase = getattr(game, "phase", None)
            raise ValueError(f"endgame: a position exists only in the play phase, the game is in "
                             f"{getattr(phase, 'name', phase)}")
        lord = int(game.landlord)
        made = np.asarray(game.moves_made)
        return cls(np.array(game.hands, np.int8), lord, int(game.current_player), int(game.last_move),
                   int(game.passes), bool(made.sum() - made[lord] > 0), int(made[lord]), int(game.bid),
                   tuple(bool(x) for x in np.asarray(game.double_choice) == 1), bool(game.redoubled),
                   int(game.bombs) + int(game.rockets))

    @classmethod
    def of_batch(cls, state: Any, b: int) -> "Position":
        """The position of slot ``b`` of a ``batch.BatchState`` (``VectorDouDizhu.state``) in its play phase."""
        if int(state.phase[b]) != int(Phase.PLAY):
            raise ValueError(f"endgame: slot {b} is not in the play phase (phase {int(state.phase[b])})")
        lord = int(state.landlord[b])
        made = np.asarray(state.moves_made[b])
        return cls(np.array(state.hands[b], np.int8), lord, int(state.current_player[b]), int(state.last_move[b]),
                   int(state.passes[b]), bool(made.sum() - made[lord] > 0), int(made[lord]), int(state.bid[b]),
                   tuple(bool(x) for x in np.asarray(state.double_choice[b]) == 1),
                   bool(state.redouble_choice[b] == 1), int(state.bombs[b]) + int(state.rockets[b]))

    def legal_moves(self) -> np.ndarray:
        """The legal move ids of the seat on turn (``legal.legal_ids_unchecked``)."""
        return legal_ids_unchecked(self.hands[self.turn], self.last_move)

    def after(self, move: int) -> "Position":
        """The position after the seat on turn plays ``move`` (a legal id that does not end the hand)."""
        move = int(move)
        if move not in set(self.legal_moves().tolist()):
            raise ValueError(f"endgame: move {move} is not legal for seat {self.turn} here")
        s, lord = self.turn, self.landlord
        if move == PASS:
            two = self.passes == 1
            return Position(self.hands, lord, (s + 1) % NUM_SEATS, PASS if two else self.last_move, 0 if two else 1,
                            self.farmers_played, self.landlord_moves, self.bid, self.doubled, self.redoubled,
                            self.bombs)
        hands = self.hands.copy()
        hands[s] -= MOVE_COUNTS[move]
        if hands[s].sum() == 0:
            raise ValueError(f"endgame: move {move} ends the hand: there is no position after it")
        return Position(hands, lord, (s + 1) % NUM_SEATS, move, 0, self.farmers_played or s != lord,
                        self.landlord_moves + (s == lord), self.bid, self.doubled, self.redoubled,
                        self.bombs + bool(IS_BOMB_OR_ROCKET[move]))

    def scores(self, unit: float) -> np.ndarray:
        """(3,) int64: every seat's R19 score when the rest of the hand is worth ``unit`` (`unit_value`)."""
        u = int(unit)
        if u == 0 or abs(u) & (abs(u) - 1):
            raise ValueError(f"endgame: a unit value is plus or minus a power of two, got {unit!r}")
        return hand_scores(self.bid, self.landlord, np.array(self.doubled), self.redoubled,
                           self.bombs + abs(u).bit_length() - 1, 0, False, False, u < 0)


def _as_position(state: Any) -> Position:
    if isinstance(state, Position):
        return state
    if hasattr(state, "initial_hands") and hasattr(state, "moves_made") and hasattr(state, "phase"):
        return Position.of_game(state)
    raise TypeError(f"endgame: solve a Position or a game.Game in its play phase, got {type(state).__name__}")


def solvable(state: Any, max_cards: int = DEFAULT_MAX_CARDS) -> bool:
    """Whether ``state`` (a `Position` or a ``Game``) is in the play phase with at most ``max_cards``
    cards in the three hands together."""
    if not isinstance(state, Position):
        if getattr(state, "phase", None) != Phase.PLAY:
            return False
        return int(np.asarray(state.hands).sum()) <= max_cards
    return state.cards <= max_cards


# ---------------------------------------------------------------------------------------- the search
class _Solver:
    """Alpha-beta over one landlord seat's positions, with its transposition table (kept between solves:
    the values do not depend on the stakes)."""

    def __init__(self, landlord: int):
        self.lord = landlord
        self.tt: dict[tuple, tuple[float, float]] = {}
        self.nodes = 0

    def value(self, h: tuple[int, int, int], n: tuple[int, int, int], turn: int, last: int, passes: int, fp: bool,
              lm: int, alpha: float, beta: float) -> float:
        """Fail-soft alpha-beta: the unit value (the landlord's side's) of the position; exact when it lies
        strictly inside (alpha, beta), else a bound on the side it fell."""
        self.nodes += 1
        lord = self.lord
        key = (h, turn, last, passes, fp, lm)
        tt = self.tt
        e = tt.get(key)
        # the most the rest can be worth: each bomb held doubles once, spring or anti-spring once (R18)
        b = _BOMBS.get(h[0]), _BOMBS.get(h[1]), _BOMBS.get(h[2])
        nb = (b[0] if b[0] is not None else _bombs(h[0])) + (b[1] if b[1] is not None else _bombs(h[1])) \
            + (b[2] if b[2] is not None else _bombs(h[2]))
        lo = -float(1 << (nb + (lm <= 1)))
        hi = float(1 << (nb + (not fp)))
        if e is not None:
            lo, hi = max(lo, e[0]), min(hi, e[1])
        if lo >= beta or lo == hi:
            return lo
        if hi <= alpha:
            return hi
        a0 = alpha if alpha > lo else lo
        b0 = beta if beta < hi else hi
        maxing = turn == lord
        nxt = turn + 1 if turn < 2 else 0
        mine = h[turn]
        have = n[turn]
        a, bt = a0, b0
        best = -_INF if maxing else _INF
        if last and not maxing and (turn - 1 - passes) % NUM_SEATS != lord:  # (the move to beat is the partner's)
            order = _moves_pass_first(mine, last)
        else:
            order = _moves(mine, last)
        for m, code, k, bomb in order:
            if m == PASS:
                if passes:
                    v = self.value(h, n, nxt, PASS, 0, fp, lm, a, bt)
                else:
                    v = self.value(h, n, nxt, last, 1, fp, lm, a, bt)
            elif k == have:  # goes out: the hand is over (R17)
                if turn == lord:
                    v = float(1 << (bomb + (not fp)))  # spring: no farmer played (R18)
                else:
                    v = -float(1 << (bomb + (lm == 1)))  # anti-spring: only the landlord's opening play
            else:
                if turn == 0:
                    hh = (mine - code, h[1], h[2])
                    nn = (have - k, n[1], n[2])
                elif turn == 1:
                    hh = (h[0], mine - code, h[2])
                    nn = (n[0], have - k, n[2])
                else:
                    hh = (h[0], h[1], mine - code)
                    nn = (n[0], n[1], have - k)
                if turn == lord:
                    f2, l2 = fp, (lm + 1 if lm < 2 else 2)
                else:
                    f2, l2 = True, lm
                if bomb:  # the rest is worth twice as much (R18)
                    v = 2.0 * self.value(hh, nn, nxt, m, 0, f2, l2, a / 2.0, bt / 2.0)
                else:
                    v = self.value(hh, nn, nxt, m, 0, f2, l2, a, bt)
            if maxing:
                if v > best:
                    best = v
                    if v > a:
                        a = v
                        if a >= bt:
                            break
            elif v < best:
                best = v
                if v < bt:
                    bt = v
                    if bt <= a:
                        break
        if len(tt) > _CACHE_LIMIT:
            tt.clear()
        if best <= a0:
            tt[key] = (lo, best)
        elif best >= b0:
            tt[key] = (best, hi)
        else:
            tt[key] = (best, best)
        return best


_SOLVERS: dict[int, _Solver] = {}


def _solver(landlord: int) -> _Solver:
    s = _SOLVERS.get(landlord)
    if s is None:
        s = _SOLVERS[landlord] = _Solver(landlord)
    return s


def _internal(p: Position) -> tuple:
    h = tuple(_code(p.hands[s]) for s in range(NUM_SEATS))
    n = tuple(int(x) for x in p.hands.sum(axis=1))
    return h, n, p.turn, p.last_move, p.passes, p.farmers_played, min(p.landlord_moves, 2)


def _check_size(p: Position, max_cards: int) -> None:
    if p.cards > max_cards:
        raise ValueError(f"endgame: {p.cards} cards in the hands, more than max_cards={max_cards} (the exact search "
                         f"grows fast with the cards; pass a larger max_cards to insist)")


def _move_units(p: Position, moves: Iterable[int]) -> dict[int, float]:
    """The unit value after each of ``moves`` (legal ids of the seat on turn), exact."""
    solver = _solver(p.landlord)
    h, n, turn, last, passes, fp, lm = _internal(p)
    lord = p.landlord
    out = {}
    for m in moves:
        m = int(m)
        nxt = (turn + 1) % NUM_SEATS
        if m == PASS:
            v = solver.value(h, n, nxt, PASS if passes else last, 0 if passes else 1, fp, lm, -_INF, _INF)
        else:
            k, bomb = _NCARDS[m], _BOMBISH[m]
            if k == n[turn]:
                v = float(1 << (bomb + (not fp))) if turn == lord else -float(1 << (bomb + (lm == 1)))
            else:
                hh = tuple(x - _CODE[m] if s == turn else x for s, x in enumerate(h))
                nn = tuple(x - k if s == turn else x for s, x in enumerate(n))
                f2, l2 = (fp, min(lm + 1, 2)) if turn == lord else (True, lm)
                v = (2.0 if bomb else 1.0) * solver.value(hh, nn, nxt, m, 0, f2, l2, -_INF, _INF)
        out[m] = v
    return out


def unit_value(state: Any, max_cards: int = SOLVE_LIMIT) -> int:
    """The exact value of the rest of the hand in units (module doc): ``+2 ** k`` when the landlord goes
    out under best play of both sides, ``-2 ** k`` when a farmer does, ``k`` the bombs and rockets still
    to be played plus spring or anti-spring (R18)."""
    p = _as_position(state)
    _check_size(p, max_cards)
    return int(_solver(p.landlord).value(*_internal(p), -_INF, _INF))


class Solution(NamedTuple):
    """``value``: the exact R19 score of the seat on turn under best play of both sides; ``move``: a move id
    that reaches it."""

    value: int
    move: int


def solve(state: Any, max_cards: int = SOLVE_LIMIT) -> Solution:
    """The exact solution for the seat on turn of ``state`` (a `Position`, or a ``Game`` in its play
    phase: it is read, never changed). ``ValueError`` for a state with more than ``max_cards`` cards in
    the hands, one not in the play phase, or a bad `Position`."""
    p = _as_position(state)
    _check_size(p, max_cards)
    moves = [m for m, *_ in _moves(_code(p.hands[p.turn]), p.last_move)]  # the search order: going out first
    units = _move_units(p, moves)
    sign = 1 if p.turn == p.landlord else -1
    best = max(moves, key=lambda m: sign * units[m])  # (the first of the best in search order)
    return Solution(int(p.scores(units[best])[p.turn]), int(best))


def solve_scores(state: Any, max_cards: int = SOLVE_LIMIT) -> np.ndarray:
    """(3,) int64: each seat's exact final R19 score (absolute seats) under best play of both sides."""
    p = _as_position(state)
    _check_size(p, max_cards)
    return p.scores(_solver(p.landlord).value(*_internal(p), -_INF, _INF))


def move_values(state: Any, moves: Iterable[int] | None = None, seat: int | None = None,
                max_cards: int = SOLVE_LIMIT) -> dict[int, int]:
    """The exact R19 score of ``seat`` (default: the seat on turn) after each of ``moves`` (default: every
    legal move of the seat on turn), both sides playing best from there on. ``ValueError`` for a move
    that is not legal."""
    p = _as_position(state)
    _check_size(p, max_cards)
    legal = p.legal_moves()
    if moves is None:
        moves = legal
    moves = [int(m) for m in moves]
    bad = sorted(set(moves) - set(legal.tolist()))
    if bad:
        raise ValueError(f"endgame: move {bad[0]} is not legal for seat {p.turn} here")
    seat = p.turn if seat is None else int(seat)
    units = _move_units(p, moves)
    return {m: int(p.scores(units[m])[seat]) for m in moves}


def clear_tables() -> None:
    """Forget the transposition tables and the remembered move lists (memory; the values never change)."""
    _SOLVERS.clear()
    _MOVES.clear()
    _PASS_FIRST.clear()
    _BOMBS.clear()


def nodes_searched() -> int:
    """Positions visited by the solver since the tables were cleared (all landlords)."""
    return sum(s.nodes for s in _SOLVERS.values())


__all__ = ["Position", "Solution", "solve", "solvable", "solve_scores", "move_values", "unit_value", "clear_tables",
           "nodes_searched", "DEFAULT_MAX_CARDS", "SOLVE_LIMIT"]
