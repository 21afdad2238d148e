"""Moves in words, and why one is refused: what a person tried, what the table needs, the ruling.

Both front ends read a person's move through :func:`parse_action` and refuse an illegal one with
a :class:`Refusal` (an :class:`~ddz_env.game.IllegalActionError`, so a ``ValueError``): its
``text`` is the plain sentence the terminal prints and the web page shows, e.g.

    You tried a pair of 5s. The table needs a pair higher than 8s, or a bomb, or the rocket.

``tried`` and ``needs`` are the two halves, ``ruling`` the rulebook's numbers (RULES.md) for who
wants them (the web page shows it as a detail), ``suggestion`` a did-you-mean (``pas`` -> ``pass``).

:func:`describe` names a move (``a straight 3 to 7``, ``three 9s with a 4``), :func:`needs` what
answers one (``a pair higher than 8s, or a bomb, or the rocket``). Cards read as the view's
:func:`~ddz_env.view.spaced` writes them: ``10`` for ten, ``BJ`` / ``RJ`` for the black (small)
and red (big) joker; a person may type ``T`` and ``B`` / ``R`` too.
"""
from __future__ import annotations

import difflib
from typing import Any, Iterable

import numpy as np

from ddz_env.actions import BID_ACTIONS, BID_PASS, DOUBLE_ACTIONS, NUM_ACTIONS, REDOUBLE_ACTIONS, action_to_string
from ddz_env.cards import ACE, MAX_COUNTS, NUM_RANKS, RANKS, RED_JOKER, TWO
from ddz_env.game import Game, IllegalActionError, Phase
from ddz_env.moves import (FOUR_WITH_TWO, MOVE_COUNTS, MOVE_KICKERS, MOVE_LENGTH, MOVE_RANK, MOVE_TYPE, NUM_MOVES, PASS,
                           MoveType, beats, move_id)
from ddz_env.view import spaced

#: a responder's only legal move is to pass: what the web page's move list says then (app.js), and the terminal
NOTHING_BEATS_IT = "nothing beats it: pass"
_YES = {"y", "yes", "double", "redouble", "d", "r"}
_NO = {"n", "no", "no double", "no redouble", "pass", "p"}
_NUMBER = {1: "one", 2: "two", 3: "three", 4: "four"}
#: what a move may be, in words (R9-R13)
KINDS = ("a single card, a pair, three of a kind (alone, with one card or a pair), a straight (5+ cards in a row), "
         "3+ pairs in a row, 2+ trios in a row (alone, with as many single cards or pairs), four of a kind with two "
         "cards or two pairs, a bomb (four of a kind) or the rocket (BJ RJ)")
#: the same, short: a refused move's sentence
KINDS_SHORT = ("a single, a pair, a trio (alone, with a card or a pair), a straight (5+ in a row), 3+ pairs in a row, "
               "trios in a row, four with two, a bomb or the rocket")
CARD_NAMES = "3 to 9, 10 (or T), J, Q, K, A, 2, BJ and RJ (or B and R) for the black and red joker"
_BEAT_RULING = ("R8: a responder plays the same type, card count and chain length with a higher main rank, or a "
                "bomb, or the rocket, or passes; R15: a bomb beats any ordinary move, a higher bomb a lower one, the "
                "rocket everything; R16: only the main rank counts, kickers never")


class Refusal(IllegalActionError):
    """A person's move refused, in words: ``text`` (the whole sentence: ``str(refusal)``), ``tried``,
    ``needs``, ``ruling`` (may be empty) and ``suggestion`` (a did-you-mean, or ``None``)."""

    def __init__(self, text: str, *, tried: str = "", needs: str = "", ruling: str = "",
                 suggestion: str | None = None) -> None:
        super().__init__(text)
        self.text, self.tried, self.needs, self.ruling, self.suggestion = text, tried, needs, ruling, suggestion

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tried": self.tried, "needs": self.needs, "ruling": self.ruling,
                "suggestion": self.suggestion}


# ---------------------------------------------------------------------------------------------- words for cards and moves
def card(rank: int) -> str:
    """One rank as people read it: ``10``, ``J``, ``BJ``."""
    return spaced(RANKS[rank])


def many(rank: int) -> str:
    """A rank in the plural: ``8s``, ``10s``, ``As``."""
    return card(rank) + "s"


