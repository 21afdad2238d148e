"""ddz-env: Dou Dizhu (the 2016 competitive rulebook) for reinforcement learning.

Layers: ``cards`` -> ``moves`` (the move table) -> ``legal`` (vectorized legality) ->
``game`` (one hand) / ``scoring`` -> ``observation`` -> ``env`` (PettingZoo AEC) and
``vector`` (B hands stepped as arrays); ``record`` (hand records). Nothing here imports
``agents`` (the single-seat Gymnasium env, which seats agents, is ``agents.seat_env``).
Importing the package registers ``ddz/dou_dizhu-v0`` with PettingZoo's registry.
"""
from __future__ import annotations

from .actions import NUM_ACTIONS, action_from_string, action_to_string
from .cards import parse_cards, to_string
from .env import env, raw_env
from .game import Game, IllegalActionError, Phase
from .legal import legal_mask, legal_mask_batch, legal_moves
from .moves import NUM_MOVES, MoveType, classify, move_id, move_to_string
from .vector import VectorDouDizhu, VectorEnv

ENV_ID = "ddz/dou_dizhu-v0"


def _register() -> None:
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:  # an older PettingZoo without a registry
        return
    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="ddz_env.env:env")


_register()


def _version() -> str:
    """The installed distribution's version; from a clone that is not installed, pyproject's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ddz-env")
    except PackageNotFoundError:
        import os
        import re

        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml")
        try:
            with open(path, encoding="utf-8") as f:
                m = re.search(r'^version = "([^"]+)"', f.read(), re.M)
        except OSError:
            m = None
        return m.group(1) if m else "0+unknown"


__version__ = _version()

#: names that moved up a layer: the seat env plays agents at the other seats, and ddz_env never imports agents
_MOVED = {"DouDizhuSeatEnv": "agents.seat_env", "register_gymnasium": "agents.seat_env",
          "SEAT_ENV_ID": "agents.seat_env", "seat_env": "agents.seat_env"}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"ddz_env.{name} moved to {_MOVED[name]} (the single-seat env plays agents at the other "
                             f"seats; the rules core never imports agents): import it from {_MOVED[name]}")
    raise AttributeError(f"module 'ddz_env' has no attribute {name!r}")
__all__ = [
    "env", "raw_env", "Game", "Phase", "IllegalActionError", "MoveType", "NUM_ACTIONS", "NUM_MOVES",
    "parse_cards", "to_string", "classify", "move_id", "move_to_string", "legal_mask", "legal_mask_batch",
    "legal_moves", "action_to_string", "action_from_string", "ENV_ID", "VectorDouDizhu", "VectorEnv",
]
