"""The one agent interface: decisions in, action ids out, from what a seat is given.

A decision is what the environment gives the seat on turn, nothing more (R21): its
observation planes (29, 4, 15), its legal action ids, and the public facts the planes
carry (phase, role), plus the absolute seat when the caller knows it. A batch of them
is a `Decisions` record, with the legal sets in the compact form of the batched
env (``legal_ids[legal_starts[i]:legal_starts[i + 1]]`` for decision ``i``).

An agent implements

* ``act_batch(decisions) -> (N,) action ids``: the core method, one legal id per
  decision, whatever the phase (bid, double, redouble, play);
* ``act(observation) -> action id``: one decision, from the observation dict the AEC env
  gives (``{"observation": planes, "action_mask": mask}``), no env object needed;
* ``begin_hands(streams, seeds)`` (optional): hands start. A *stream* is one seat's
  series of decisions in one hand (the evaluator numbers them ``3 * table + seat``); an
  agent that keeps state between decisions (a random generator, a memory) keeps it per
  stream, and reseeds the given streams with the given seeds. ``reset(seed)`` is the
  same for stream 0, the stream of ``act``.
* ``release()`` (optional): let go of what the agent holds outside this process (a program it started, a
  connection: ``agents.external``) until its next decision; the evaluation calls it when its hands end.

`BatchAgent` is a base class that supplies ``act`` and ``reset`` from
``act_batch`` and ``begin_hands``. `as_batch_agent` turns any object with
``act(observation)`` into a batch agent (one copy of it per stream), so a user's
one-decision agent plays in the batched evaluation unchanged.

Evaluators seed each stream with a number that depends on the deal and the seat only,
so two identical agents make the same choices in every seating (what makes duplicate
self-play score exactly 0), and a hand's result does not depend on the batch it was in.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_SHAPE
from ddz_env.readers import read_status


@dataclass(frozen=True)
class Decisions:
    """N decisions: what each seat on turn is given (arrays, decision ``i`` in row ``i``)."""

    observation: np.ndarray  # (N, 29, 4, 15) int8 planes of the seat on turn
    legal_ids: np.ndarray  # (M,) int64 legal ids, sorted within each decision
    legal_starts: np.ndarray  # (N + 1,) int64: decision i's ids are legal_ids[legal_starts[i]:legal_starts[i + 1]]
    phase: np.ndarray  # (N,) int64: the ddz_env.rules.Phase (the status plane's phase)
    role: np.ndarray  # (N,) int64: the ddz_env.rules.Role (0 landlord, 1 farmer after it, 2 before it); -1 while bidding
    seat: np.ndarray  # (N,) int64 absolute seat 0..2; -1 where the caller does not say
    stream: np.ndarray  # (N,) int64: the (hand, seat) series each decision belongs to (see the module doc)

    def __len__(self) -> int:
        return int(self.phase.shape[0])

    def legal(self, i: int) -> np.ndarray:
        """Decision ``i``'s legal ids."""
        return self.legal_ids[self.legal_starts[i]:self.legal_starts[i + 1]]

    def observation_dict(self, i: int) -> dict[str, np.ndarray]:
        """Decision ``i`` as the AEC env gives it: planes and the dense int8 action mask."""
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[self.legal(i)] = 1
        return {"observation": self.observation[i], "action_mask": mask}

    def take(self, idx: np.ndarray) -> "Decisions":
        """The decisions ``idx`` (an index array), as a new record."""
        idx = np.asarray(idx, dtype=np.int64)
        starts, ids = take_sets(self.legal_starts, self.legal_ids, idx)
        return Decisions(self.observation[idx], ids, starts, self.phase[idx], self.role[idx], self.seat[idx],
                         self.stream[idx])

    @classmethod
    def of_tables(cls, idx: np.ndarray, observation: np.ndarray, legal_ids: np.ndarray, legal_starts: np.ndarray,
                  phase: np.ndarray, role: np.ndarray, seat: np.ndarray) -> "Decisions":
        """The decisions of tables ``idx`` of a batched env, from its (B, ...) arrays (its compact legal
        sets ``legal_ids``/``legal_starts``, the seat to act per table); the stream of table b's seat s
        is ``b * 3 + s``."""
        starts, ids = take_sets(legal_starts, legal_ids, idx)
        s = seat[idx].astype(np.int64)
        return cls(observation[idx], ids, starts, phase[idx].astype(np.int64), role[idx], s, idx * 3 + s)

    @classmethod
    def of_env(cls, env: Any, idx: np.ndarray | None = None, *, observation: np.ndarray | None = None,
               legal_sets: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> "Decisions":
        """The decisions of tables ``idx`` (default: every table) of a batched env (``VectorDouDizhu``): the
        seat to act at each, its planes, legal ids, phase and role (`of_tables`). ``observation`` (B, 29,
        4, 15) and ``legal_sets`` (what ``env.legal_sets()`` returns): the env's, already taken at this
        step (else taken here)."""
        idx = np.arange(env.num_envs) if idx is None else idx
        if observation is None:
            observation = env.observe()
        _, ids, starts = env.legal_sets() if legal_sets is None else legal_sets
        return cls.of_tables(idx, observation, ids, starts, env.phase.astype(np.int64), env.roles(),
                             env.current_player)

    @classmethod
    def from_observation(cls, observation: dict[str, np.ndarray], seat: int = -1, stream: int = 0) -> "Decisions":
        """One decision from the AEC env's observation dict (planes + action mask)."""
        try:
            planes = np.asarray(observation["observation"])
            mask = np.asarray(observation["action_mask"])
        except (TypeError, KeyError, IndexError):
            raise ValueError("an observation is a dict with 'observation' (29, 4, 15) planes and an "
                             f"'action_mask' ({NUM_ACTIONS},); got {type(observation).__name__}") from None
        if planes.shape != OBS_SHAPE or mask.shape != (NUM_ACTIONS,):
            raise ValueError(f"observation planes must be {OBS_SHAPE} and the action mask ({NUM_ACTIONS},); "
                             f"got {planes.shape} and {mask.shape}")
        legal = np.flatnonzero(mask.view(bool) if mask.dtype in (np.int8, np.uint8) else mask).astype(np.int64)
        phase, role = public_facts(planes[None])
        return cls(planes[None].astype(np.int8, copy=False), legal, np.array([0, legal.size], np.int64), phase,
                   role, np.array([seat], np.int64), np.array([stream], np.int64))


def public_facts(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(phase, role) of (N, 29, 4, 15) planes, read from the status plane (``readers.read_status``;
    role -1 while bidding)."""
    status = read_status(planes)
    return status.phase, status.role


def take_sets(starts: np.ndarray, ids: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The compact legal sets of rows ``idx``: (new starts (len(idx) + 1,), their ids)."""
    counts = starts[idx + 1] - starts[idx]
    new_starts = np.zeros(idx.size + 1, np.int64)
    np.cumsum(counts, out=new_starts[1:])
    pos = np.arange(new_starts[-1]) - np.repeat(new_starts[:-1] - starts[idx], counts)
    return new_starts, ids[pos]


def illegal_choices(decisions: Decisions, actions: np.ndarray) -> np.ndarray:
    """Indices of the decisions whose action is not one of their legal ids (vectorized)."""
    n = len(decisions)
    counts = np.diff(decisions.legal_starts)
    # decision-major keys: sorted, since each decision's ids are sorted
    keys = np.repeat(np.arange(n, dtype=np.int64), counts) * NUM_ACTIONS + decisions.legal_ids
    if keys.size == 0:
        return np.arange(n)
    want = np.arange(n, dtype=np.int64) * NUM_ACTIONS + actions
    pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
    ok = (actions >= 0) & (actions < NUM_ACTIONS) & (keys[pos] == want)
    return np.flatnonzero(~ok)


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act_batch(decisions)`` and ``act(observation)`` (``begin_hands`` optional)."""

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        ...

    def act(self, observation: dict[str, np.ndarray]) -> int:
        ...


class BatchAgent:
    """Base class: implement ``act_batch``; ``act``, ``reset`` and ``begin_hands`` come with it."""

    name = "agent"

    def act_batch(self, decisions: Decisions) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        """Hands start in ``streams``, seeded with ``seeds``: a stateless agent has nothing to do."""

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """One decision (stream 0) from the AEC env's observation dict; no env object needed."""
        d = Decisions.from_observation(observation)
        if d.legal_ids.size == 0:
            raise ValueError(f"{type(self).__name__}.act: no legal action (is this seat on turn?)")
        return int(self.act_batch(d)[0])

    def reset(self, seed: int | None = None) -> None:
        """Start a hand on stream 0 (the stream of ``act``); ``seed`` reseeds a random agent."""
        if seed is not None:
            self.begin_hands(np.array([0], np.int64), np.array([int(seed)], np.uint64))


class PerDecisionAgent(BatchAgent):
    """A batch agent over an object that decides one observation at a time (``act(observation)``).

    Each stream gets its own deep copy of the object, reset with the stream's seed when its
    hand starts (``reset(seed=...)``, if the object has one), so per-hand state never mixes.
    """

    def __init__(self, agent: Any):
        if not callable(getattr(agent, "act", None)):
            raise TypeError(f"an agent has act(observation) or act_batch(decisions); got {agent!r}")
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)
        self._copies: dict[int, Any] = {}

    def _copy(self, stream: int):
        c = self._copies.get(stream)
        if c is None:
            c = self._copies[stream] = copy.deepcopy(self.agent)
        return c

    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        for s, seed in zip(np.asarray(streams).tolist(), np.asarray(seeds).tolist()):
            reset_agent(self._copy(s), int(seed))

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        out = np.empty(len(decisions), np.int64)
        for i, s in enumerate(decisions.stream.tolist()):
            out[i] = int(self._copy(s).act(decisions.observation_dict(i)))
        return out

    def __repr__(self) -> str:
        return repr(self.agent)


def as_batch_agent(agent: Any) -> Any:
    """``agent`` itself if it has ``act_batch``; else a `PerDecisionAgent` around it."""
    if callable(getattr(agent, "act_batch", None)):
        return agent
    return PerDecisionAgent(agent)


def legal_ids(observation: dict[str, np.ndarray]) -> np.ndarray:
    """Legal action ids of one observation dict (from its action mask)."""
    mask = np.asarray(observation["action_mask"])
    return np.flatnonzero(mask.view(bool) if mask.dtype in (np.int8, np.uint8) else mask)


def reset_agent(agent: Any, seed: int | None) -> None:
    """Call ``agent.reset(seed=...)`` if the agent has a ``reset`` (a plain ``reset()`` is fine too)."""
    reset = getattr(agent, "reset", None)
    if reset is None:
        return
    try:
        reset(seed=seed)
    except TypeError:  # a reset() without a seed argument
        reset()


__all__ = ["Agent", "BatchAgent", "Decisions", "PerDecisionAgent", "as_batch_agent", "illegal_choices",
           "legal_ids", "public_facts", "reset_agent", "take_sets"]