def a_or_an(word: str) -> str:
    """``word`` with its article as it is read aloud: ``an 8``, ``an 11-card straight``, ``an A``, ``a 10``."""
    head = word.split("-")[0].split(" ")[0]
    return ("an " if head.startswith("8") or head in ("11", "18") or head == "A" else "a ") + word


def _kicker_words(kickers: np.ndarray) -> str:
    singles = [r for r in range(NUM_RANKS) for _ in range(int(kickers[r]))]
    return " ".join(card(r) for r in singles)


def _pairs(ranks: list[int]) -> str:
    names = [many(r) for r in ranks]
    return "a pair of " + names[0] if len(names) == 1 else "pairs of " + ", ".join(names[:-1]) + " and " + names[-1]


def describe(move: int) -> str:
    """A move in words: ``a pair of 5s``, ``a straight 3 to 7``, ``three 9s with a 4``, ``pass``."""
    m = int(move)
    if not 0 <= m < NUM_MOVES:
        return action_to_string(m)
    if m == PASS:
        return "pass"
    t, n, r = MoveType(int(MOVE_TYPE[m])), int(MOVE_LENGTH[m]), int(MOVE_RANK[m])
    kick = MOVE_KICKERS[m]
    pair_ranks = [k for k in range(NUM_RANKS) if kick[k] == 2]
    top = r + n - 1
    if t == MoveType.SINGLE:
        return f"a single {card(r)}"
    if t == MoveType.PAIR:
        return f"a pair of {many(r)}"
    if t == MoveType.TRIO:
        return f"three {many(r)}"
    if t == MoveType.TRIO_SINGLE:
        return f"three {many(r)} with {a_or_an(_kicker_words(kick))}"
    if t == MoveType.TRIO_PAIR:
        return f"three {many(r)} with {_pairs(pair_ranks)}"
    if t == MoveType.STRAIGHT:
        return f"a straight {card(r)} to {card(top)}"
    if t == MoveType.PAIR_CHAIN:
        return f"{n} pairs in a row, {many(r)} to {many(top)}"
    if t == MoveType.AIRPLANE:
        return f"{n} trios in a row, {many(r)} to {many(top)}"
    if t == MoveType.AIRPLANE_SINGLES:
        return f"{n} trios in a row, {many(r)} to {many(top)}, with {_kicker_words(kick)}"
    if t == MoveType.AIRPLANE_PAIRS:
        return f"{n} trios in a row, {many(r)} to {many(top)}, with {_pairs(pair_ranks)}"
    if t == MoveType.FOUR_TWO_SINGLES:
        return f"four {many(r)} with {_kicker_words(kick)}"
    if t == MoveType.FOUR_TWO_PAIRS:
        return f"four {many(r)} with {_pairs(pair_ranks)}"
    if t == MoveType.BOMB:
        return f"a bomb of four {many(r)}"
    return "the rocket (BJ RJ)"


def _same_kind(move: int) -> str:
    t, n, r = MoveType(int(MOVE_TYPE[move])), int(MOVE_LENGTH[move]), int(MOVE_RANK[move])
    top = r + n - 1
    return {
        MoveType.SINGLE: f"a single card higher than {card(r)}",
        MoveType.PAIR: f"a pair higher than {many(r)}",
        MoveType.TRIO: f"three of a kind higher than {many(r)}",
        MoveType.TRIO_SINGLE: f"three of a kind higher than {many(r)} with one card",
        MoveType.TRIO_PAIR: f"three of a kind higher than {many(r)} with a pair",
        MoveType.STRAIGHT: f"{a_or_an(f'{n}-card')} straight higher than {card(r)} to {card(top)}",
        MoveType.PAIR_CHAIN: f"{n} pairs in a row higher than {many(r)} to {many(top)}",
        MoveType.AIRPLANE: f"{n} trios in a row higher than {many(r)} to {many(top)}",
        MoveType.AIRPLANE_SINGLES: f"{n} trios in a row higher than {many(r)} to {many(top)} with {n} single cards",
        MoveType.AIRPLANE_PAIRS: f"{n} trios in a row higher than {many(r)} to {many(top)} with {n} pairs",
        MoveType.FOUR_TWO_SINGLES: f"four of a kind higher than {many(r)} with two single cards",
        MoveType.FOUR_TWO_PAIRS: f"four of a kind higher than {many(r)} with two pairs",
    }[t]


