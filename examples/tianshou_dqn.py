"""Tianshou 2.0: DQN for one seat of Dou Dizhu against two masked random seats, trained by Tianshou's trainer.

    pip install -e ".[marl]"        # or: pip install tianshou
    python examples/tianshou_dqn.py [--epochs 4 --epoch-steps 3000 --test-hands 20 --eval-hands 300]

As Tianshou's own PettingZoo examples (tic-tac-toe) do:

* ``tianshou.env.PettingZooEnv`` wraps ``pettingzoo.make("aec", "ddz/dou_dizhu-v0")``
  (``MaskedPettingZooEnv``: the same, with the legal-action mask as a bool array instead of
  a Python list of 24648 bools, which costs ~2 ms per step);
* ``MultiAgentOffPolicyAlgorithm``, the multi-agent policy manager, routes each seat's
  turns: ``DQN`` at the learning seat, ``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` at
  the two others;
* ``marl.run_training(OffPolicyTrainerParams(...))``, i.e. ``OffPolicyTrainer``: epochs of
  collection and gradient steps, a test step before training and after each epoch, the
  learning seat's return picked by ``multi_agent_return_reduction``. The test hands are
  reseeded before each test step (``test_fn``), so every test plays the same hands (deals,
  seats to bid first, random opponents) and the first one measures the untrained policy.

Before and after training, :func:`evaluate` plays the same seeded hands (more of them: it
steps the AEC env directly, ten times faster than a test collector) and prints the learning
seat's mean rulebook score per hand.

The Q-network scores each action's features (its cards by rank, card count, move type;
bids and doubles one-hot) with weights computed from the observation, plus a bias per
action, so what it learns about one move carries over to similar ones. In the AEC
hand-off a transition of the learning seat runs to the next seat's observation, and the
buffer's next rows are the other seats' turns (their reward columns hold the learning
seat's rewards too). With ``gamma=1`` and ``n_step_return_horizon=60``, a multiple of 3, the
target sums the learning seat's rewards over its next 20 turns (a hand is ~65 steps: from
most decisions that reaches the end, no bootstrap), else bootstraps from the learning seat's
own observation 20 turns on (seats act in turn, except the landlord's redouble and lead).
With a horizon of 3 (one turn) the final score needs ~20 target-network refreshes to
reach the first decisions: the short runs here learned nothing that way.
"""
from __future__ import annotations

import argparse
import logging

import numpy as np
import torch
from torch import nn

AGENTS = ["player_0", "player_1", "player_2"]


# ----------------------------------------------------------------------------- env
def masked_pettingzoo_env_class():
    """``tianshou.env.PettingZooEnv`` with ``obs["mask"]`` a bool array (Tianshou builds a list)."""
    from tianshou.env import PettingZooEnv

    class MaskedPettingZooEnv(PettingZooEnv):
        def _obs(self) -> dict:
            observation = self.env.observe(self.env.agent_selection)
            return {"agent_id": self.env.agent_selection, "obs": observation["observation"],
                    "mask": observation["action_mask"].astype(bool)}

        def reset(self, *args, **kwargs):
            self.env.reset(*args, **kwargs)
            return self._obs(), self.env.infos[self.env.agent_selection]

        def step(self, action):
            self.env.step(action)
            _, _, term, trunc, info = self.env.last(observe=False)
            for agent_id, reward in self.env.rewards.items():
                self.rewards[self.agent_idx[agent_id]] = reward
            return self._obs(), self.rewards, term, trunc, info

    return MaskedPettingZooEnv


def make_env(reward_scale: float = 0.25, aec=None):
    """The AEC env (``aec``: a given one, e.g. wrapped for checks) for Tianshou."""
    import pettingzoo

    import ddz_env  # noqa: F401  (registers ddz/dou_dizhu-v0)

    if aec is None:
        aec = pettingzoo.make("aec", "ddz/dou_dizhu-v0", reward_scale=reward_scale)
    return masked_pettingzoo_env_class()(aec)


