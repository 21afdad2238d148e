"""The env in other shapes for other libraries: :class:`DouDizhuSeatEnv`, one seat of the game as a
single-agent Gymnasium env with agents at the other two seats (``gymnasium.make("ddz/DouDizhuSeat-v0")``,
registered when ``agents`` is imported), for Stable-Baselines3 and other single-agent libraries.
"""
from __future__ import annotations

from .._exports import lazy

__getattr__, __dir__ = lazy(__name__, {"DouDizhuSeatEnv": ".seat_env", "SEAT_ENV_ID": ".seat_env",
                                       "register_gymnasium": ".seat_env"})
__all__ = ["DouDizhuSeatEnv", "SEAT_ENV_ID", "register_gymnasium"]