def needs(last: int) -> str:
    """What answers the move ``last`` on the table (R8, R14-R16), in words:
    ``a pair higher than 8s, or a bomb, or the rocket``."""
    m = int(last)
    t = MoveType(int(MOVE_TYPE[m]))
    if m == PASS:
        return "any move (you lead)"
    if t == MoveType.ROCKET:
        return "nothing: no move beats the rocket, so pass"
    r, top = int(MOVE_RANK[m]), int(MOVE_RANK[m]) + int(MOVE_LENGTH[m]) - 1
    if t == MoveType.BOMB:
        return "the rocket" if r == TWO else f"a higher bomb (four of a kind above {many(r)}) or the rocket"
    chain = t in (MoveType.STRAIGHT, MoveType.PAIR_CHAIN, MoveType.AIRPLANE, MoveType.AIRPLANE_SINGLES,
                  MoveType.AIRPLANE_PAIRS)
    if (top == ACE if chain else r == (RED_JOKER if t == MoveType.SINGLE else TWO)):  # nothing higher of its kind
        return "a bomb or the rocket"
    return f"{_same_kind(m)}, or a bomb, or the rocket"


# ---------------------------------------------------------------------------------------------- reading what is typed
def suggest(text: str, words: Iterable[str]) -> str | None:
    """The word of ``words`` that ``text`` most likely meant (``pas`` -> ``pass``), or ``None``."""
    close = difflib.get_close_matches(text, list(words), n=1, cutoff=0.75)
    return close[0] if close else None


def _mean(text: str, words: Iterable[str]) -> tuple[str, str | None]:
    s = suggest(text, words)
    return (f" Did you mean '{s}'?" if s else ""), s


def _phase_words(phase: Phase) -> list[str]:
    return {Phase.BID: ["pass", "bid 1", "bid 2", "bid 3"], Phase.DOUBLE: ["double", "no double", "no"],
            Phase.REDOUBLE: ["redouble", "no redouble", "no"], Phase.PLAY: ["pass"]}.get(phase, [])


def _legal_words(game: Game) -> list[str]:
    """The phase's words that name a legal action now: a did-you-mean never offers what would then be refused
    (``pass`` on a lead, ``bid 1`` over a bid of 2)."""
    legal = {int(a) for a in game.legal_actions()} if not game.is_over else set()
    if game.phase == Phase.BID:
        return [w for w, a in (("pass", BID_PASS), ("bid 1", BID_PASS + 1), ("bid 2", BID_PASS + 2),
                               ("bid 3", BID_PASS + 3)) if a in legal]
    if game.phase == Phase.PLAY:
        return ["pass"] if PASS in legal else []
    return _phase_words(game.phase)


_JOKER_TOKENS = {"bj": "B", "rj": "R"}


def parse_typed_cards(text: str) -> np.ndarray:
    """The counts of the cards in ``text`` (any order, spaces ignored, ``10``/``T``, ``BJ``/``B``, lower case fine);
    :class:`Refusal` naming the first thing that is no card, or a rank typed more often than the deck holds."""
    t = text.strip()
    tokens = [_JOKER_TOKENS.get(w.lower(), w) for w in t.split()]
    s = "".join(tokens)
    if s.lower() in ("bjrj", "rjbj"):
        s = "BR"
    s = s.replace("10", "T")
    counts = np.zeros(NUM_RANKS, dtype=np.int64)
    for ch in s:
        r = RANKS.find(ch.upper())
        if r < 0:
            raise Refusal(f"{t!r} is not a move: {ch!r} is no card. Cards are {CARD_NAMES}; or type pass.",
                          tried=t, needs="cards from your hand, or pass")
        counts[r] += 1
    over = np.flatnonzero(counts > MAX_COUNTS)
    if over.size:
        r = int(over[0])
        have = "one" if MAX_COUNTS[r] == 1 else _NUMBER[int(MAX_COUNTS[r])]
        what = card(r) if MAX_COUNTS[r] == 1 else many(r)
        raise Refusal(f"{t!r} holds {_NUMBER.get(int(counts[r]), int(counts[r]))} x {card(r)}: the deck has only "
                      f"{have} {what}.",
                      tried=t, needs="cards from your hand", ruling="R1, R2: one 54-card deck")
    return counts


