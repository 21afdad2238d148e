"""How much the library examples' short runs learn, over several seeds (the integration tests' recipes).

    python benchmarks/bench_short_learning.py [--learners tianshou,torchrl,sb3] [--seeds 0-7]

Each learner trains one seat against two random seats, exactly as its integration test does (the same
sizes and settings; the seed varies), and is scored on the same seeded deals before and after. The
gain (after - before, points per hand) of so short a run depends on the seed and on the CPU's float
paths (another machine's run is, in effect, another seed), so the tests assert only what every seed
here clears; this script prints each seed's figures, the mean gain with its 95% interval, and the
smallest gain.

Measured on a 2-core machine (seeds 0-7; each gain in points per hand, duplicate against random):

    tianshou  mean gain +3.94 [+0.14, +7.73], smallest -2.35 (seed 6), largest +11.86
    torchrl   mean gain +2.59 [+1.48, +3.69], smallest -0.45 (seed 7), largest +4.13
    sb3       mean gain +6.76 [+1.90, +11.63], smallest -3.43 (seed 4), largest +13.66

Each learner has a seed that loses, so no per-run margin holds on every machine: the tests check the
mechanics (legal actions, returns equal to scores, updates, weights that move) and this script the learning.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tianshou(seed: int) -> tuple[float, float]:
    """tests/integrations/test_integrations.py::test_tianshou_ppo_trainer_trains_against_random_seats."""
    out = _example("tianshou_ppo").train(epochs=2, epoch_steps=2048, collect_steps=512, num_envs=4, seed=seed,
                                         eval_deals=50, verbose=False)
    return out["before"], out["after"]


def torchrl(seed: int) -> tuple[float, float]:
    """tests/integrations/test_integrations.py::test_torchrl_ppo_trains_against_random_seats."""
    out = _example("torchrl_ppo").train(batches=8, frames=512, epochs=2, minibatch=128, seed=seed, eval_hands=200,
                                        verbose=False)
    return out["before"]["score"], out["after"]["score"]


def sb3(seed: int) -> tuple[float, float]:
    """tests/integrations/test_sb3_policy.py::test_trains_against_random_seats."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.evaluation.protocols import evaluate
    from agents.integrations.move_policy import MoveScoringAgent
    from agents.integrations.sb3.policy import MoveScoringSB3Policy
    from agents.integrations.seat_env import DouDizhuSeatEnv

    env = DummyVecEnv([lambda: Monitor(DouDizhuSeatEnv(opponents="random", reward_scale=0.05)) for _ in range(8)])
    model = MaskablePPO(MoveScoringSB3Policy, env, n_steps=64, batch_size=128, n_epochs=4, learning_rate=1e-3,
                        gamma=1.0, seed=seed, device="cpu",
                        policy_kwargs={"state_layers": [64], "head_layers": [32]})
    agent = MoveScoringAgent(model.policy.move_policy)
    before = evaluate(agent, "random", deals=30, seed=7)["A"]["mean_score"]
    model.learn(total_timesteps=4096)
    return before, evaluate(agent, "random", deals=30, seed=7)["A"]["mean_score"]


LEARNERS = {"tianshou": tianshou, "torchrl": torchrl, "sb3": sb3}


def seeds_of(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi) + 1)) if hi else [int(x) for x in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--learners", default="tianshou,torchrl,sb3")
    ap.add_argument("--seeds", default="0-7", help="a range 0-7 or a list 0,3,5")
    args = ap.parse_args()
    import torch
    from scipy import stats

    torch.set_num_threads(1)
    for name in args.learners.split(","):
        gains = []
        for seed in seeds_of(args.seeds):
            import numpy as np

            np.random.seed(seed)
            torch.manual_seed(seed)
            t0 = time.perf_counter()
            before, after = LEARNERS[name](seed)
            gains.append(after - before)
            print(f"{name} seed {seed}: {before:+.2f} -> {after:+.2f} (gain {after - before:+.2f}, "
                  f"{time.perf_counter() - t0:.0f} s)", flush=True)
        m = statistics.fmean(gains)
        half = (stats.t.ppf(0.975, len(gains) - 1) * statistics.stdev(gains) / len(gains) ** 0.5
                if len(gains) > 1 else float("nan"))
        print(f"{name}: mean gain {m:+.2f} [{m - half:+.2f}, {m + half:+.2f}] over {len(gains)} seeds; "
              f"smallest {min(gains):+.2f}", flush=True)


if __name__ == "__main__":
    main()
