"""Stable-Baselines3 / sb3-contrib: MaskablePPO on one seat of Dou Dizhu.

    pip install -e ".[marl]"        # or: pip install sb3-contrib
    python examples/sb3_maskable_ppo.py [--steps 2048]

The single-seat Gymnasium env (``agents.integrations.seat_env``) plays the two other seats with
given agents and exposes ``action_masks()``, which MaskablePPO reads by itself.
Prints the mean score per hand of the learning seat before and after training.
"""
from __future__ import annotations

import argparse

import gymnasium

from agents.integrations.seat_env import register_gymnasium


def mean_score(model, env, hands: int, seed: int) -> float:
    from sb3_contrib.common.maskable.utils import get_action_masks

    total = 0.0
    for i in range(hands):
        obs, _ = env.reset(seed=seed + i)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=get_action_masks(env), deterministic=True)
            obs, reward, done, _, info = env.step(action)
            total += reward
    return total / hands


def main(argv=None) -> dict:
    from sb3_contrib import MaskablePPO

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=2048, help="training timesteps (learning-seat decisions)")
    p.add_argument("--opponents", default="random", help="agents.load name for the two other seats")
    p.add_argument("--eval-hands", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest for these small nets)")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)

    register_gymnasium()
    env = gymnasium.make("ddz/DouDizhuSeat-v0", opponents=args.opponents)  # seat drawn per hand
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, learning_rate=3e-4,
                        policy_kwargs={"net_arch": [128]}, seed=args.seed, verbose=0, device="cpu")
    eval_env = gymnasium.make("ddz/DouDizhuSeat-v0", opponents=args.opponents)
    before = mean_score(model, eval_env, args.eval_hands, 10_000)
    model.learn(total_timesteps=args.steps)
    after = mean_score(model, eval_env, args.eval_hands, 10_000)
    print(f"MaskablePPO vs {args.opponents}: {model.num_timesteps} steps, {model._n_updates} gradient epochs; "
          f"mean score per hand over {args.eval_hands} hands: before {before:+.3f}, after {after:+.3f}")
    return {"model": model, "before": before, "after": after}


if __name__ == "__main__":
    main()
