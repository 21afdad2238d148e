"""Per-step cost each MARL library's wrapper adds on top of the env.

    python benchmarks/bench_marl.py [--seconds 3]
    .venv-rllib/bin/python benchmarks/bench_marl.py --only raw,rllib     # RLlib lives in its own venv

Every row plays uniform-random *legal* actions, read from the mask in the form that
library hands to a policy (so the mask conversion a masked policy must pay is counted,
the policy itself is not), and reports microseconds per env step (one seat's decision),
timed in CPU seconds of this process (``time.process_time``). Rows:

* ``raw``: ``pettingzoo.make("aec", "ddz/dou_dizhu-v0")``, ``last()`` + ``step()``: the baseline;
* ``seat``: ``agents.integrations.seat_env.DouDizhuSeatEnv`` (random opponents; every seat's decision counted as a
  step: the opponents read ``legal_actions()`` and build no mask, so this can be cheaper than ``raw``);
* ``sb3``: the seat env in SB3's ``DummyVecEnv`` + ``get_action_masks`` (what MaskablePPO does per step);
* ``tianshou``: ``tianshou.env.PettingZooEnv`` (mask as a Python list of 24648 bools);
* ``torchrl``: ``torchrl.envs.PettingZooWrapper(use_mask=True)`` (observes all three seats per step);
* ``rllib``: ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` with the float dict obs of
  ``agents.integrations.rllib.module.make_env`` (what ``examples/rllib_ppo.py`` trains on).

A library that is not installed is reported as such and skipped.

The second table (``--policy-batches``, needs torch) is the forward pass of the move-scoring policy
(``agents/integrations/move_policy.py``, what every library's adapter puts on the env) against the DMC
agent's on the same decisions (positions of every phase from random hands, the shipped weights), in CPU
microseconds per decision on one thread, per batch size:

* ``dmc greedy``: ``DMCAgent.act_batch`` (compact legal sets, the baseline);
* ``movescore greedy``: ``MoveScoringAgent.act_batch`` (the same trunk, compact legal sets: evaluation);
* ``movescore logits``: ``MoveScoringPolicy(obs, mask)`` -> dense (B, 24648) masked logits and the value,
  from a dense mask, without gradients (a library's rollout);
* ``movescore train``: the same with autograd on (a library's update, backward not counted).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402


def timed(loop, seconds: float) -> tuple[float, int]:
    """Run ``loop(budget_end)`` -> steps; returns (us per step, steps)."""
    t0 = time.process_time()
    steps = loop(t0 + seconds)
    dt = time.process_time() - t0
    return 1e6 * dt / max(steps, 1), steps


def bench_raw(seconds: float):
    import pettingzoo

    import ddz_env  # noqa: F401

    env = pettingzoo.make("aec", "ddz/dou_dizhu-v0")
    rng = np.random.default_rng(0)

    def loop(end):
        steps = 0
        env.reset(seed=0)
        while time.process_time() < end:
            obs, r, term, trunc, info = env.last()
            if term or trunc:
                env.reset()
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        return steps

    return timed(loop, seconds)


class CountDecisions:
    """Wraps a seat env: counts every seat's decisions (opponents' included), across resets."""

    def __init__(self, env):
        import gymnasium

        class Counter(gymnasium.Wrapper):
            decisions = 0

            def reset(self, **kw):
                out = self.env.reset(**kw)
                Counter.decisions += len(self.env.unwrapped.game.history)
                return out

            def step(self, action):
                n = len(self.env.unwrapped.game.history)
                out = self.env.step(action)
                Counter.decisions += len(self.env.unwrapped.game.history) - n
                return out

        self.cls = Counter
        self.env = Counter(env)


def bench_seat(seconds: float):
    from agents.integrations.seat_env import DouDizhuSeatEnv

    c = CountDecisions(DouDizhuSeatEnv(opponents="random"))
    env = c.env
    rng = np.random.default_rng(0)

    def loop(end):
        env.reset(seed=0)
        while time.process_time() < end:
            _, _, term, _, _ = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
            if term:
                env.reset()
        return c.cls.decisions

    return timed(loop, seconds)


def bench_sb3(seconds: float):
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.integrations.seat_env import DouDizhuSeatEnv

    c = CountDecisions(DouDizhuSeatEnv(opponents="random"))
    env = DummyVecEnv([lambda: c.env])
    env.seed(0)
    rng = np.random.default_rng(0)

    def loop(end):
        env.reset()
        while time.process_time() < end:
            mask = get_action_masks(env)[0]
            env.step(np.array([rng.choice(np.flatnonzero(mask))]))  # auto-resets at the end of a hand
        return c.cls.decisions

    return timed(loop, seconds)


def bench_tianshou(seconds: float):
    import pettingzoo
    from tianshou.env import PettingZooEnv

    import ddz_env  # noqa: F401

    env = PettingZooEnv(pettingzoo.make("aec", "ddz/dou_dizhu-v0"))
    rng = np.random.default_rng(0)

    def loop(end):
        steps = 0
        obs, _ = env.reset(seed=0)
        while time.process_time() < end:
            obs, rew, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
            steps += 1
            if term or trunc:
                obs, _ = env.reset()
        return steps

    return timed(loop, seconds)


def bench_torchrl(seconds: float):
    import warnings

    import pettingzoo
    import torch
    from torchrl.envs import PettingZooWrapper

    import ddz_env  # noqa: F401

    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = PettingZooWrapper(env=pettingzoo.make("aec", "ddz/dou_dizhu-v0"), use_mask=True)
    env.set_seed(0)
    groups = list(env.group_map)
    rng = np.random.default_rng(0)

    def loop(end):
        steps = 0
        td = env.reset()
        while time.process_time() < end:
            for g in groups:
                if td[g, "mask"].any():
                    legal = np.flatnonzero(td[g, "action_mask"][0].numpy())
                    td[g, "action"] = torch.tensor([int(rng.choice(legal))])
                else:
                    td[g, "action"] = torch.zeros(1, dtype=torch.int64)
            _, td = env.step_and_maybe_reset(td)
            steps += 1
        return steps

    return timed(loop, seconds)


def bench_rllib(seconds: float):
    from agents.integrations.rllib.module import make_env

    env = make_env()
    rng = np.random.default_rng(0)

    def loop(end):
        steps = 0
        obs, _ = env.reset(seed=0)
        while time.process_time() < end:
            (aid, o), = obs.items()
            obs, rew, term, trunc, info = env.step({aid: int(rng.choice(np.flatnonzero(o["action_mask"])))})
            steps += 1
            if term["__all__"]:
                obs, _ = env.reset()
        return steps

    return timed(loop, seconds)


BENCHES = {"raw": bench_raw, "seat": bench_seat, "sb3": bench_sb3, "tianshou": bench_tianshou,
           "torchrl": bench_torchrl, "rllib": bench_rllib}


def policy_positions(batch: int, decisions: int, seed: int = 0):
    """About ``decisions`` decisions in batches of ``batch``: (Decisions, dense bool masks) of random hands."""
    from agents.base import Decisions
    from ddz_env.vector import VectorDouDizhu

    env = VectorDouDizhu(batch, seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max(1, decisions // batch)):
        out.append((Decisions.of_env(env), env.action_masks().astype(bool)))
        env.step(env.random_actions(rng))
    return out


def bench_policy(batches: list[int], decisions: int = 8192) -> dict:
    """CPU us per decision of the DMC agent and of the move-scoring policy (see the module doc)."""
    import torch

    import agents
    from agents.integrations.move_policy import MoveScoringAgent, MoveScoringPolicy

    torch.set_num_threads(1)
    dmc = agents.load("pretrained")
    policy = MoveScoringPolicy.from_dmc("pretrained")
    greedy = MoveScoringAgent(policy)

    def logits(b):
        with torch.no_grad():
            policy(torch.from_numpy(b[0].observation), torch.from_numpy(b[1]))

    def train(b):
        policy(torch.from_numpy(b[0].observation), torch.from_numpy(b[1]))

    rows = {"dmc greedy": lambda b: dmc.act_batch(b[0]), "movescore greedy": lambda b: greedy.act_batch(b[0]),
            "movescore logits": logits, "movescore train": train}
    out: dict = {}
    print(f"\n{'policy forward':18s} {'batch':>6s} {'us/decision':>12s} {'x dmc':>7s}")
    for batch in batches:
        data = policy_positions(batch, decisions)
        n = sum(len(b[0]) for b in data)
        base = None
        for name, f in rows.items():
            f(data[0])  # warm-up (first-call allocations)
            t0 = time.process_time()
            for b in data:
                f(b)
            us = 1e6 * (time.process_time() - t0) / n
            base = base or us
            out[f"{name} @{batch}"] = us
            print(f"{name:18s} {batch:6d} {us:12.1f} {us / base:7.2f}")
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per row")
    p.add_argument("--only", default=",".join(BENCHES), help="comma-separated rows")
    p.add_argument("--policy-batches", default="1,16,64,512",
                   help="batch sizes of the policy forward table (comma-separated; 'none' to skip it)")
    p.add_argument("--policy-decisions", type=int, default=8192, help="decisions timed per batch size")
    args = p.parse_args(argv)
    rows = {}
    base = None
    print(f"{'wrapper':10s} {'us/step':>9s} {'x raw':>7s} {'overhead us':>12s} {'steps':>7s}")
    for name in args.only.split(","):
        try:
            us, steps = BENCHES[name](args.seconds)
        except ImportError as e:
            print(f"{name:10s} not installed ({e.name})")
            continue
        if name == "raw":
            base = us
        rows[name] = us
        ratio = f"{us / base:7.2f}" if base else "    n/a"
        over = f"{us - base:12.1f}" if base else "         n/a"
        print(f"{name:10s} {us:9.1f} {ratio} {over} {steps:7d}")
    if args.policy_batches != "none":
        try:
            rows["policy"] = bench_policy([int(b) for b in args.policy_batches.split(",")], args.policy_decisions)
        except ImportError as e:
            print(f"policy forward: not installed ({e.name})")
    return rows


if __name__ == "__main__":
    main()