# ----------------------------------------------------------------------------- Q-network
def action_features() -> np.ndarray:
    """(24648, 40) float32: per action, its cards by rank / 4, card count / 20, move type one-hot;
    the 8 bidding and doubling actions one-hot."""
    from ddz_env.actions import NUM_ACTIONS, NUM_MOVES
    from ddz_env.moves import MOVE_COUNTS, MOVE_NCARDS, MOVE_TYPE, NUM_MOVE_TYPES

    n_special = NUM_ACTIONS - NUM_MOVES
    f = np.zeros((NUM_ACTIONS, 15 + 1 + NUM_MOVE_TYPES + n_special), np.float32)
    f[:NUM_MOVES, :15] = MOVE_COUNTS / 4.0
    f[:NUM_MOVES, 15] = MOVE_NCARDS / 20.0
    f[np.arange(NUM_MOVES), 16 + MOVE_TYPE.astype(np.int64)] = 1.0
    f[NUM_MOVES + np.arange(n_special), 16 + NUM_MOVE_TYPES + np.arange(n_special)] = 1.0
    return f


class QNet(nn.Module):
    """Planes -> Q-values of the 24648 actions: features @ w(obs) + bias (Tianshou's model signature)."""

    def __init__(self, hidden: int = 128):
        super().__init__()
        feats = torch.as_tensor(action_features())
        self.register_buffer("features_t", feats.T.contiguous())
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(29 * 4 * 15, hidden), nn.ReLU(),
                                  nn.Linear(hidden, feats.shape[1]))
        self.bias = nn.Parameter(torch.zeros(feats.shape[0]))
        nn.init.zeros_(self.body[-1].weight)  # every Q-value 0 at first: the untrained greedy policy takes
        nn.init.zeros_(self.body[-1].bias)  # the lowest legal id (pass, or the smallest single), ~random's score

    def forward(self, obs, state=None, info=None):
        x = torch.as_tensor(obs, dtype=torch.float32, device=self.bias.device)
        return self.body(x) @ self.features_t + self.bias, state


