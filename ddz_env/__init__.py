"""ddz-env: Dou Dizhu (the 2016 competitive rulebook) for reinforcement learning.

Layers, lowest first (a module imports only from those before it; ``tests/project/test_layers.py``):
``cards`` / ``files`` -> ``moves`` (the move table) / ``scoring`` -> ``actions`` / ``legal``
(vectorized legality) -> ``rules`` (the rulings, ``Rules``, ``Deal``) -> ``observation`` (the planes)
-> ``readers`` (the planes read back) -> ``game`` (one hand) / ``batch`` (B hands' state) / ``info`` ->
``transitions`` (B hands stepped as arrays) -> ``vector`` (``VectorDouDizhu``) / ``record`` (hand
records) / ``beliefs`` / ``classic`` -> ``env`` (PettingZoo AEC) / ``view``. Nothing here imports
``agents`` (the single-seat Gymnasium env, which seats agents, is ``agents.integrations.seat_env``).
Importing the package registers ``ddz/dou_dizhu-v0`` with PettingZoo's registry.

PettingZoo and Gymnasium are needed by ``env`` / ``raw_env`` only: without them the rules core
(``Game``, ``rules``, ``VectorDouDizhu``, ``record``) still imports, and ``ddz_env.env`` raises an
``ImportError`` that names the missing package.
"""
from __future__ import annotations

from .actions import NUM_ACTIONS, action_from_string, action_to_string
from .cards import parse_cards, to_string
from .game import Game, IllegalActionError, Phase
from .info import GAME, GameInfo
from .legal import legal_mask, legal_mask_batch, legal_moves
from .moves import NUM_MOVES, MoveType, classify, move_id, move_to_string
from .rules import PRESETS, Rules
from .vector import VectorDouDizhu, VectorEnv

ENV_ID = "ddz/dou_dizhu-v0"
_ENV_MISSING: ImportError | None = None
try:
    from .env import env, raw_env
except ImportError as _e:  # only a missing PettingZoo / Gymnasium is tolerated, any other error is raised
    if (_e.name or "").split(".")[0] not in ("pettingzoo", "gymnasium"):
        raise
    _ENV_MISSING = _e


def _register() -> None:
    if _ENV_MISSING is not None:
        return
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
_MOVED = {"DouDizhuSeatEnv": "agents.integrations.seat_env", "register_gymnasium": "agents.integrations.seat_env",
          "SEAT_ENV_ID": "agents.integrations.seat_env", "seat_env": "agents.integrations.seat_env"}


def __getattr__(name: str):
    if name in ("env", "raw_env") and _ENV_MISSING is not None:
        raise ImportError(f"ddz_env.{name} (the PettingZoo AEC env) needs {_ENV_MISSING.name}, which is not installed "
                          f"(pip install pettingzoo gymnasium); the rules core (Game, Rules, VectorDouDizhu) works "
                          f"without it") from _ENV_MISSING
    if name in _MOVED:
        raise AttributeError(f"ddz_env.{name} moved to {_MOVED[name]} (the single-seat env plays agents at the other "
                             f"seats; the rules core never imports agents): import it from {_MOVED[name]}")
    raise AttributeError(f"module 'ddz_env' has no attribute {name!r}")
__all__ = [
    "env", "raw_env", "Game", "Phase", "Rules", "PRESETS", "IllegalActionError", "MoveType", "NUM_ACTIONS", "NUM_MOVES",
    "parse_cards", "to_string", "classify", "move_id", "move_to_string", "legal_mask", "legal_mask_batch",
    "legal_moves", "action_to_string", "action_from_string", "ENV_ID", "VectorDouDizhu", "VectorEnv", "GAME", "GameInfo",
]
