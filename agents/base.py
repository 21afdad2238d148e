"""The one agent interface: any agent can sit at any seat, in any phase.

An agent sees what the environment gives the seat on turn: the observation dict
``{"observation": planes (29, 4, 15) int8, "action_mask": (24648,) int8}`` and the raw
env (``env.unwrapped``) for its helpers (``legal_actions()``, ``action_string()``,
``default_action()``). It returns one legal action id, whatever the phase: bid,
double, redouble or play.

Fair play: an agent may use only what its seat may know (R21): the observation
planes, ``legal_actions()``, and the public parts of ``env.game``. Never another
seat's hand.

``reset(seed)`` is optional: an evaluator calls it before every hand with a seed
that depends on the deal and the seat only, so that two identical agents make the
same choices in every seating (what makes duplicate self-play score exactly 0).
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observation, env) -> action id`` (``reset(seed=None)`` optional)."""

    def act(self, observation: dict[str, np.ndarray], env: Any) -> int:
        ...


def legal_ids(observation: dict[str, np.ndarray], env: Any = None) -> np.ndarray:
    """Legal action ids of the seat on turn: from the env's cached helper, else from the mask."""
    if env is not None and hasattr(env, "legal_actions"):
        return np.asarray(env.legal_actions())
    return np.flatnonzero(np.asarray(observation["action_mask"]).view(bool))


def reset_agent(agent: Any, seed: int | None) -> None:
    """Call ``agent.reset(seed=...)`` if the agent has a ``reset`` (a plain ``reset()`` is fine too)."""
    reset = getattr(agent, "reset", None)
    if reset is None:
        return
    try:
        reset(seed=seed)
    except TypeError:  # a reset() without a seed argument
        reset()


__all__ = ["Agent", "legal_ids", "reset_agent"]
