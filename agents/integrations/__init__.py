"""The game for other libraries: the single-agent seat env, the move-scoring policy every MARL library learns
through, each library's adapter and the one run and session they share.

| module | job |
|---|---|
| `seat_env` | `DouDizhuSeatEnv`: one seat as a Gymnasium env, agents at the other two (``gymnasium.make("ddz/DouDizhuSeat-v0")``, registered here by `register_gymnasium`) |
| `move_policy` | the move-scoring policy: DMC's trunk scoring each legal move, its distributions and its export format (`policy.pt`) |
| `sb3.policy`, `tianshou.nets`, `torchrl.modules` with `torchrl.learner`, `rllib.module` | each library's adapter and its ``train`` (``train.py --config sb3/tianshou/torchrl/rllib``; self-play over compact legal sets without a library is `agents.ppo`) |
| `seat_vector`, `rllib.tables` | batched tables for the libraries: one seat a table (Tianshou, SB3), RLlib's vector env and its env runners (RLlib's loop, or one of whole hands) |
| `options`, `targets` | what every learner shares: each option's one name, check and help; a hand's targets (the run itself: `agents.runs.session`, `agents.runs.library`) |
| `rllib.files` | reading RLlib checkpoints (ONNX export and the `onnx:` agent: `agents.onnx`) |
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
