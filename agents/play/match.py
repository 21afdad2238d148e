"""One hand between people and agents: the core of terminal play and the web page.

A :class:`Match` holds a :class:`~ddz_env.game.Game`, the agents in their seats and which
seats are people. :meth:`Match.advance` lets the agents act until a person is to act or the
hand is over; :meth:`Match.play` applies a person's action (validated first: an illegal one
raises and leaves the hand as it was). :meth:`Match.view` is everything one seat may know,
as plain JSON-able data: :func:`ddz_env.view.seat_view` (the core's observer of people, which
asks ``ddz_env.observation`` what a seat may know, R5 and R21); both front ends show a seat
nothing but this view. ``seat_view``, ``stake``, ``outcome``, ``spaced``, ``said`` and
``ROLE_NAMES`` are re-exported from there.

:func:`parse_action` reads what a person types: cards in any order (``10`` for T, ``BJ``/``RJ`` or
``B``/``R`` for the jokers, lower case fine), ``pass``, a bid ``0``-``3`` / ``bid 2``, ``double`` / ``no``,
``redouble`` / ``no``. A move refused (text naming no action, or an illegal one) is a
:class:`~agents.play.explain.Refusal` saying in plain words what was tried and what the table needs
(``You tried a pair of 5s. The table needs a pair higher than 8s, or a bomb, or the rocket.``), the
ruling as a detail: :mod:`agents.play.explain`, shared by the terminal and the web page.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ddz_env.actions import action_to_string
from ddz_env.game import Game, IllegalActionError
from ddz_env.observation import observe_game
from ddz_env.record import record_of
from ddz_env.view import ROLE_NAMES, outcome, said, seat_view, spaced, stake

from ..evaluation.arena import make_deal, seat_seed
from ..base import Decisions, as_batch_agent
from .explain import Refusal, parse_action, refuse

def _agent_decisions(game: Game, seat: int, stream: int) -> Decisions:
    """The decision of ``seat`` on turn, from the game's legal ids (no dense mask on the way); the phase and role
    are the game's (what the planes' status plane says: ``Phase`` and ``Game.role``), not read back out of them."""
    planes = observe_game(game, seat)[None]
    legal = np.asarray(game.legal_actions(), np.int64)
    return Decisions(planes, legal, np.array([0, legal.size], np.int64), np.array([int(game.phase)], np.int64),
                     np.array([game.role(seat)], np.int64), np.array([seat], np.int64), np.array([stream], np.int64))


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
        try:
            g.step(a)  # checked there, once: an illegal action changes nothing
        except IllegalActionError:
            raise RuntimeError(f"agent {self.names[s]} chose illegal action {a} at seat {s}, "
                               f"phase {g.phase.name}") from None
        if self.on_action is not None:
            self.on_action(s, a)
        return s, a

    def advance(self) -> list[tuple[int, int]]:
        """Agents act until a person is to act or the hand is over; the (seat, action) they took."""
        done = []
        while not self.game.is_over and not self.waiting_for_person():
            done.append(self.step_agent())
        return done

    def advance_views(self, seat: int | None) -> list[dict[str, Any]]:
        """Agents act until a person is to act or the hand is over; what ``seat`` may see after each of
        their actions (:meth:`view`), in order: the web page shows them one after another."""
        views = []
        while not self.game.is_over and not self.waiting_for_person():
            self.step_agent()
            views.append(self.view(seat))
        return views

    def play(self, seat: int, action: int | str, words: Sequence[str] = ()) -> int:
        """A person at ``seat`` acts (an id or typed text); the id applied. An illegal action, or text naming
        none, raises a :class:`~agents.play.explain.Refusal` (an ``IllegalActionError``, so a ``ValueError``)
        saying why in plain words, and leaves the hand unchanged; ``words``: the front end's own commands,
        for the did-you-mean of a typo."""
        g = self.game
        if g.is_over:
            raise IllegalActionError("the hand is over")
        if seat not in self.people:
            raise IllegalActionError(f"seat {seat} is not a person's seat")
        if g.current_player != seat:
            raise IllegalActionError(f"it is seat {g.current_player}'s turn, not seat {seat}'s")
        a = parse_action(action, g, words) if isinstance(action, str) else action
        try:
            g.step(a, seat=seat)  # legality checked there, once: an illegal action changes nothing
        except IllegalActionError:
            refuse(g, a)  # why, in words (only for a move refused)
            raise
        return int(a)

    def legal_names(self) -> list[str]:
        return [action_to_string(a) for a in self.game.legal_actions()]

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may see now (:func:`seat_view`)."""
        return seat_view(self.game, seat, self.names)

    def record(self, meta: dict | None = None) -> dict:
        return record_of(self.game, self.names, {"seed": self.seed, "deal": self.index, **(meta or {})})


__all__ = ["Match", "Refusal", "seat_view", "stake", "outcome", "spaced", "said", "parse_action", "ROLE_NAMES"]
