"""Random full hands per second through the AEC env, observing every step.

    python benchmarks/bench_env.py [--seconds 5] [--rounds 20]

All rows are timed in CPU seconds of this process (time.process_time), so other
load on the machine counts less. Plays uniform-random legal actions through ``ddz_env.env()`` (the
checks of PettingZoo's classic wrappers in one layer, ``ClassicWrapper``; bidding and doubling on)
calling ``last()`` (observation + mask) before every action; the same through PettingZoo's own
three wrappers (``ddz_env.env.stock_env()``, what ``env()`` was up to 0.1.0) and through
``raw_env()`` alone. Also reports the bare rules core without observations (the baseline of the
same run) and the per-step cost of ``observe``. RLCard's doudizhu env is timed the same way when
it is installed (``pip install rlcard``); the ratios to it come from the same run. The rows take
turns (``--rounds`` rounds of ``seconds / rounds`` each, a new seed and a rotated order each
round), so a change of load on a shared machine falls on every row alike.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

import ddz_env  # noqa: E402
from ddz_env.env import stock_env  # noqa: E402
from ddz_env.game import Game  # noqa: E402
from ddz_env.observation import observe_game  # noqa: E402
from bench_speed import bench_rlcard  # noqa: E402  (the same RLCard loop as the speed table)


def bench_env(seconds: float, make=ddz_env.env, seed: int = 0) -> tuple[float, float]:
    env = make()
    rng = np.random.default_rng(seed)
    hands = steps = 0
    t0 = time.process_time()
    env.reset(seed=seed)
    while time.process_time() - t0 < seconds:
        for _agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"].view(bool))  # 20x faster than on int8
            env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
        hands += 1
        env.reset()
    dt = time.process_time() - t0
    return hands / dt, steps / dt


def bench_core(seconds: float, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    hands = steps = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        g = Game.deal(rng)
        while not g.is_over:
            la = g.legal_actions()
            g.step(la[rng.integers(la.size)])
            steps += 1
        hands += 1
    dt = time.process_time() - t0
    return hands / dt, steps / dt


def observe_us(n: int = 3000) -> float:
    rng = np.random.default_rng(1)
    games = []
    for i in range(30):
        g = Game.deal(i)
        for _ in range(int(rng.integers(5, 30))):
            if g.is_over:
                break
            la = g.legal_actions()
            g.step(la[rng.integers(la.size)])
        games.append(g)
    t0 = time.process_time()
    for i in range(n):
        observe_game(games[i % 30], i % 3)
    return (time.process_time() - t0) / n * 1e6


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=5.0, help="CPU time per row")
    p.add_argument("--rounds", type=int, default=20, help="the rows take turns, this many times")
    a = p.parse_args()
    t = a.seconds / a.rounds
    names = ["ddz_env.env() + last() every step", "  PettingZoo's 3 wrappers instead (stock_env)",
             "  raw_env() (no wrapper)", "ddz_env rules core only (no observations)",
             "RLCard doudizhu env (its own rules, no bidding)"]
    runs = [lambda r: bench_env(t, ddz_env.env, r), lambda r: bench_env(t, stock_env, r),
            lambda r: bench_env(t, ddz_env.raw_env, r), lambda r: bench_core(t, r),
            lambda r: (lambda x: None if x is None else x[:2])(bench_rlcard(t, seed=r))]
    sums: list = [np.zeros(2) for _ in runs]
    for r in range(a.rounds):  # equal CPU-time slices: the mean of the rates is the overall rate
        for k in range(len(runs)):
            i = (k + r) % len(runs)
            x = runs[i](r)
            sums[i] = None if x is None or sums[i] is None else sums[i] + np.asarray(x) / a.rounds
    rows = [(n, *s) for n, s in zip(names, sums) if s is not None]
    rl = sums[-1]
    print(f"{'random full hands, one core':<50}{'hands/s':>10}{'steps/s':>11}")
    for name, h, s in rows:
        print(f"{name:<50}{h:>10,.0f}{s:>11,.0f}")
    if rl is not None:
        print(f"env() / RLCard: {rows[0][1] / rl[0]:.2f}x hands per second (PettingZoo's 3 wrappers: "
              f"{rows[1][1] / rl[0]:.2f}x, raw_env: {rows[2][1] / rl[0]:.2f}x)")
    else:
        print("(RLCard not installed: pip install rlcard to compare)")
    print(f"observe(): {observe_us():.1f} us per call")


if __name__ == "__main__":
    main()
