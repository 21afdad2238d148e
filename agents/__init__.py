"""Baseline agents for ddz-env and their head-to-head evaluation.

* :class:`Agent`: the interface, ``act_batch(decisions) -> action ids`` over :class:`Decisions`
  (what the seats on turn are given) and ``act(observation) -> action id``; :class:`BatchAgent`
  is the base class that derives ``act`` from ``act_batch``;
* :class:`RandomAgent`: uniform over legal actions, seeded;
* :class:`RuleAgent`: a deterministic heuristic player (hand decomposition, see ``hand.py``);
* :func:`load`: an agent by name (``"random"``, ``"rule"``) or from a checkpoint path;
  :func:`register` plugs in new kinds;
* :func:`evaluate`: duplicate or fixed-landlord matches (``evaluate.py`` is the CLI);
* :class:`DouDizhuSeatEnv`: one seat as a single-agent Gymnasium env, agents at the other two
  (importing ``agents`` registers ``gymnasium.make("ddz/DouDizhuSeat-v0")``).
"""
from __future__ import annotations

from .arena import AgentError
from .base import Agent, BatchAgent, Decisions, as_batch_agent
from .evaluation import evaluate
from .loader import load, read_checkpoint, register, register_lazy, registered, save_checkpoint
from .random_agent import RandomAgent
from .rule_agent import RuleAgent
from .seat_env import SEAT_ENV_ID, DouDizhuSeatEnv, register_gymnasium

register_gymnasium()

__all__ = ["Agent", "BatchAgent", "Decisions", "AgentError", "as_batch_agent", "RandomAgent", "RuleAgent", "load", "register", "register_lazy", "registered",
           "read_checkpoint", "save_checkpoint", "evaluate", "DouDizhuSeatEnv", "SEAT_ENV_ID", "register_gymnasium"]
