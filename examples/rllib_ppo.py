"""RLlib (ray 2.x, new API stack): PPO with an action-masking RL module on Dou Dizhu.

    # ray pins an older gymnasium: give it its own venv (make setup-rllib; README.md, "RLlib")
    pip install "ray[rllib]" && pip install -e .
    python examples/rllib_ppo.py [--iterations 2]

``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` wraps the AEC env; a small
PettingZoo wrapper (:class:`RLlibObs`) renames and flattens each observation to the
``{"observations", "action_mask"}`` float dict that RLlib's ``ActionMaskingTorchRLModule``
expects (illegal logits set to -inf). One module is shared by the three seats.
``disable_env_checking=True``: RLlib's pre-check steps the env with an *unmasked*
sampled action, which this env (rightly) rejects. Prints the mean score per hand by seat.
"""
from __future__ import annotations

import argparse

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

ACTIONS = 24648
OBS_CELLS = 29 * 4 * 15


class RLlibObs(BaseWrapper):
    """AEC wrapper: observation -> ``{"observations": float32 (1740,), "action_mask": float32 (24648,)}``."""

    _space = spaces.Dict({
        "observations": spaces.Box(0.0, 1.0, (OBS_CELLS,), np.float32),
        "action_mask": spaces.Box(0.0, 1.0, (ACTIONS,), np.float32),
    })

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        o = self.env.observe(agent)
        return {"observations": o["observation"].reshape(-1).astype(np.float32),
                "action_mask": o["action_mask"].astype(np.float32)}


def make_aec(config=None):
    import pettingzoo

    import ddz_env  # noqa: F401  (registers ddz/dou_dizhu-v0)

    return pettingzoo.make("aec", "ddz/dou_dizhu-v0", **(config or {}))


def build_config(env_name: str = "ddz_rllib", hidden: int = 64, batch: int = 256, seed: int = 0):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return (
        PPOConfig()
        .environment(env_name, disable_env_checking=True)  # the pre-check steps with an unmasked action
        .framework("torch")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                   model_config={"fcnet_hiddens": [hidden], "head_fcnet_hiddens": [hidden]}),
        }))
        .training(train_batch_size_per_learner=batch, minibatch_size=64, num_epochs=1, lr=3e-4)
        .debugging(seed=seed)
    )


def make_env(config=None):
    """The RLlib multi-agent env: ``PettingZooEnv(RLlibObs(pettingzoo.make("aec", "ddz/dou_dizhu-v0")))``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibObs(make_aec(config)))


def train(iterations: int = 2, batch: int = 256, seed: int = 0, env_creator=make_env, verbose: bool = True) -> dict:
    import ray
    from ray.tune.registry import register_env

    register_env("ddz_rllib", env_creator)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        algo = build_config(batch=batch, seed=seed).build_algo()
        results = []
        for it in range(iterations):
            r = algo.train()
            results.append(r)
            if verbose:
                runners = r.get("env_runners", {})
                print(f"iteration {it + 1}: {runners.get('num_env_steps_sampled_lifetime')} env steps, "
                      f"{runners.get('num_episodes_lifetime')} hands, "
                      f"mean return by seat {runners.get('agent_episode_returns_mean')}")
        learner = results[-1].get("learners", {}).get("shared", {})
        algo.stop()
    finally:
        ray.shutdown()
    return {"results": results, "learner": learner}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--batch", type=int, default=256, help="env steps per training iteration")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    out = train(args.iterations, args.batch, args.seed)
    print(f"RLlib PPO (shared masked module): {len(out['results'])} iterations, "
          f"learner updates {out['learner'].get('num_module_steps_trained_lifetime')}")
    return out


if __name__ == "__main__":
    main()
