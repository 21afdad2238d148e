"""RLlib (ray 2.x, new API stack): the move-scoring policy as an ``RLModule``, and PPO in self-play.

======================================  =====================================================================
:class:`RLlibObs`                       PettingZoo wrapper: each observation as the ``{"observations" float32
                                        (1740,), "action_mask" float32 (24648,)}`` dict RLlib's masking
                                        modules read
:func:`make_env`                        RLlib's multi-agent env: ``PettingZooEnv(RLlibObs(AEC env))``
:class:`MoveScoringRLModule`            ``TorchRLModule`` + ``ValueFunctionAPI``: the logits are
                                        :class:`~agents.integrations.move_policy.MoveScoringPolicy`'s (each
                                        legal move scored from its own features, ``FLOAT_MIN`` at illegal
                                        ids), the values its value head; ``model_config`` takes
                                        ``state_layers``, ``head_layers``, ``init`` (``"pretrained"``)
:func:`build_config`                    ``PPOConfig``: one module, ``"shared"``, plays all three seats
                                        (self-play, RLlib's multi-agent idiom: ``policy_mapping_fn``)
:func:`train`                           PPO to a time budget, checkpointed and resumable; the policy exported
                                        as ``policy.pt`` (``train.py --config rllib``; the benchmark's
                                        contract)
======================================  =====================================================================

Ray pins an older Gymnasium than the other libraries: this module runs in the RLlib venv
(``make setup-rllib``). What it writes is read anywhere, without ray: ``policy.pt`` by ``agents.load``,
a run folder or an RLlib checkpoint by ``agents.load("rllib:DIR")``
(:mod:`agents.integrations.rllib_files`).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from ddz_env.actions import NUM_ACTIONS
from ddz_env.observation import OBS_CELLS, OBS_SHAPE

from .move_policy import GumbelCategorical, MoveScoringPolicy, save_policy
from .rllib_files import MODULE_ID, POLICY_FILE


# ---------------------------------------------------------------------------------------------- env
class RLlibObs(BaseWrapper):
    """AEC wrapper: observation -> ``{"observations": float32 (1740,), "action_mask": float32 (24648,)}``."""

    _space = spaces.Dict({
        "observations": spaces.Box(0.0, 1.0, (OBS_CELLS,), np.float32),
        "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
    })

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        o = self.env.observe(agent)
        return {"observations": o["observation"].reshape(-1).astype(np.float32),
                "action_mask": o["action_mask"].astype(np.float32)}


def make_env(config: dict | None = None):
    """RLlib's multi-agent env: ``PettingZooEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0", **config)))``."""
    import pettingzoo
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    import ddz_env  # noqa: F401  (registers ddz/dou_dizhu-v0)

    return PettingZooEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0", **dict(config or {}))))


# ---------------------------------------------------------------------------------------------- module
class GumbelTorchCategorical(TorchCategorical):
    """RLlib's ``TorchCategorical`` drawn by Gumbel-max (:class:`~agents.integrations.move_policy.GumbelCategorical`,
    the same distribution without ``torch.multinomial`` over the 24,648 ids): the module's exploration
    distribution."""

    def _get_torch_distribution(self, logits=None, probs=None):
        return GumbelCategorical(logits=logits, probs=probs, validate_args=False)


