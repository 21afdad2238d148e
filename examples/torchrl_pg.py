"""TorchRL 0.14: a masked policy and a few policy-gradient iterations on Dou Dizhu.

    pip install -e ".[marl]"        # or: pip install torchrl
    python examples/torchrl_pg.py [--iterations 3 --steps 300]

``PettingZooWrapper(pettingzoo.make("aec", "ddz/dou_dizhu-v0"), use_mask=True)`` gives one
group per seat (``player_0/1/2``) with ``observation``, ``action_mask`` (the legal actions
of the seat on turn; all True for the seats not on turn), ``("observation", "observation")``
(the planes) and ``mask`` (True for the seat
on turn). One shared network plays every seat through ``MaskedCategorical``; each
iteration collects a rollout and takes a REINFORCE step (return of the hand, mean baseline)
on the decisions of the seats that were on turn. Prints the mean score per hand of seat 0.
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
from torch import nn

ACTIONS = 24648
OBS_CELLS = 29 * 4 * 15


def make_env(env_fn=None, seed: int = 0):
    import pettingzoo
    from torchrl.envs import PettingZooWrapper

    import ddz_env  # noqa: F401  (registers ddz/dou_dizhu-v0)

    aec = env_fn() if env_fn is not None else pettingzoo.make("aec", "ddz/dou_dizhu-v0")
    env = PettingZooWrapper(env=aec, use_mask=True)  # AEC: one group per seat
    env.set_seed(seed)
    return env


class Logits(nn.Module):
    def __init__(self, hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(-3), nn.Linear(OBS_CELLS, hidden), nn.ReLU(), nn.Linear(hidden, ACTIONS))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs.float())


class Sampler(nn.Module):
    """Samples a legal action from the masked logits (no gradient: the update recomputes them)."""

    def __init__(self, logits: Logits):
        super().__init__()
        self.logits = logits

    def forward(self, obs: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        from torchrl.modules import MaskedCategorical

        with torch.no_grad():
            return MaskedCategorical(logits=self.logits(obs), mask=action_mask).sample()


def make_policy(env, logits: Logits):
    """A TensorDictSequential writing ``(group, "action")`` for every seat group from one shared net."""
    from tensordict.nn import TensorDictModule, TensorDictSequential

    sampler = Sampler(logits)
    return TensorDictSequential(*[
        TensorDictModule(sampler, in_keys=[(g, "observation", "observation"), (g, "action_mask")], out_keys=[(g, "action")])
        for g in env.group_map
    ])


def hand_returns(td, groups) -> tuple[dict, list]:
    """Per step and group: the return to the end of the hand; and the per-seat returns of finished hands."""
    T = td.batch_size[0]
    rew = {g: td["next", g, "reward"].reshape(T, -1)[:, 0].numpy() for g in groups}
    done = td["next", "done"].reshape(T).numpy()
    rtg = {g: np.zeros(T, dtype=np.float32) for g in groups}
    acc = {g: 0.0 for g in groups}
    finished = []
    for t in reversed(range(T)):
        if done[t]:
            acc = {g: 0.0 for g in groups}
        for g in groups:
            acc[g] += float(rew[g][t])
            rtg[g][t] = acc[g]
    ep = {g: 0.0 for g in groups}
    for t in range(T):  # returns of hands that finished inside the rollout
        for g in groups:
            ep[g] += float(rew[g][t])
        if done[t]:
            finished.append([ep[g] for g in groups])
            ep = {g: 0.0 for g in groups}
    return rtg, finished


def train(iterations: int = 3, steps: int = 300, lr: float = 1e-3, seed: int = 0, env_fn=None,
          verbose: bool = True) -> dict:
    from torchrl.modules import MaskedCategorical

    torch.manual_seed(seed)
    env = make_env(env_fn, seed)
    groups = list(env.group_map)
    logits = Logits()
    policy = make_policy(env, logits)
    opt = torch.optim.Adam(logits.parameters(), lr=lr)
    updates, all_hands = 0, []
    for it in range(iterations):
        td = env.rollout(max_steps=steps, policy=policy, break_when_any_done=False)
        rtg, finished = hand_returns(td, groups)
        all_hands += finished
        obs, masks, actions, rets = [], [], [], []
        for g in groups:
            on_turn = td[g, "mask"].reshape(-1)  # the group's seat was on turn at this step
            obs.append(td[g, "observation", "observation"].reshape(-1, 29, 4, 15)[on_turn])
            masks.append(td[g, "action_mask"].reshape(-1, ACTIONS)[on_turn])
            actions.append(td[g, "action"].reshape(-1)[on_turn])
            rets.append(torch.as_tensor(rtg[g])[on_turn])
        obs, masks, actions, rets = (torch.cat(x) for x in (obs, masks, actions, rets))
        adv = rets - rets.mean()
        dist = MaskedCategorical(logits=logits(obs), mask=masks)
        loss = -(dist.log_prob(actions) * adv).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        updates += 1
        if verbose:
            s0 = np.mean([h[0] for h in all_hands]) if all_hands else float("nan")
            print(f"iteration {it + 1}: {td.batch_size[0]} steps, {len(finished)} hands, loss {loss.item():+.4f}, "
                  f"seat 0 mean score so far {s0:+.3f}")
    return {"env": env, "policy": policy, "updates": updates, "hands": all_hands, "groups": groups}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--steps", type=int, default=300, help="env steps (all seats) per rollout")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = train(args.iterations, args.steps, seed=args.seed)
    h = np.asarray(out["hands"]).reshape(-1, 3)
    print(f"TorchRL REINFORCE (shared net, all seats): {out['updates']} updates, {len(h)} hands, "
          f"mean score per hand by seat {np.round(h.mean(axis=0), 3).tolist() if len(h) else []}")
    return out


if __name__ == "__main__":
    main()
