"""PettingZoo's classic wrapper stack as one layer: :class:`ClassicWrapper` (what ``ddz_env.env()`` returns).

PettingZoo wraps its classic games in ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
TerminateIllegalWrapper(env)))``; :class:`ClassicWrapper` behaves the same in one attribute hop
(``__getattr__`` chains were ~45% of a step: ``benchmarks/bench_env.py``), and :func:`stock_wrappers`
builds the stock stack it is tested against (``tests/core/test_env_wrapper.py``).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger


def _owner(cls: type, name: str) -> type | None:
    """The class of ``cls``'s MRO that defines ``name`` (None: none does)."""
    return next((k for k in cls.__mro__ if name in k.__dict__), None)


def stock_wrappers(e: AECEnv) -> AECEnv:
    """``e`` in PettingZoo's own three classic wrappers (``ddz_env.env.stock_env``: what ``env()`` returned
    up to 0.1.0): the reference :class:`ClassicWrapper` is tested against, and a fallback."""
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


_BEFORE_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents",
                           "agents"})


class ClassicWrapper(wrappers.BaseWrapper):
    """PettingZoo's classic stack ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
    TerminateIllegalWrapper(env, illegal_reward)))`` as one layer, with the same behaviour:

    * order enforcing: ``step``, ``observe``, ``render``, ``state`` and ``agent_iter`` before
      ``reset`` raise ``AssertionError`` ("reset() needs to be called before ..."); ``rewards``,
      ``terminations``, ``truncations``, ``infos``, ``agent_selection``, ``num_agents`` and
      ``agents`` before ``reset`` raise ``AttributeError``; private attributes other than
      ``_cumulative_rewards`` are not forwarded; ``step`` once every agent is gone only warns; a loop
      over ``agent_iter`` must step (or reset) on each turn;
    * out of bounds: an action outside the action space (``None`` only for a dead agent) raises
      ``AssertionError("action is not in action space")``;
    * illegal move: an action that the acting agent's ``action_mask`` forbids warns (PettingZoo's
      text), ends the hand for every agent (terminated and truncated), gives ``illegal_reward`` to
      the offender and 0 to the others, and the dead agents then step out with ``None``.

    It is one attribute hop instead of three (``__getattr__`` chains were ~45% of a step) and it
    checks legality on the game (the mask's entry, without building a mask) for integer actions.
    ``tests/core/test_env_wrapper.py`` plays the same action sequences through this and the stock stack
    (:func:`stock_env`).
    """

    def __init__(self, env: AECEnv, illegal_reward: float = -1):
        assert isinstance(env, AECEnv), "ClassicWrapper is only compatible with AEC environments"
        self._has_reset = False
        self._has_updated = False
        super().__init__(env)
        self._illegal_value = illegal_reward
        self._terminated = False  # the hand was ended by an illegal move
        self._int_bounds: dict[Any, tuple[int, int]] = {}  # agent -> the range of its Discrete space
        # the env's step that reports an illegal move instead of raising (raw_env.try_step), when the class
        # that defines it defines step too (a subclass that changed step only gets its step called)
        self._apply = env.try_step if _owner(type(env), "try_step") is _owner(type(env), "step") is not None else None

    def __getattr__(self, name: str) -> Any:
        if name in _BEFORE_RESET and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        if name.startswith("_") and name != "_cumulative_rewards":
            raise AttributeError(f"accessing private attribute '{name}' is prohibited")
        return getattr(self.env, name)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        self._terminated = False
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: str) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        e = self.env
        agent = e.agent_selection
        assert agent is not None
        observation = self.observe(agent) if observe else None
        return observation, e._cumulative_rewards[agent], e.terminations[agent], e.truncations[agent], e.infos[agent]

    def agent_iter(self, max_iter: int = 2**63) -> "_AgentIterable":
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)

    def render(self) -> Any:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def step(self, action) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        e = self.env
        self._has_updated = True
        if not e.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = e.agent_selection
        dead = e.terminations[agent] or e.truncations[agent]
        # AssertOutOfBoundsWrapper's check (a Python int against a Discrete space without the call)
        if type(action) is int and agent in self._int_bounds:
            lo, hi = self._int_bounds[agent]
            inside = lo <= action < hi
        else:
            space = e.action_space(agent)
            inside = (action is None and dead) or space.contains(action)
            if type(space) is spaces.Discrete:  # (an agent's space never changes: PettingZoo's API)
                self._int_bounds[agent] = (int(space.start), int(space.start) + int(space.n))
        if not inside:
            raise AssertionError("action is not in action space")
        # TerminateIllegalWrapper's
        if dead:
            if self._terminated:
                e.unwrapped._was_dead_step(action)
            else:
                e.step(action)
            return
        if self._apply is not None and (type(action) is int or isinstance(action, (np.integer, np.ndarray))):
            # raw_env: the game refuses exactly the actions whose mask entry is 0 (and changes nothing then)
            if self._apply(agent, action) is None:
                return
        elif self.env.observe(agent)["action_mask"][action]:
            e.step(action)
            return
        self._end_by_illegal_move(agent)

    def _end_by_illegal_move(self, agent: str) -> None:
        EnvLogger.warn_on_illegal_move()
        u = self.env.unwrapped
        u._cumulative_rewards[agent] = 0
        u.terminations = dict.fromkeys(u.agents, True)
        u.truncations = dict.fromkeys(u.agents, True)
        u.rewards = dict.fromkeys(u.truncations, 0)
        u.rewards[agent] = float(self._illegal_value)
        u._accumulate_rewards()
        u._deads_step_first()
        self._terminated = True

    def __str__(self) -> str:
        return str(self.env)


class _AgentIterable(AECIterable):
    def __iter__(self) -> "_AgentIterator":
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECIterator):
    """``agent_iter``'s iterator: ``agent_selection`` while agents remain; each turn must step."""

    def __next__(self) -> str:
        wrapper = self.env
        e = wrapper.env
        if not e.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = e.agent_selection
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return agent


__all__ = ["ClassicWrapper", "stock_wrappers"]
