"""Time to draw deals consistent with one seat's view (``ddz_env.beliefs``), 1,000 at a time.

    python benchmarks/bench_beliefs.py [--n 1000] [--repeats 50] [--seed 0]

For decisions of a random rulebook hand in each phase (the first bid, the doubling, early, middle
and late play) times ``sample_deal_arrays`` (the vectorized core: (n, 3, 15) hands and (n, 15)
bottoms), ``sample_deals`` (the same as a list of ``Deal``) and ``sample_hidden`` (from the
seat's observation planes alone), each for the seat to act. Each figure is the median and the
best of ``--repeats`` calls in CPU seconds of this process (``time.process_time``), so other load
on a shared machine counts less; one thread (numpy's work here is small arrays).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

from agents._entry import plain  # noqa: E402
from ddz_env import Game, Phase  # noqa: E402
from ddz_env.beliefs import sample_deal_arrays, sample_deals, sample_hidden  # noqa: E402
from ddz_env.observation import observe_game  # noqa: E402


def positions(seed: int) -> list[tuple[str, Game]]:
    """A random rulebook hand (redealt until it reaches the redouble and 40 plays): copies of it at
    the first bid, the first doubling choice, and after 2, 20 and 40 plays."""
    rng = np.random.default_rng(seed)
    while True:
        g = Game.deal(rng)
        marks: dict[str, Game] = {"bid": g.copy()}
        while not g.is_over:
            if g.phase == Phase.DOUBLE and "double" not in marks:
                marks["double"] = g.copy()
            for k in (2, 20, 40):
                if g.phase == Phase.PLAY and len(g.plays) == k and f"play {k}" not in marks:
                    marks[f"play {k}"] = g.copy()
            g.step(int(rng.choice(g.legal_actions())))
        if len(marks) == 5:
            return list(marks.items())


def timed(f, repeats: int) -> tuple[float, float]:
    """(median, best) CPU milliseconds of ``f()``."""
    ts = []
    for _ in range(repeats):
        t = time.process_time()
        f()
        ts.append(time.process_time() - t)
    return float(np.median(ts)) * 1e3, min(ts) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=plain(__doc__.split("\n\n")[0]))
    ap.add_argument("--n", type=int, default=1000, help="deals drawn per call")
    ap.add_argument("--repeats", type=int, default=50, help="calls timed per figure")
    ap.add_argument("--seed", type=int, default=0, help="the random hand")
    args = ap.parse_args()
    print(f"{args.n} draws per call, CPU ms: median (best) of {args.repeats}")
    print(f"{'decision':<10} {'unseen':>6}  {'sample_deal_arrays':>20} {'sample_deals':>16} {'sample_hidden':>16}")
    for name, g in positions(args.seed):
        seat = g.current_player
        obs = observe_game(g, seat)
        rows = [timed(partial(sample_deal_arrays, g, seat, args.n, seed=1), args.repeats),
                timed(partial(sample_deals, g, seat, args.n, seed=1), args.repeats),
                timed(partial(sample_hidden, obs, args.n, seed=1), args.repeats)]
        unseen = int(obs[1].sum())
        print(f"{name:<10} {unseen:>6}  " + " ".join(f"{m:>9.2f} ({b:5.2f})" for m, b in rows))


if __name__ == "__main__":
    main()