def _no_move_hint(counts: np.ndarray) -> str:
    ranks = np.flatnonzero(counts)
    n = ranks.size
    in_a_row = n >= 2 and ranks[-1] - ranks[0] == n - 1
    if in_a_row and (counts[ranks] == 1).all() and n >= 3:
        if ranks[-1] > ACE:
            return " (a straight may not hold a 2 or a joker)"
        if n < 5:
            return " (a straight needs 5 or more cards in a row)"
    if in_a_row and (counts[ranks] == 2).all() and n == 2:
        return " (pairs in a row need 3 or more pairs)"
    return ""


def parse_action(text: str, game: Game, words: Iterable[str] = ()) -> int:
    """The action id a person means by ``text`` in the game's current phase.

    Cards in any order (``10`` or ``T`` for ten, ``BJ``/``RJ`` or ``B``/``R`` for the jokers, lower case fine),
    ``pass``, a bid ``1``-``3`` / ``bid 2``, ``double`` / ``no``, ``redouble`` / ``no``. A :class:`Refusal`
    (a ``ValueError``) in plain words for text that names no action of this phase, with a did-you-mean among
    the phase's words and ``words`` (the front end's own commands, e.g. the terminal's ``help``, ``quit``);
    whether the action is legal now is :func:`refusal`'s to say.
    """
    if not isinstance(text, str):
        raise Refusal(f"type a move, got {text!r}", tried=repr(text), needs="a move")
    t = " ".join(text.strip().lower().split())
    shown = text.strip()
    extra = list(words)
    if not t:
        raise Refusal("Nothing was typed: type cards (e.g. 3 3 or 10 J Q K A), pass, or help.", needs="a move")
    p = game.phase
    if p == Phase.BID:
        if t in ("pass", "p", "0", "bid 0", "bid pass", "no", "no bid"):
            return BID_PASS
        b = t[3:].strip() if t.startswith("bid") else t
        if b in ("1", "2", "3"):
            return BID_PASS + int(b)
        # a number is a bid out of range, not a typo of another bid: no did-you-mean (bid 4 is not bid 3)
        hint, s = ("", None) if b.lstrip("+-").isdigit() else _mean(t, _legal_words(game) + extra)
        raise Refusal(f"{shown!r} is no bid: bid 1, 2 or 3, or pass.{hint}", tried=shown,
                      needs="a bid of 1, 2 or 3, or pass", ruling="R3: each player bids once: pass, 1, 2 or 3",
                      suggestion=s)
    if p in (Phase.DOUBLE, Phase.REDOUBLE):
        no, yes = DOUBLE_ACTIONS if p == Phase.DOUBLE else REDOUBLE_ACTIONS
        if t in _YES:
            return yes
        if t in _NO:
            return no
        word = "double" if p == Phase.DOUBLE else "redouble"
        hint, s = _mean(t, _legal_words(game) + extra)
        raise Refusal(f"{shown!r}: type '{word}' (or y) or 'no' (or n).{hint}", tried=shown,
                      needs=f"{word} or no", ruling="R5, R6: each farmer doubles or not; the landlord may redouble",
                      suggestion=s)
    if p == Phase.PLAY:
        if t in ("pass", "p"):
            return PASS
        try:
            counts = parse_typed_cards(t)
        except Refusal as e:
            hint, s = _mean(t, _legal_words(game) + extra)
            if s is not None:
                raise Refusal(f"{shown!r} is not a move.{hint}", tried=shown, needs=e.needs, suggestion=s) from None
            others = {w for q in (Phase.BID, Phase.DOUBLE, Phase.REDOUBLE) for w in _phase_words(q)} - {"pass", "no"}
            if t in others:
                raise Refusal(f"{shown!r} is for the bidding and doubling; now play cards or pass.", tried=shown,
                              needs="cards from your hand, or pass") from None
            said_ = str(e).replace(repr(t), repr(shown))
            if "pass" not in _legal_words(game):  # a lead: pass is no way out
                said_ = said_.replace("; or type pass.", ".")
            raise Refusal(said_, tried=shown, needs=e.needs, ruling=e.ruling) from None
        canon = "".join(RANKS[r] * int(c) for r, c in enumerate(counts))
        try:
            return move_id(canon)
        except ValueError:
            cards = spaced(canon)
            raise Refusal(f"{cards} is not a move{_no_move_hint(counts)}. Play one combination: {KINDS_SHORT}.",
                          tried=cards, needs=f"one move: {KINDS}", ruling="R9-R13: the move types") from None
    raise Refusal("The hand is over.", tried=shown, needs="nothing: the hand is over")


