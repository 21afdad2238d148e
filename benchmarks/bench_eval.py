"""Evaluated hands per second: rule vs random in duplicate format, one worker.

    python benchmarks/bench_eval.py [--deals 200] [--seed 0]

Times ``agents.evaluate("rule", "random", ...)`` end to end (every seating of every
deal through the AEC env, observation planes built for every decision) and reports
hands per second. Rule vs rule is timed too, with the rule agent's mean time per
decision (its plans are cached per hand, and a deal comes back in six seatings), and
the cold cost of planning a fresh hand.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents import RuleAgent, evaluate  # noqa: E402


class TimedRule(RuleAgent):
    """The rule agent, counting its decisions and the time they take."""

    calls = 0
    seconds = 0.0

    def act(self, observation, env=None):
        t = time.perf_counter()
        a = super().act(observation, env)
        TimedRule.seconds += time.perf_counter() - t
        TimedRule.calls += 1
        return a


def bench(a, b, deals: int, seed: int) -> tuple[float, dict]:
    t = time.perf_counter()
    res = evaluate(a, b, deals=deals, seed=seed, workers=1)
    return res["hands"] / (time.perf_counter() - t), res


def plan_ms(n: int = 300) -> tuple[float, float]:
    """Milliseconds to plan a fresh 17-card and 20-card hand (cache cleared: the cold cost)."""
    import numpy as np

    from agents.hand import _plan, plan
    from ddz_env.cards import deal

    rng = np.random.default_rng(0)
    deals = [deal(rng) for _ in range(n)]
    out = []
    for hands in ([h[0] for h, _ in deals], [h[0] + b for h, b in deals]):
        _plan.cache_clear()
        t = time.perf_counter()
        for h in hands:
            plan(h)
        out.append(1e3 * (time.perf_counter() - t) / n)
    _plan.cache_clear()
    return out[0], out[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=200, help="deals per measurement (x6 hands)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    warnings.simplefilter("ignore")
    evaluate("rule", "random", deals=2, seed=a.seed + 1)  # warm-up: imports, move-table caches
    hps, res = bench("rule", "random", a.deals, a.seed)
    print(f"rule vs random, duplicate, 1 worker: {hps:,.0f} hands/s  ({res['hands']} hands; "
          f"rule scores {res['A']['mean_score']:+.2f}/hand)")
    TimedRule.calls, TimedRule.seconds = 0, 0.0
    hps_rr, res_rr = bench(TimedRule(), "rule", a.deals // 2, a.seed)
    per = 1e3 * TimedRule.seconds / max(TimedRule.calls, 1)
    print(f"rule vs rule,   duplicate, 1 worker: {hps_rr:,.0f} hands/s  ({res_rr['hands']} hands; "
          f"rule agent {per:.3f} ms per decision over {TimedRule.calls} decisions of one side)")
    p17, p20 = plan_ms()
    print(f"hand plan, cold cache: {p17:.2f} ms for 17 cards, {p20:.2f} ms for 20 cards")


if __name__ == "__main__":
    main()
