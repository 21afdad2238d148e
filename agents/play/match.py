"""One hand between people and agents: the core of terminal play and the web page.

A :class:`Match` holds a :class:`~ddz_env.game.Game`, the agents in their seats and which
seats are people. :meth:`Match.advance` lets the agents act until a person is to act or the
hand is over; :meth:`Match.play` applies a person's action (validated first: an illegal one
raises and leaves the hand as it was). :meth:`Match.view` is everything one seat may know,
as plain JSON-able data: its own cards, the public history (a farmer's double stays hidden
until both have chosen, R5), the bottom only once revealed (R7), the cards left per seat
(R21). Other seats' cards appear only after the hand is over. Both front ends show a seat
nothing but this view, so secrecy is decided here.

:func:`parse_action` reads what a person types: cards in any order (``10`` for T, lower case
fine), ``pass``, a bid ``0``-``3`` / ``bid 2``, ``double`` / ``no``, ``redouble`` / ``no``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ddz_env.actions import (
    BID_ACTIONS, BID_PASS, DOUBLE_ACTIONS, NUM_ACTIONS, REDOUBLE_ACTIONS, action_to_string,
)
from ddz_env.cards import counts_string
from ddz_env.game import HIDDEN, Game, IllegalActionError, Phase
from ddz_env.moves import MOVE_COUNTS, NUM_MOVES, PASS, move_id
from ddz_env.observation import observe_game
from ddz_env.record import record_of
from ddz_env.scoring import hand_scores
from ddz_env.rules import Role

from ..evaluation.arena import make_deal, seat_seed
from ..base import Decisions, as_batch_agent

ROLE_NAMES = {Role.LANDLORD: "landlord", Role.FARMER_AFTER: "farmer", Role.FARMER_BEFORE: "farmer", -1: None}
_YES = {"y", "yes", "double", "redouble", "d", "r"}
_NO = {"n", "no", "no double", "no redouble", "pass", "p"}


_SHOW = {"T": "10"}


def spaced(cards: str | None) -> str:
    """``"3TTB"`` as ``"3 10 10 B"``, the one card notation people read; ``"-"`` for none."""
    return " ".join(_SHOW.get(c, c) for c in cards) if cards else "-"


def said(action: int) -> str:
    """An action as a person reads it: cards spaced with ``10`` for ten (``7 8 9 10 J``), else its name."""
    name = action_to_string(action)
    return spaced(name) if phase_of_action(action) == "PLAY" and name != "pass" else name


def phase_of_action(action: int) -> str:
    """The phase an action id belongs to (``BID``, ``DOUBLE``, ``REDOUBLE``, ``PLAY``)."""
    if action in BID_ACTIONS:
        return "BID"
    if action in DOUBLE_ACTIONS:
        return "DOUBLE"
    if action in REDOUBLE_ACTIONS:
        return "REDOUBLE"
    return "PLAY"


def parse_action(text: str, game: Game) -> int:
    """The action id a person means by ``text`` in the game's current phase.

    ``ValueError`` with a readable reason for text that names no action of this phase; whether
    the action is legal now is for :meth:`Game.step` (or :meth:`Match.play`) to say.
    """
    if not isinstance(text, str):
        raise ValueError(f"type a move, got {text!r}")
    t = " ".join(text.strip().lower().split())
    if not t:
        raise ValueError("empty input: type cards (e.g. 334455), 'pass', or 'help'")
    p = game.phase
    if p == Phase.BID:
        if t in ("pass", "p", "0", "bid 0", "bid pass", "no"):
            return BID_PASS
        b = t[4:] if t.startswith("bid ") else t
        if b in ("1", "2", "3"):
            return BID_PASS + int(b)
        raise ValueError(f"{text.strip()!r} is no bid: type 1, 2 or 3 to bid, or pass")
    if p in (Phase.DOUBLE, Phase.REDOUBLE):
        no, yes = DOUBLE_ACTIONS if p == Phase.DOUBLE else REDOUBLE_ACTIONS
        if t in _YES:
            return yes
        if t in _NO:
            return no
        word = "double" if p == Phase.DOUBLE else "redouble"
        raise ValueError(f"{text.strip()!r}: type '{word}' (or y) or 'no' (or n)")
    if p == Phase.PLAY:
        if t in ("pass", "p"):
            return PASS
        try:
            return move_id(t.replace(" ", ""))
        except ValueError as e:
            raise ValueError(str(e)) from None
    raise ValueError("the hand is over")


def _agent_decisions(game: Game, seat: int, stream: int) -> Decisions:
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[game.legal_actions()] = 1
    return Decisions.from_observation({"observation": observe_game(game, seat), "action_mask": mask}, seat=seat,
                                      stream=stream)


@dataclass
class Match:
    """One hand: ``agents[s]`` plays seat ``s`` (``None`` for a person); ``names[s]`` labels it.

    Agents are batch agents (``act_batch``; anything with ``act(observation)`` is wrapped), each
    acting on its own stream (its seat) and started with :func:`~agents.evaluation.arena.seat_seed` of the
    deal, as in evaluation.
    """

    game: Game
    agents: Sequence[Any]
    names: Sequence[str]
    seed: int = 0
    index: int = 0
    on_action: Callable[[int, int], None] | None = None  # (seat, action) after each agent action
    _wrapped: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if len(self.agents) != 3 or len(self.names) != 3:
            raise ValueError("a match seats 3 players: agents and names need 3 entries (None for a person)")
        self._wrapped = [None if a is None else as_batch_agent(a) for a in self.agents]
        for s, a in enumerate(self._wrapped):
            if a is not None and callable(getattr(a, "begin_hands", None)):
                a.begin_hands(np.array([s], np.int64), np.array([seat_seed(self.seed, self.index, s)], np.uint64))

    @classmethod
    def deal(cls, agents: Sequence[Any], names: Sequence[str], seed: int = 0, index: int = 0,
             rules: Any = None, landlord: int | None = None, **kwargs) -> "Match":
        """Deal ``index`` of ``seed`` (the cards :func:`~agents.evaluation.arena.make_deal` gives evaluation),
        played under ``rules`` (``Game``'s: default the rulebook; ``landlord`` only with bidding off)."""
        game = Game.from_deal(make_deal(seed, index), rules=rules, landlord=landlord)
        return cls(game, agents, names, seed=seed, index=index, **kwargs)

    @property
    def people(self) -> list[int]:
        return [s for s, a in enumerate(self._wrapped) if a is None]

    @property
    def to_act(self) -> int:
        return self.game.current_player

    def waiting_for_person(self) -> bool:
        return not self.game.is_over and self._wrapped[self.game.current_player] is None

    def step_agent(self) -> tuple[int, int]:
        """Let the agent on turn act once; (seat, action). ``RuntimeError`` naming the agent if it fails
        or picks an illegal action (the hand is left as it was)."""
        g = self.game
        s = g.current_player
        agent = self._wrapped[s]
        if g.is_over or agent is None:
            raise RuntimeError("no agent is to act")
        d = _agent_decisions(g, s, s)
        try:
            a = int(np.asarray(agent.act_batch(d))[0])
        except Exception as e:  # noqa: BLE001 - named with the seat and phase
            raise RuntimeError(f"agent {self.names[s]} failed at seat {s}, phase {g.phase.name}: "
                               f"{type(e).__name__}: {e}") from e
        if not g.is_legal(a):
            raise RuntimeError(f"agent {self.names[s]} chose illegal action {a} at seat {s}, phase {g.phase.name}")
        g.step(a)
        if self.on_action is not None:
            self.on_action(s, a)
        return s, a

    def advance(self) -> list[tuple[int, int]]:
        """Agents act until a person is to act or the hand is over; the (seat, action) they took."""
        done = []
        while not self.game.is_over and not self.waiting_for_person():
            done.append(self.step_agent())
        return done

    def play(self, seat: int, action: int | str) -> int:
        """A person at ``seat`` acts (an id or typed text); the id applied. ``IllegalActionError`` (or
        ``ValueError`` for text naming no action) leaves the hand unchanged."""
        g = self.game
        if g.is_over:
            raise IllegalActionError("the hand is over")
        if seat not in self.people:
            raise IllegalActionError(f"seat {seat} is not a person's seat")
        if g.current_player != seat:
            raise IllegalActionError(f"it is seat {g.current_player}'s turn, not seat {seat}'s")
        a = parse_action(action, g) if isinstance(action, str) else action
        if not g.is_legal(a):
            name = said(a) if isinstance(a, (int, np.integer)) and 0 <= a < NUM_ACTIONS else repr(a)
            raise IllegalActionError(f"{name} is not legal now ({_why_illegal(g, a)})")
        g.step(a, seat=seat)
        return int(a)

    def legal_names(self) -> list[str]:
        return [action_to_string(a) for a in self.game.legal_actions()]

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may see now (:func:`seat_view`)."""
        return seat_view(self.game, seat, self.names)

    def record(self, meta: dict | None = None) -> dict:
        return record_of(self.game, self.names, {"seed": self.seed, "deal": self.index, **(meta or {})})


def seat_view(game: Game, seat: int | None, names: Sequence[str] | None = None) -> dict[str, Any]:
    """What ``seat`` may see of ``game`` now, as JSON-able data; ``seat=None`` is a spectator who
    sees everything (a replay, or agents playing each other).

    A seat sees its own cards, the public history (another farmer's double is ``"?"`` until both
    have chosen, R5; its own choice it knows), the cards left per seat (R21), the bottom once
    revealed (R7) and its legal actions when on turn; the other hands only once the hand is over.
    """
    g = game
    names = list(names) if names is not None else ["seat 0", "seat 1", "seat 2"]
    over = g.is_over
    everything = seat is None
    hist = g.history if (g.doubles_revealed or everything) else g.public_history()
    history = []
    for k, (s, a) in enumerate(hist):
        if a == HIDDEN:
            if seat != s:
                history.append({"seat": s, "phase": "DOUBLE", "name": "?"})
                continue
            a = g.history[k][1]  # the seat's own secret choice
        history.append({"seat": s, "phase": phase_of_action(a), "name": action_to_string(a)})
    show = [everything or s == seat or over for s in range(3)]
    to_beat = None
    if g.phase == Phase.PLAY and g.last_move != PASS:
        to_beat = {"seat": int(g.last_mover), "cards": action_to_string(g.last_move)}
    on_turn = seat is not None and g.current_player == seat and not over
    return {
        "seat": seat, "players": names, "phase": g.phase.name, "to_act": int(g.current_player),
        "your_turn": on_turn,
        "hands": [counts_string(g.hands[s]) if show[s] else None for s in range(3)],
        "cards_left": [int(n) for n in g.n_cards],
        "roles": [ROLE_NAMES[g.role(s)] for s in range(3)],
        "landlord": int(g.landlord), "first_bidder": int(g.first_bidder),
        "bids": [int(b) for b in g.bids], "bid": int(g.bid),
        "doubled": [bool(d) if g.doubles_revealed else None for d in g.doubled()],
        "redoubled": bool(g.redoubled),
        "bottom": counts_string(g.bottom) if (g.bottom_revealed or everything) else None,
        "played": [counts_string(g.played[s]) for s in range(3)],
        "to_beat": to_beat,
        "history": history,
        "legal": [action_to_string(a) for a in g.legal_actions()] if on_turn else [],
        "over": bool(over),
        "result": record_of(g)["result"] if over else None,
        "stake": stake(g, seat),
        "outcome": outcome(g, seat) if over else None,
    }


def _known_doubles(game: Game, seat: int | None) -> np.ndarray:
    """The doubles ``seat`` may know: all once revealed (or for a spectator), else only its own (R5)."""
    if game.doubles_revealed or seat is None:
        return game.doubled()
    known = np.zeros(3, bool)
    known[seat] = bool(game.double_choice[seat] == 1)
    return known


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
    doubled = _known_doubles(g, seat)
    farmers = [f for f in range(3) if f != lord]
    args = (g.bid, lord, doubled, g.redoubled, g.bombs, g.rockets, g.spring, g.anti_spring, True)
    each = [int(x) for x in hand_scores(*args)]  # the farmers' stakes (a farmers' win) and the landlord's -(sum)
    base = int(hand_scores(g.bid, lord, np.zeros(3, bool), False, g.bombs, g.rockets, g.spring, g.anti_spring,
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
    g = game
    if not g.is_over:
        return None
    if g.void:
        return {"headline": "Void hand", "line": "void hand: everyone passed (R4), no score", "side": None}
    lord = int(g.landlord)
    side = "farmers" if g.winner != lord else "landlord"
    who = "farmers win" if side == "farmers" else "landlord wins"
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


def _why_illegal(game: Game, a) -> str:
    if game.phase == Phase.PLAY:
        if not isinstance(a, (int, np.integer)) or not 0 <= a < NUM_MOVES:
            return "it is the play phase: play cards or pass"
        if a == PASS:
            return "you lead: you cannot pass"
        if not (MOVE_COUNTS[a] <= game.hands[game.current_player]).all():
            return "you do not hold those cards"
        if game.last_move != PASS:
            return f"it does not beat {said(game.last_move)}"
        return "not a move you can lead"
    if game.phase == Phase.BID:
        if not isinstance(a, (int, np.integer)) or a not in BID_ACTIONS:
            return "it is the bidding: bid 1, 2, 3 or pass"
        return f"a bid must be above {game.bid}, or pass" if game.bid else "not a bid"
    return f"phase {game.phase.name}"


__all__ = ["Match", "seat_view", "stake", "outcome", "spaced", "said", "parse_action", "phase_of_action", "ROLE_NAMES"]
