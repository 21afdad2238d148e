"""The env in other shapes for other libraries: :class:`DouDizhuSeatEnv`, one seat of the game as a
single-agent Gymnasium env with agents at the other two seats (``gymnasium.make("ddz/DouDizhuSeat-v0")``,
registered when ``agents`` is imported), for Stable-Baselines3 and other single-agent libraries.
"""
from __future__ import annotations

from .._exports import lazy

#: the seat env's Gymnasium id
SEAT_ENV_ID = "ddz/DouDizhuSeat-v0"


def register_gymnasium() -> None:
    """Register ``ddz/DouDizhuSeat-v0`` with Gymnasium (idempotent): ``gymnasium.make("ddz/DouDizhuSeat-v0",
    seat=0)``. The one registration: ``import agents`` calls it. The entry point is a string, so the seat env's
    module loads only when an env is made. Without gymnasium (or numpy) nothing can call ``gymnasium.make``:
    nothing is registered then, so that a program run by a Python that lacks the packages reaches its own
    one-line error (`agents._entry`)."""
    try:
        import gymnasium
    except ModuleNotFoundError:
        return
    if SEAT_ENV_ID not in gymnasium.registry:
        gymnasium.register(id=SEAT_ENV_ID, entry_point="agents.integrations.seat_env:DouDizhuSeatEnv")


__getattr__, __dir__ = lazy(__name__, {"DouDizhuSeatEnv": ".seat_env"})
__all__ = ["DouDizhuSeatEnv", "SEAT_ENV_ID", "register_gymnasium"]