# ---------------------------------------------------------------------------------------------- why a move is illegal
def _holding(game: Game, a: int) -> str | None:
    hand = game.hands[game.current_player]
    short = np.flatnonzero(MOVE_COUNTS[a] > hand)
    if not short.size:
        return None
    r = int(short[0])
    n = int(hand[r])
    return f"you hold no {card(r)}" if n == 0 else f"you hold only {_NUMBER[n]} {card(r) if n == 1 else many(r)}"


def refusal(game: Game, action: Any) -> Refusal | None:
    """Why ``action`` (an id, or text a person typed) may not be played now, or ``None`` when it is legal.

    What was tried and what the table needs, in words; the ruling as a detail.
    """
    g = game
    if isinstance(action, str):
        try:
            action = parse_action(action, g)
        except Refusal as e:
            return e
    if g.is_over:
        return Refusal("The hand is over.", needs="nothing: the hand is over")
    if g.is_legal(action):
        return None
    if not isinstance(action, (int, np.integer)) or not 0 <= int(action) < NUM_ACTIONS:
        return Refusal(f"{action!r} is no action.", tried=repr(action), needs="a move of this phase")
    a = int(action)
    p = g.phase
    if p == Phase.BID:
        if a not in BID_ACTIONS:
            return Refusal(f"It is the bidding, not the time for {describe(a)}: bid 1, 2 or 3, or pass.",
                           tried=describe(a), needs="a bid of 1, 2 or 3, or pass", ruling="R3")
        higher = [b for b in (1, 2, 3) if b > g.bid]
        options = ("bid " + " or ".join(str(b) for b in higher) + ", or pass") if higher else "pass"
        return Refusal(f"You tried to bid {a - BID_PASS}, but a bid must be higher than the {g.bid} bid so far: "
                       f"{options}.", tried=f"bid {a - BID_PASS}", needs=options,
                       ruling="R3: a bid must top every bid so far")
    if p in (Phase.DOUBLE, Phase.REDOUBLE):
        word = "double" if p == Phase.DOUBLE else "redouble"
        return Refusal(f"It is time to {word} or not, not for {describe(a)}: {word} or no.", tried=describe(a),
                       needs=f"{word} or no", ruling="R5, R6")
    if p != Phase.PLAY:
        return Refusal("The hand is over.", needs="nothing")
    if a >= NUM_MOVES:
        return Refusal(f"It is the play, not the time for '{action_to_string(a)}': play cards or pass.",
                       tried=action_to_string(a), needs="cards from your hand, or pass")
    if a == PASS:
        return Refusal("You lead this trick, so you cannot pass: play any move.", tried="pass",
                       needs="any move (you lead)", ruling="R8: a leader must play; passing is not allowed on a lead")
    what = describe(a)
    hold = _holding(g, a)
    if hold is not None:
        return Refusal(f"You tried {what}, but {hold}.", tried=what,
                       needs="cards from your hand")
    last = int(g.last_move)
    only_pass = [int(x) for x in g.legal_actions()] == [PASS]
    if last != PASS:
        if not beats(a, last):
            tail = " Nothing in your hand beats it: pass." if only_pass else ""
            return Refusal(f"You tried {what}. The table needs {needs(last)}.{tail}", tried=what, needs=needs(last),
                           ruling=_BEAT_RULING)
    if MoveType(int(MOVE_TYPE[a])) in FOUR_WITH_TWO:
        return Refusal(f"You tried {what}, but four of a kind may not take its two cards from another complete four "
                       "of a kind or the rocket in your hand.", tried=what,
                       needs="kickers that split no bomb or rocket you hold", ruling="R13 (hand level)")
    return Refusal(f"You cannot play {what} now.", tried=what, needs="a legal move", ruling="R8-R16")


def refuse(game: Game, action: Any) -> None:
    """Raise :func:`refusal`'s :class:`Refusal` unless ``action`` is legal now."""
    r = refusal(game, action)
    if r is not None:
        raise r


__all__ = ["Refusal", "parse_action", "refusal", "refuse", "describe", "needs", "suggest", "parse_typed_cards", "card",
           "many", "a_or_an", "KINDS", "CARD_NAMES", "NOTHING_BEATS_IT"]

