"""TorchRL 0.14: PPO for one seat of Dou Dizhu against two random seats.

    pip install -e ".[marl]"        # or: pip install torchrl
    python examples/torchrl_ppo.py [--batches 16 --frames 512 --eval-hands 300]

TorchRL's own pieces, as in its PPO tutorial:

* env: the single-seat Gymnasium env (``agents.integrations.seat_env.DouDizhuSeatEnv``, the two other
  seats played by the random agent, a random learning seat per hand) with the seat's legal
  actions added to the observation (``WithActionMask``), in TorchRL's ``GymWrapper``;
* policy: ``ProbabilisticActor`` with ``MaskedCategorical`` over the 24648 actions, its logits the
  move-scoring policy's (``agents.integrations.torchrl.modules.make_actor``: each legal move scored
  from its own features, as the DMC agent does);
* critic: ``ValueOperator`` on the same trunk (``make_critic``); advantages: ``GAE``; loss: ``ClipPPOLoss``;
* data: ``Collector`` (TorchRL's single-process collector, formerly ``SyncDataCollector``)
  batches, minibatches drawn without replacement from a ``ReplayBuffer``.

Before and after training it plays the same seeded evaluation hands (deals, seats and
random opponents) and prints the learning seat's mean rulebook score per hand.

Self-play, all three seats learning, is ``train.py --config torchrl`` (``torchrl.modules.SelfPlayEnv`` in
``agents/integrations/``, the batched env as a TorchRL env).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

OBS_SHAPE = (29, 4, 15)


# ----------------------------------------------------------------------------- env
def with_action_mask(env):
    """The Gymnasium seat env with its observation as ``{"observation": planes, "action_mask": bool}``."""
    import gymnasium
    from gymnasium import spaces

    class WithActionMask(gymnasium.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            n = int(env.action_space.n)
            self.observation_space = spaces.Dict({"observation": env.observation_space,
                                                  "action_mask": spaces.Box(0, 1, (n,), dtype=bool)})

        def observation(self, obs):
            return {"observation": obs, "action_mask": self.env.unwrapped.action_masks()}

    return WithActionMask(env)


def seat_env(reward_scale: float = 0.25, **kwargs):
    """One learning seat (random per hand) against two random seats, reward = scaled rulebook score."""
    from agents.integrations.seat_env import DouDizhuSeatEnv

    return DouDizhuSeatEnv(opponents=kwargs.pop("opponents", "random"), reward_scale=reward_scale, **kwargs)


def make_env(gym_env=None, seed: int = 0):
    """TorchRL env: ``GymWrapper`` around the seat env (``gym_env``: a given Gymnasium seat env)."""
    from torchrl.envs import GymWrapper

    env = GymWrapper(with_action_mask(gym_env if gym_env is not None else seat_env()),
                     categorical_action_encoding=True)
    env.set_seed(seed)
    return env


# ----------------------------------------------------------------------------- networks
def make_actor_critic(hidden: int = 128):
    """The move-scoring policy (``agents.integrations.move_policy``) as TorchRL's ``ProbabilisticActor``
    (``MaskedCategorical``: writes ``action`` and ``action_log_prob``) and ``ValueOperator`` (its value
    head), from ``agents.integrations.torchrl.modules``: each legal move is scored from its own features."""
    from agents.integrations.move_policy import MoveScoringPolicy
    from agents.integrations.torchrl.modules import make_actor, make_critic

    policy = MoveScoringPolicy(state_layers=(hidden,), head_layers=(hidden // 2,), hand_after=True)
    return make_actor(policy), make_critic(policy)


# ----------------------------------------------------------------------------- evaluation
def evaluate(actor, hands: int = 300, seed: int = 10_000, gym_env=None) -> dict:
    """The learning seat's mean rulebook score per hand (and win rate, void hands excluded) over
    ``hands`` seeded hands: hand ``i`` is ``reset(seed=seed + i)`` (deal, seat, opponents) and the
    actor samples with torch seeded by ``seed``, so two policies meet the same hands."""
    from tensordict import TensorDict
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    env = gym_env if gym_env is not None else seat_env()
    torch.manual_seed(seed)
    scores, wins = [], []
    with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
        for i in range(hands):
            obs, info = env.reset(seed=seed + i)
            done = False
            while not done:
                td = TensorDict({"observation": torch.as_tensor(obs)[None],
                                 "action_mask": torch.as_tensor(env.action_masks())[None]}, batch_size=[1])
                obs, _, done, _, info = env.step(int(actor(td)["action"][0]))
            scores.append(info["score"])
            if not info["void"]:
                wins.append(info["score"] > 0)
    return {"score": float(np.mean(scores)), "win_rate": float(np.mean(wins)) if wins else float("nan"),
            "hands": hands, "scores": scores}


# ----------------------------------------------------------------------------- training
def train(batches: int = 16, frames: int = 512, epochs: int = 2, minibatch: int = 128, lr: float = 1e-2,
          gamma: float = 1.0, lmbda: float = 0.95, entropy_coeff: float = 0.0, hidden: int = 128, seed: int = 0,
          gym_env_fn=None, eval_hands: int = 0, verbose: bool = True) -> dict:
    """PPO: ``batches`` collector batches of ``frames`` learning-seat decisions; per batch GAE, then
    ``epochs`` passes of minibatches through ``ClipPPOLoss``. ``eval_hands > 0``: evaluate the
    untrained and the trained actor on the same seeded hands."""
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    torch.manual_seed(seed)
    env = make_env(gym_env_fn() if gym_env_fn is not None else None, seed)
    actor, critic = make_actor_critic(hidden)
    before = evaluate(actor, eval_hands) if eval_hands else None
    collector = Collector(env, actor, frames_per_batch=frames, total_frames=batches * frames,
                          auto_register_policy_transforms=True)  # (TorchRL 0.15's default; no FutureWarning)
    advantage = GAE(gamma=gamma, lmbda=lmbda, value_network=critic, average_gae=False,
                    deactivate_vmap=True)  # (the policy scores a varying number of legal moves: no vmap)
    # (the entropy of a 24648-way distribution costs as much as the rest of the loss on a CPU: off by default)
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_bonus=entropy_coeff > 0,
                              entropy_coeff=entropy_coeff or None, critic_coeff=0.5, normalize_advantage=True,
                              loss_critic_type="smooth_l1")
    optim = torch.optim.Adam(loss_module.parameters(), lr=lr)
    buffer = ReplayBuffer(storage=LazyTensorStorage(frames), sampler=SamplerWithoutReplacement(), batch_size=minibatch)
    updates, hands, returns = 0, 0, []
    t0 = time.time()
    for i, data in enumerate(collector):
        done = data["next", "done"].reshape(-1)
        ret = data["next", "reward"].reshape(-1)[done]  # the seat's reward comes with a hand's last step
        hands += int(done.sum())
        returns += ret.tolist()
        with torch.no_grad():
            advantage(data)
        buffer.extend(data.reshape(-1))
        for _ in range(epochs):
            for _ in range(frames // minibatch):
                out = loss_module(buffer.sample())
                loss = out["loss_objective"] + out["loss_critic"] + out.get("loss_entropy", 0.0)
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 1.0)
                optim.step()
                updates += 1
        collector.update_policy_weights_()
        if verbose:
            print(f"batch {i + 1}/{batches}: {frames} decisions, {int(done.sum())} hands ended, "
                  f"mean reward {ret.mean().item() if ret.numel() else float('nan'):+.3f}, "
                  f"{time.time() - t0:.0f} s")
    collector.shutdown()
    after = evaluate(actor, eval_hands) if eval_hands else None
    return {"actor": actor, "critic": critic, "updates": updates, "hands": hands, "returns": returns,
            "before": before, "after": after}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, default=16, help="collector batches")
    p.add_argument("--frames", type=int, default=512, help="learning-seat decisions per batch")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--eval-hands", type=int, default=300, help="seeded hands played before and after training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = train(args.batches, args.frames, args.epochs, seed=args.seed, eval_hands=args.eval_hands)
    if out["before"] is not None:
        b, a = out["before"], out["after"]
        print(f"TorchRL PPO, one seat vs two random seats: {out['updates']} updates, {out['hands']} training hands; "
              f"mean score per hand on {a['hands']} seeded hands {b['score']:+.2f} untrained -> {a['score']:+.2f} "
              f"trained (win rate {b['win_rate']:.1%} -> {a['win_rate']:.1%})")
    return out


if __name__ == "__main__":
    main()
