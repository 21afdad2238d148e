"""Tianshou 2.x: a DQN learner for one seat of Dou Dizhu against two masked random seats.

    pip install -e ".[marl]"        # or: pip install tianshou
    python examples/tianshou_dqn.py [--iterations 5]

``tianshou.env.PettingZooEnv`` wraps ``pettingzoo.make("aec", "ddz/dou_dizhu-v0")``;
``MultiAgentOffPolicyAlgorithm`` routes each seat's turns to its algorithm: DQN at the
learning seat (Q-values of illegal actions are masked by Tianshou), Tianshou's masked
random algorithm at the two others. Each iteration collects steps, then takes DQN
gradient steps. Prints the learning seat's mean score per hand.
"""
from __future__ import annotations

import argparse

import numpy as np


def make_env():
    import pettingzoo
    from tianshou.env import PettingZooEnv

    import ddz_env  # noqa: F401  (registers ddz/dou_dizhu-v0)

    return PettingZooEnv(pettingzoo.make("aec", "ddz/dou_dizhu-v0"))


def build(learn_seat: int = 0, lr: float = 1e-3, hidden: int = 128, env_fn=make_env):
    """The multi-agent algorithm: DQN at ``learn_seat``, masked random elsewhere."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.utils.net.common import Net

    env = env_fn()
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n, hidden_sizes=[hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=1.0, n_step_return_horizon=1,
              target_update_freq=50)
    algorithms = [dqn if s == learn_seat else MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
                  for s in range(3)]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env), dqn


def train(iterations: int = 5, steps_per_iter: int = 300, updates_per_iter: int = 10, batch_size: int = 64,
          num_envs: int = 2, learn_seat: int = 0, seed: int = 0, env_fn=make_env, verbose: bool = True) -> dict:
    import torch
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

    torch.manual_seed(seed)
    np.random.seed(seed)
    envs = DummyVectorEnv([env_fn for _ in range(num_envs)])
    envs.seed(seed)
    marl, dqn = build(learn_seat, env_fn=env_fn)
    buffer = VectorReplayBuffer(20_000, num_envs)
    collector = Collector[CollectStats](marl, envs, buffer, exploration_noise=True)
    collector.reset()
    updates, returns = 0, []
    for it in range(iterations):
        with policy_within_training_step(marl.policy), torch_train_mode(marl.policy, False):
            stats = collector.collect(n_step=steps_per_iter)  # eps-greedy (masked) at the learning seat
        if stats.n_collected_episodes:
            # multi-agent returns: one column per seat
            returns.append(np.asarray(stats.returns).reshape(-1, 3))
        with policy_within_training_step(marl.policy), torch_train_mode(marl.policy):
            for _ in range(updates_per_iter):
                marl.update(buffer=buffer, sample_size=batch_size)
                updates += 1
        if verbose and returns:
            r = np.concatenate(returns)[:, learn_seat]
            print(f"iteration {it + 1}: {stats.n_collected_steps} steps, {stats.n_collected_episodes} hands, "
                  f"seat {learn_seat} mean score so far {r.mean():+.3f} over {r.size} hands")
    all_returns = np.concatenate(returns) if returns else np.zeros((0, 3))
    return {"algorithm": marl, "dqn": dqn, "updates": updates, "returns": all_returns, "buffer": buffer}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--steps", type=int, default=300, help="env steps (all seats) collected per iteration")
    p.add_argument("--updates", type=int, default=10, help="DQN gradient steps per iteration")
    p.add_argument("--seat", type=int, default=0, help="the learning seat")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    out = train(args.iterations, args.steps, args.updates, learn_seat=args.seat, seed=args.seed)
    r = out["returns"]
    print(f"Tianshou DQN at seat {args.seat} vs masked random: {out['updates']} updates, {len(r)} hands, "
          f"mean score per hand {r[:, args.seat].mean() if len(r) else float('nan'):+.3f}")
    return out


if __name__ == "__main__":
    main()