def build(learn_seat: int = 0, lr: float = 1e-3, hidden: int = 128, eps_training: float = 0.2, n_step: int = 60,
          env=None):
    """The multi-agent algorithm: DQN at ``learn_seat``, masked random elsewhere; and the DQN."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory

    env = env if env is not None else make_env()
    policy = DiscreteQLearningPolicy(model=QNet(hidden), action_space=env.action_space, eps_training=eps_training,
                                     eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=1.0, n_step_return_horizon=n_step,
              target_update_freq=100, huber_loss_delta=1.0)
    algorithms = [dqn if s == learn_seat else MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
                  for s in range(3)]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env), dqn


# ----------------------------------------------------------------------------- evaluation
def evaluate(policy, hands: int = 300, seed: int = 10_000, learn_seat: int = 0, reward_scale: float = 0.25) -> dict:
    """The learning seat's mean rulebook score per hand (and win rate, void hands excluded) over
    ``hands`` hands dealt from ``seed``, ``policy`` (the DQN's, greedy: ``eps_inference``) at
    ``learn_seat`` and uniform random legal actions (seeded by ``seed``) at the others. Plays the AEC
    env directly (one Tianshou ``Batch`` per decision): ~10 ms a hand, a tenth of a test collector's."""
    from tianshou.data import Batch

    import ddz_env

    env = ddz_env.env(reward_scale=reward_scale)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    scores, wins = [], []
    was_training = policy.training
    policy.eval()
    with torch.no_grad():
        for _ in range(hands):
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                mask = obs["action_mask"].astype(bool)
                if agent == AGENTS[learn_seat]:
                    batch = Batch(obs=Batch(obs=obs["observation"][None], mask=mask[None]), info=Batch())
                    env.step(int(policy(batch).act[0]))
                else:
                    legal = np.flatnonzero(mask)
                    env.step(int(legal[rng.integers(legal.size)]))
            g = env.unwrapped.game
            score = 0 if g.void else int(g.scores[learn_seat])
            scores.append(score)
            if not g.void:
                wins.append(score > 0)
            env.reset()
    policy.train(was_training)
    return {"score": float(np.mean(scores)), "win_rate": float(np.mean(wins)) if wins else float("nan"),
            "hands": hands, "scores": scores}


# ----------------------------------------------------------------------------- training
def train(epochs: int = 4, epoch_steps: int = 3000, collect_steps: int = 60, updates_per_step: float = 0.1,
          batch_size: int = 96, test_hands: int = 0, eval_hands: int = 300, num_envs: int = 4, learn_seat: int = 0,
          seed: int = 0, reward_scale: float = 0.25, buffer_size: int = 20_000, lr: float = 1e-3, n_step: int = 60,
          env_fn=None, verbose: bool = True) -> dict:
    """``OffPolicyTrainer`` for ``epochs`` epochs of ``epoch_steps`` env steps (all seats), collecting
    ``collect_steps`` at a time, then ``updates_per_step`` gradient steps per step collected.
    ``test_hands > 0``: the trainer's test step (before training and after each epoch) plays that
    many hands, the same seeded ones each time (``curve``: the learning seat's mean score per
    hand). ``eval_hands > 0``: :func:`evaluate` before and after training on the same hands."""
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    env_fn = env_fn or (lambda: make_env(reward_scale))
    torch.manual_seed(seed)
    np.random.seed(seed)
    train_envs = DummyVectorEnv([env_fn for _ in range(num_envs)])
    train_envs.seed(seed)
    marl, dqn = build(learn_seat, lr=lr, n_step=n_step, env=env_fn())
    before = evaluate(dqn.policy, eval_hands, learn_seat=learn_seat, reward_scale=reward_scale) if eval_hands else None
    buffer = VectorReplayBuffer(buffer_size, num_envs)  # (each transition holds two 24648-bool masks)
    train_collector = Collector[CollectStats](marl, train_envs, buffer, exploration_noise=True)
    test: dict = {}
    curve: list[float] = []
    if test_hands:
        test_envs = DummyVectorEnv([env_fn])  # one env: its hands follow from the seed alone
        test_collector = Collector[CollectStats](marl, test_envs)

        def test_fn(epoch: int, env_step: int | None) -> None:
            """Every test step plays the same hands: reseed the deals and the random seats."""
            test_envs.seed(seed + 20_000)
            np.random.seed(seed + 20_000)
            test_collector.reset(reset_stats=False)

        def score_fn(stats: CollectStats) -> float:
            curve.append(float(np.mean(stats.returns)) / reward_scale)  # the learning seat's rulebook score
            return curve[-1]

        test = {"test_collector": test_collector, "test_step_num_episodes": test_hands, "test_fn": test_fn,
                "compute_score_fn": score_fn}
    result = marl.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, max_epochs=epochs, epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=collect_steps, update_step_num_gradient_steps_per_sample=updates_per_step,
        batch_size=batch_size, multi_agent_return_reduction=lambda returns: returns[:, learn_seat],
        verbose=verbose, show_progress=False, **test))
    after = evaluate(dqn.policy, eval_hands, learn_seat=learn_seat, reward_scale=reward_scale) if eval_hands else None
    # (each update step of the trainer takes round(updates_per_step * steps collected) gradient steps)
    gradient_steps = result.update_step * round(updates_per_step * collect_steps)
    return {"algorithm": marl, "dqn": dqn, "result": result, "curve": curve, "buffer": buffer,
            "gradient_steps": gradient_steps, "before": before, "after": after}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--epoch-steps", type=int, default=3000, help="env steps (all seats) per epoch")
    p.add_argument("--test-hands", type=int, default=20, help="hands of the trainer's test step (0: none)")
    p.add_argument("--eval-hands", type=int, default=300, help="seeded hands played before and after training")
    p.add_argument("--seat", type=int, default=0, help="the learning seat")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    # Tianshou logs a warning for every batch of multi-agent returns (one column per seat)
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    out = train(args.epochs, args.epoch_steps, test_hands=args.test_hands, eval_hands=args.eval_hands,
                learn_seat=args.seat, seed=args.seed)
    if out["curve"]:
        print("trainer's test steps, mean score per hand: " + " ".join(f"{x:+.2f}" for x in out["curve"]))
    if out["before"] is not None:
        b, a = out["before"], out["after"]
        print(f"Tianshou DQN at seat {args.seat} vs two random seats: {out['gradient_steps']} gradient steps; "
              f"mean score per hand on {a['hands']} seeded hands {b['score']:+.2f} untrained -> {a['score']:+.2f} "
              f"trained (win rate {b['win_rate']:.1%} -> {a['win_rate']:.1%})")
    return out


if __name__ == "__main__":
    main()
