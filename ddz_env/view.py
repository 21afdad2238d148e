"""What a seat (or a spectator) is shown of a hand, in words and numbers: the one observer of people.

The planes (:mod:`ddz_env.observation`) are what an agent sees; this module is what a person
sees, as JSON-able data that the terminal (``ddz-play``), the web page and replays render:

* :func:`seat_view`: a seat's cards, the public history (R5: another farmer's doubling choice is
  ``"?"`` until both chose, from :func:`~ddz_env.observation.seat_history`), the cards left per seat
  (R21), the bottom once revealed (R7), its legal actions when on turn, the others' cards only
  once the hand is over; ``seat=None`` is a spectator who sees everything;
* :func:`stake`: what the hand is worth now as the seat may know it (R19 spelled out, the doubles
  it may know: :func:`~ddz_env.observation.known_doubles`);
* :func:`outcome`: the end of the hand in words for the seat;
* :data:`ROLE_NAMES`, :func:`spaced` and :func:`said`: the words and the card notation people read
  (``10`` for ten, ``BJ`` / ``RJ`` for the black and red joker: one notation in the terminal and the page).

What a seat may know is decided in :mod:`ddz_env.observation` (R5, R21) for the planes and for
this view alike.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .actions import action_to_string, phase_of
from .cards import NUM_SEATS, counts_string
from .game import Game, Phase
from .moves import MOVE_TYPE, PASS, MoveType
from .observation import HIDDEN, known_doubles, seat_history
from .record import record_of
from .rules import Role
from .scoring import hand_scores

ROLE_NAMES = {Role.LANDLORD: "landlord", Role.FARMER_AFTER: "farmer", Role.FARMER_BEFORE: "farmer", -1: None}
_SHOW = {"T": "10", "B": "BJ", "R": "RJ"}
#: the words of the choices people read (a bid of 0 reads "no bid"); other actions read as their names
_WORDS = {"bid pass": "no bid"}
#: another farmer's doubling choice before R5 reveals it
SECRET = "chose (secret)"


def spaced(cards: str | None) -> str:
    """``"3TTBR"`` as ``"3 10 10 BJ RJ"``, the one card notation people read; ``"-"`` for none."""
    return " ".join(_SHOW.get(c, c) for c in cards) if cards else "-"


def said(action: int) -> str:
    """An action as a person reads it: cards spaced (``7 8 9 10 J``, ``BJ RJ``), ``pass``, ``no bid``,
    ``bid 2``, ``double``, ``no redouble``..."""
    name = action_to_string(action)
    return spaced(name) if phase_of(action) == "PLAY" and name != "pass" else _WORDS.get(name, name)


#: the kinds of move (R9-R13, :class:`~ddz_env.moves.MoveType`) as people name them, in the move table's order: the
#: web page groups a seat's legal moves by them
KIND_WORDS = {MoveType.SINGLE: "singles", MoveType.PAIR: "pairs", MoveType.TRIO: "trios",
              MoveType.TRIO_SINGLE: "trio + a card", MoveType.TRIO_PAIR: "trio + a pair", MoveType.STRAIGHT: "straights",
              MoveType.PAIR_CHAIN: "pairs in a row", MoveType.AIRPLANE: "trios in a row",
              MoveType.AIRPLANE_SINGLES: "trios in a row + cards", MoveType.AIRPLANE_PAIRS: "trios in a row + pairs",
              MoveType.FOUR_TWO_SINGLES: "four + two cards", MoveType.FOUR_TWO_PAIRS: "four + two pairs",
              MoveType.BOMB: "bombs", MoveType.ROCKET: "rocket"}


def kind(action: int) -> str:
    """The kind of an action as people name it: a move's (:data:`KIND_WORDS`: ``pairs``, ``straights``,
    ``bombs``...), ``pass``, or the phase of a choice (``bid``, ``double``, ``redouble``)."""
    a = int(action)
    phase = phase_of(a)
    if phase != "PLAY":
        return phase.lower()
    return "pass" if a == PASS else KIND_WORDS[MoveType(int(MOVE_TYPE[a]))]


def seat_view(game: Game, seat: int | None, names: Sequence[str] | None = None) -> dict[str, Any]:
    """What ``seat`` may see of ``game`` now, as JSON-able data; ``seat=None`` is a spectator who
    sees everything (a replay, or agents playing each other).

    A seat sees its own cards, the public history (each entry's ``name`` is the action's, ``text`` what
    people read: :func:`said`; another farmer's double is ``"?"``, read ``chose (secret)``, until both
    have chosen, R5; its own choice it knows), the cards left per seat (R21), the bottom once
    revealed (R7) and its legal actions when on turn (``legal_kinds``: the :func:`kind` of each); the other hands
    only once the hand is over.
    """
    g = game
    names = list(names) if names is not None else [f"seat {s}" for s in range(NUM_SEATS)]
    over = g.is_over
    everything = seat is None
    hist = g.history if everything else seat_history(g.history, g.doubles_revealed, seat)  # R5
    history = [{"seat": s, "phase": "DOUBLE", "name": "?", "text": SECRET} if a == HIDDEN else
               {"seat": s, "phase": phase_of(a), "name": action_to_string(a), "text": said(a)} for s, a in hist]
    show = [everything or s == seat or over for s in range(NUM_SEATS)]
    to_beat = None
    if g.phase == Phase.PLAY and g.last_move != PASS:
        to_beat = {"seat": int(g.last_mover), "cards": action_to_string(g.last_move)}
    on_turn = seat is not None and g.current_player == seat and not over
    worth = stake(g, seat)  # once: the outcome reads it too
    legal = g.legal_actions() if on_turn else []
    return {
        "seat": seat, "players": names, "phase": g.phase.name, "to_act": int(g.current_player),
        "your_turn": on_turn,
        "hands": [counts_string(g.hands[s]) if show[s] else None for s in range(NUM_SEATS)],
        "cards_left": [int(n) for n in g.n_cards],
        "roles": [ROLE_NAMES[g.role(s)] for s in range(NUM_SEATS)],
        "landlord": int(g.landlord), "first_bidder": int(g.first_bidder),
        "bids": [int(b) for b in g.bids], "bid": int(g.bid),
        "doubled": [bool(d) if g.doubles_revealed else None for d in g.doubled()],
        "redoubled": bool(g.redoubled),
        "bottom": counts_string(g.bottom) if (g.bottom_revealed or everything) else None,
        "played": [counts_string(g.played[s]) for s in range(NUM_SEATS)],
        "to_beat": to_beat,
        "history": history,
        "legal": [action_to_string(a) for a in legal],
        "legal_kinds": [kind(a) for a in legal],
        "over": bool(over),
        "result": record_of(g)["result"] if over else None,
        "stake": worth,
        "outcome": _outcome(g, seat, worth) if over else None,
    }


def _times(n: int, why: str) -> str:
    return f" x {2 ** n} ({why})" if n else ""


def stake(game: Game, seat: int | None) -> dict[str, Any] | None:
    """What the hand is worth now, as ``seat`` may know it (R19 through :func:`~ddz_env.scoring.hand_scores`,
    spelled out); ``None`` before there is a landlord and for a void hand.

    ``value`` is a farmer's own stake, or for the landlord (and a spectator) the sum of the farmers';
    ``how`` says how it is made (``bid 3 x 2 (1 bomb) x 2 (you doubled)``), ``text`` is ``how = value``.
    Another farmer's double counts only once the doubles are revealed (R5).
    """
    g = game
    if g.landlord < 0 or g.void or g.bid <= 0:
        return None
    lord = int(g.landlord)
    doubled = known_doubles(g.double_choice, g.doubles_revealed, seat)  # R5
    farmers = [f for f in range(NUM_SEATS) if f != lord]
    args = (g.bid, lord, doubled, g.redoubled, g.bombs, g.rockets, g.spring, g.anti_spring, True)
    each = [int(x) for x in hand_scores(*args)]  # the farmers' stakes (a farmers' win) and the landlord's -(sum)
    base = int(hand_scores(g.bid, lord, np.zeros(NUM_SEATS, bool), False, g.bombs, g.rockets, g.spring, g.anti_spring,
                           True)[farmers[0]])
    common = (f"bid {g.bid}" + _times(g.bombs, f"{g.bombs} bomb{'s' if g.bombs != 1 else ''}")
              + _times(g.rockets, "rocket") + _times(int(g.spring), "spring") + _times(int(g.anti_spring), "anti-spring"))

    def extra(f: int) -> str:
        if not doubled[f]:
            return ""
        mine = f == seat
        return (_times(1, "you doubled" if mine else ("doubled" if seat in (lord, None) else f"seat {f} doubled"))
                + _times(int(g.redoubled), "you redoubled" if seat == lord else "landlord redoubled"))

    if seat is not None and seat != lord:
        how = common + extra(seat)
        return {"value": each[seat], "how": how, "text": f"{how} = {each[seat]}"}
    per = [f"seat {f}{extra(f)} = {each[f]}" for f in farmers if doubled[f]]
    detail = (f"{common} = {base} per farmer" if common != f"bid {g.bid}" else f"{common} per farmer") + "".join(
        f"; {p}" for p in per)
    total = f"{each[farmers[0]]} + {each[farmers[1]]}"
    how = f"{detail}; {total}"
    return {"value": -each[lord], "how": how, "text": f"{how} = {-each[lord]}", "detail": detail, "sum": total}


def outcome(game: Game, seat: int | None) -> dict[str, Any] | None:
    """The end of the hand in words for ``seat`` (``None``: a spectator), ``None`` while it runs.

    ``headline`` is ``You win`` / ``You lose`` for a seat (``Landlord wins`` / ``Farmers win`` for a
    spectator), ``line`` says who won, the seat's score and how it was made, from the game's scores:
    ``landlord wins: you -6 = bid 3 x 2 (you doubled)``.
    """
    return _outcome(game, seat, None) if game.is_over else None


def _outcome(g: Game, seat: int | None, st: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`outcome` of a finished hand, with its :func:`stake` for ``seat`` if already computed (``st``)."""
    if g.void:
        return {"headline": "Void hand", "line": "void hand: everyone passed (R4), no score", "side": None}
    lord = int(g.landlord)
    side = "farmers" if g.winner != lord else "landlord"
    who = "farmers win" if side == "farmers" else "landlord wins"
    if st is None:
        st = stake(g, seat)
    lord_sum = st.get("sum") if side == "landlord" else f"-({st.get('sum')})"
    if seat is None:
        headline = who[0].upper() + who[1:]
        line = f"{who}: the landlord {int(g.scores[lord]):+d} = {lord_sum}, {st['detail']}"
    else:
        mine = int(g.scores[seat])
        headline = "You win" if mine > 0 else "You lose"
        how = st["how"] if seat != lord else f"{lord_sum}, {st['detail']}"
        line = f"{who}: you {mine:+d} = {how}"
    return {"headline": headline, "line": line, "side": side}


__all__ = ["ROLE_NAMES", "SECRET", "KIND_WORDS", "seat_view", "stake", "outcome", "spaced", "said", "kind"]