class MoveScoringRLModule(TorchRLModule, ValueFunctionAPI):
    """The move-scoring policy as an RLlib ``RLModule``: ``Columns.ACTION_DIST_INPUTS`` are its logits over
    the 24,648 ids (illegal ones ``FLOAT_MIN``: RLlib's categorical never samples them), ``compute_values``
    its value head. The observation is :class:`RLlibObs`'s dict."""

    def setup(self):
        c = dict(self.model_config or {})
        if c.get("init"):
            self.policy = MoveScoringPolicy.from_dmc(c["init"])
        else:
            self.policy = MoveScoringPolicy(state_layers=c.get("state_layers", (256,)),
                                            head_layers=c.get("head_layers", (128,)), hand_after=True)

    def _inputs(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        planes = obs["observations"].reshape((-1,) + OBS_SHAPE)
        mask = obs["action_mask"].reshape(planes.shape[0], -1) > 0.5
        empty = ~mask.any(-1)
        if bool(empty.any()):  # (a finished seat's last observation: no legal id; only its value is read)
            mask = mask.clone()
            mask[empty, 0] = True
        return planes, mask

    def get_exploration_action_dist_cls(self):
        return GumbelTorchCategorical

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        planes, mask = self._inputs(batch)
        logits, _ = self.policy(planes, mask, fill=FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        planes, _ = self._inputs(batch)
        return self.policy.value(planes).reshape(-1)


def build_config(*, num_envs: int = 1, batch: int = 1024, minibatch: int = 256, epochs: int = 2,
                 learning_rate: float = 1e-3, state_layers=(256,), head_layers=(128,), init: str | None = None,
                 reward_scale: float = 0.05, seed: int = 0, env_name: str = "ddz_rllib"):
    """PPO (new API stack) with :class:`MoveScoringRLModule` as the one module ``"shared"`` of all three
    seats: every seat's decisions train it (self-play). Rewards are rulebook scores times ``reward_scale``;
    gamma 1 (the hand's score is the return)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    model_config = {"state_layers": list(state_layers), "head_layers": list(head_layers), "init": init}
    return (
        PPOConfig()
        .environment(env_name, env_config={"reward_scale": reward_scale},
                     disable_env_checking=True)  # (the pre-check steps with an unmasked action: rightly refused)
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs)
        .learners(num_learners=0)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=lambda agent_id, episode, **kw: MODULE_ID)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MODULE_ID: RLModuleSpec(module_class=MoveScoringRLModule, model_config=model_config)}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs,
                  lr=learning_rate, gamma=1.0, lambda_=0.95, entropy_coeff=0.0, grad_clip=1.0)
        .debugging(seed=seed)
    )


# ---------------------------------------------------------------------------------------------- training
def export_policy(module: MoveScoringRLModule, path: str | os.PathLike, **info: Any) -> None:
    """The module's policy in the one export format (``agents.load(path)`` seats it), marked as RLlib's."""
    save_policy(module.policy, path, library="rllib", **info)


#: train()'s options and their defaults (``train.py --config rllib --set options.KEY=VALUE``)
DEFAULTS: dict[str, Any] = {
    "num_envs": 1, "batch": 1024, "minibatch": 256, "epochs": 2, "learning_rate": 1e-3, "reward_scale": 0.05,
    "state_layers": (256,), "head_layers": (128,), "init": None, "checkpoint_seconds": 120.0,
    "progress_seconds": 30.0, "threads": 1,
}
CHECKPOINT_DIR = "rllib_checkpoint"


def train(seconds: float, run_dir: str | os.PathLike, *, seed: int = 0, resume: bool = False, progress: bool = True,
          **options: Any) -> dict:
    """RLlib PPO in self-play (:func:`build_config`) for ``seconds`` of wall time in all (across resumes):
    ``algo.train()`` iterations of ``batch`` env steps (all seats' decisions).

    ``run_dir`` gets ``rllib_checkpoint/`` (``algo.save_to_path``: RLlib's whole state, its own format, read
    back by ``resume=True`` with ``restore_from_path``: this run's own files), ``state.json`` (steps, wall
    and CPU seconds so far) and ``policy.pt`` (the export format) every ``checkpoint_seconds`` and at the
    end. Returns ``{"steps", "cpu_seconds", "wall_seconds", "policy"}`` (steps: decisions learned from)."""
    import ray
    from ray.tune.registry import register_env

    from .session import Session

    o = check_options(options)
    torch.set_num_threads(int(o["threads"]))
    ses = Session("rllib", run_dir, seconds, resume=resume, progress=progress, state_files=(CHECKPOINT_DIR,),
                  counters={"iterations": 0}, checkpoint_seconds=o["checkpoint_seconds"],
                  progress_seconds=o["progress_seconds"])
    ck_dir = ses.path(CHECKPOINT_DIR)
    register_env("ddz_rllib", make_env)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False,
             logging_level="ERROR")
    config = build_config(num_envs=o["num_envs"], batch=o["batch"], minibatch=o["minibatch"], epochs=o["epochs"],
                          learning_rate=o["learning_rate"], state_layers=o["state_layers"],
                          head_layers=o["head_layers"], init=o["init"], reward_scale=o["reward_scale"],
                          seed=seed + int(ses.done["iterations"]))  # (a resumed run deals new hands)
    info = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()}, "seed": seed}
    algo = config.build_algo()
    last: dict = {}

    def save() -> None:
        algo.save_to_path(ck_dir)
        export_policy(algo.get_module(MODULE_ID), ses.policy_path, steps=int(ses.done["steps"]), **info)

    def line() -> str:
        ret = last.get("env_runners", {}).get("agent_episode_returns_mean") or {}
        return f"mean score by seat { {a: round(v / o['reward_scale'], 2) for a, v in sorted(ret.items())} }"

    try:
        if ses.resuming:
            algo.restore_from_path(ck_dir)
        ses.restart_clock()  # (Ray's start and the build, ~10 s, are not training time)
        while ses.running():
            last = algo.train()
            learned = last.get("learners", {}).get(MODULE_ID, {}).get("num_module_steps_trained", 0)
            ses.done["steps"] += int(learned) if learned else int(o["batch"])
            ses.done["iterations"] += 1
            ses.tick(save, line)
        return ses.finish(save)
    finally:
        algo.stop()
        ray.shutdown()


def check_options(options: dict) -> dict:
    """``options`` over :data:`DEFAULTS`, each checked by value (``agents.integrations.options``)."""
    from .options import check_options as check

    return check("rllib", options, DEFAULTS)


__all__ = ["check_options", "RLlibObs", "make_env", "MoveScoringRLModule", "build_config", "export_policy", "train", "DEFAULTS",
           "CHECKPOINT_DIR", "POLICY_FILE", "MODULE_ID"]
