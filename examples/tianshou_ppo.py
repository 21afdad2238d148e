"""Tianshou 2.0: PPO with the move-scoring policy for one seat, trained by Tianshou's OnPolicyTrainer.

    pip install -e ".[marl]"        # or: pip install tianshou
    python examples/tianshou_ppo.py [--epochs 4 --epoch-steps 2048 --opponent random --eval-deals 50]

Tianshou's own pieces, as in its PPO examples:

* env: the single-seat Gymnasium env (a random learning seat per hand, the two others played by
  ``--opponent``, an ``agents.load`` spec) with Tianshou's masked observation ``{"obs", "mask"}``
  (``agents.integrations.tianshou.nets.seat_env``), in a ``DummyVectorEnv``;
* algorithm: ``PPO`` over ``DiscreteActorPolicy`` (``agents.integrations.tianshou.nets.make_ppo``): the
  actor's logits are the move-scoring policy's, each legal move scored from its own features (as the DMC
  agent does), ``-inf`` elsewhere; the critic is the same trunk's value head;
* training: ``algorithm.run_training(OnPolicyTrainerParams(...))``, Tianshou's ``OnPolicyTrainer``.

Before and after training the policy is exported (``policy.pt``, the format ``agents.load``,
``evaluate.py``, the league and ``ddz-play`` seat) and played in duplicate against the opponent on the
same seeded deals; the script prints both scores per hand.
"""
from __future__ import annotations

import argparse
import logging
import os
import tempfile

import numpy as np
import torch


def build(opponent: str = "random", num_envs: int = 4, lr: float = 1e-2, hidden: int = 128, seed: int = 0,
          env_fn=None):
    """The vector env, the move-scoring policy and Tianshou's PPO over it."""
    from tianshou.env import DummyVectorEnv

    from agents.integrations.move_policy import MoveScoringPolicy
    from agents.integrations.tianshou.nets import make_ppo, seat_env

    torch.manual_seed(seed)
    np.random.seed(seed)  # (Tianshou shuffles its minibatches with numpy's global generator)
    env_fn = env_fn or (lambda: seat_env(opponent, reward_scale=0.05))
    envs = DummyVectorEnv([env_fn for _ in range(num_envs)])
    envs.seed(seed)
    policy = MoveScoringPolicy(state_layers=(hidden,), head_layers=(hidden // 2,), hand_after=True)
    return envs, policy, make_ppo(policy, envs.action_space[0], learning_rate=lr)


def score(policy, opponent: str, deals: int, seed: int = 10_000) -> float:
    """``policy``'s score per hand against ``opponent``, duplicate, on ``deals`` seeded deals (via its export)."""
    from agents.evaluation.protocols import evaluate
    from agents.integrations.tianshou.nets import export_policy

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "policy.pt")
        export_policy(policy, path)
        return float(evaluate(path, opponent, deals=deals, seed=seed)["A"]["mean_score"])


def train(epochs: int = 4, epoch_steps: int = 2048, collect_steps: int = 512, repeat: int = 2, batch_size: int = 128,
          opponent: str = "random", num_envs: int = 4, lr: float = 1e-2, seed: int = 0, eval_deals: int = 0,
          env_fn=None, verbose: bool = True) -> dict:
    """``OnPolicyTrainer``: ``epochs`` of ``epoch_steps`` learning-seat decisions, an update (``repeat``
    passes of ``batch_size`` minibatches) after every ``collect_steps``. ``eval_deals > 0``: the
    untrained and the trained policy against ``opponent`` on the same seeded deals."""
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.trainer import OnPolicyTrainerParams

    envs, policy, ppo = build(opponent, num_envs, lr, seed=seed, env_fn=env_fn)
    before = score(policy, opponent, eval_deals) if eval_deals else None
    collector = Collector[CollectStats](ppo, envs, VectorReplayBuffer(collect_steps + 64 * num_envs, num_envs))
    result = ppo.run_training(OnPolicyTrainerParams(
        training_collector=collector, max_epochs=epochs, epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=collect_steps, update_step_num_repetitions=repeat, batch_size=batch_size,
        test_in_training=False, verbose=verbose, show_progress=False))
    after = score(policy, opponent, eval_deals) if eval_deals else None
    return {"policy": policy, "ppo": ppo, "result": result, "before": before, "after": after}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--epoch-steps", type=int, default=2048, help="learning-seat decisions per epoch")
    p.add_argument("--opponent", default="random", help="the two other seats (an agents.load spec: random, rule...)")
    p.add_argument("--eval-deals", type=int, default=50, help="seeded deals (x6 hands, duplicate) before and after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    logging.getLogger("tianshou").setLevel(logging.WARNING)
    out = train(args.epochs, args.epoch_steps, opponent=args.opponent, seed=args.seed, eval_deals=args.eval_deals)
    if out["before"] is not None:
        print(f"Tianshou PPO, one seat vs {args.opponent}: {out['result'].update_step} updates; score per hand in "
              f"duplicate on {args.eval_deals} seeded deals {out['before']:+.2f} untrained -> {out['after']:+.2f} trained")
    return out


if __name__ == "__main__":
    main()
