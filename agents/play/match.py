"""One hand between people and agents: the core of terminal play and the web page.

A :class:`Match` holds a :class:`~ddz_env.game.Game`, the agents in their seats and which
seats are people. :meth:`Match.advance` lets the agents act until a person is to act or the
hand is over; :meth:`Match.play` applies a person's action (validated first: an illegal one
raises and leaves the hand as it was). :meth:`Match.view` is everything one seat may know,
as plain JSON-able data: :func:`ddz_env.view.seat_view` (the core's observer of people, which
asks ``ddz_env.observation`` what a seat may know, R5 and R21); both front ends show a seat
nothing but this view. ``seat_view``, ``stake``, ``outcome``, ``spaced``, ``said`` and
``ROLE_NAMES`` are re-exported from there.

:func:`parse_action` reads what a person types: cards in any order (``10`` for T, lower case
fine), ``pass``, a bid ``0``-``3`` / ``bid 2``, ``double`` / ``no``, ``redouble`` / ``no``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ddz_env.actions import BID_ACTIONS, BID_PASS, DOUBLE_ACTIONS, NUM_ACTIONS, REDOUBLE_ACTIONS, action_to_string, phase_of
from ddz_env.game import Game, IllegalActionError, Phase
from ddz_env.moves import MOVE_COUNTS, NUM_MOVES, PASS, move_id
from ddz_env.observation import observe_game
from ddz_env.record import record_of
from ddz_env.view import ROLE_NAMES, outcome, said, seat_view, spaced, stake

from ..evaluation.arena import make_deal, seat_seed
from ..base import Decisions, as_batch_agent, public_facts

_YES = {"y", "yes", "double", "redouble", "d", "r"}
_NO = {"n", "no", "no double", "no redouble", "pass", "p"}




#: (the former name of ``ddz_env.actions.phase_of``)
phase_of_action = phase_of


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
    """The decision of ``seat`` on turn, from the game's legal ids (no dense mask on the way)."""
    planes = observe_game(game, seat)[None]
    legal = np.asarray(game.legal_actions(), np.int64)
    phase, role = public_facts(planes)
    return Decisions(planes, legal, np.array([0, legal.size], np.int64), phase, role, np.array([seat], np.int64),
                     np.array([stream], np.int64))


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
