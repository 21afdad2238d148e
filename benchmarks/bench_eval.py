"""Evaluated hands per second, one worker, against one AEC env playing random actions in the same run.

    python benchmarks/bench_eval.py [--deals 200] [--checkpoint PATH] [--tables 256]

Times ``agents.evaluate(a, b, workers=1)`` end to end (duplicate format: six seatings of
every deal on the batched env, each agent deciding all its pending decisions in one
call) for DMC vs DMC, DMC vs rule and rule vs random, and, as the baseline of the same
run, ``ddz_env.env()`` playing uniform-random legal actions with ``last()`` every step
(``bench_env.py``'s loop). All figures are CPU seconds of this process with one torch
thread, so other load on the machine counts less. The DMC agent is ``--checkpoint``, or
an untrained network of the ``default`` config's shape (the same cost per decision).
Also timed: DMC vs DMC one decision at a time through the AEC env (``act(observation)``,
the path evaluation took before it was batched), and the rule agent's time per decision.
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch  # noqa: E402

from agents import RuleAgent, evaluate  # noqa: E402
from agents.evaluation.arena import seat_seed  # noqa: E402
from agents.evaluation.protocols import jobs_for  # noqa: E402
from bench_env import bench_env  # noqa: E402  (the AEC random-play loop)
from ddz_env.env import AGENTS, raw_env  # noqa: E402


class TimedRule(RuleAgent):
    """The rule agent, counting its decisions and the CPU time they take."""

    calls = 0
    seconds = 0.0

    def act_batch(self, decisions):
        t = time.process_time()
        a = super().act_batch(decisions)
        TimedRule.seconds += time.process_time() - t
        TimedRule.calls += len(decisions)
        return a


def dmc_agent(checkpoint: str | None):
    from agents.dmc import DMCAgent, DMCModel
    from agents.dmc.config import load_config

    if checkpoint:
        return DMCAgent.from_checkpoint(checkpoint)
    torch.manual_seed(0)
    cfg = load_config("default")
    return DMCAgent(DMCModel(**cfg.model_kwargs()))


def bench(a, b, deals: int, seed: int, tables: int) -> tuple[float, dict]:
    t = time.process_time()
    res = evaluate(a, b, deals=deals, seed=seed, workers=1, tables=tables)
    return res["hands"] / (time.process_time() - t), res


def bench_one_at_a_time(a, b, deals: int, seed: int) -> float:
    """Hands/s of duplicate play through the AEC env, one ``act`` per decision (the unbatched path)."""
    env = raw_env()
    seats = ([copy.deepcopy(a) for _ in range(3)], [copy.deepcopy(b) for _ in range(3)])
    jobs = jobs_for(seed, 0, deals, "duplicate")
    t = time.process_time()
    for j in jobs:
        d = j.deal
        env.reset(options={"deal": {"hands": d.hands, "bottom": d.bottom, "first_bidder": d.first_bidder}})
        players = [seats[k][s] for s, k in enumerate(j.seats)]
        for s in range(3):
            players[s].reset(seat_seed(seed, j.index, s))
        g = env.game
        while not g.is_over:
            s = g.current_player
            env.step(players[s].act(env.observe(AGENTS[s])))
    return len(jobs) / (time.process_time() - t)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=200, help="deals per measurement (x6 hands)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", help="a DMC checkpoint (default: an untrained default-size network)")
    p.add_argument("--tables", type=int, default=1024, help="tables stepped together (evaluate's default)")
    p.add_argument("--seconds", type=float, default=10.0, help="CPU seconds of AEC random play")
    a = p.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    dmc = dmc_agent(a.checkpoint)
    evaluate("rule", "random", deals=2, seed=a.seed + 1)  # warm-up: imports, move-table caches
    aec, _ = bench_env(a.seconds)
    print(f"baseline: AEC env() random play, last() every step: {aec:,.0f} hands/s")
    rows = []
    for label, x, y, deals in (("DMC vs DMC", dmc, dmc, a.deals), ("DMC vs rule", dmc, "rule", a.deals),
                               ("rule vs random", "rule", "random", a.deals)):
        hps, res = bench(x, y, deals, a.seed, a.tables)
        rows.append((label, hps))
        print(f"{label:<16} duplicate, 1 worker, {a.tables} tables: {hps:7,.0f} hands/s = {hps / aec:5.2f}x AEC "
              f"random play  ({res['hands']} hands; A scores {res['A']['mean_score']:+.2f}/hand)")
    one = bench_one_at_a_time(dmc, dmc, max(2, a.deals // 20), a.seed)
    print(f"DMC vs DMC one decision at a time through the AEC env: {one:,.0f} hands/s = {one / aec:.2f}x AEC "
          f"random play (batched: {rows[0][1] / one:.1f}x this)")
    TimedRule.calls, TimedRule.seconds = 0, 0.0
    bench(TimedRule(), "rule", max(2, a.deals // 4), a.seed, a.tables)
    print(f"rule agent: {1e3 * TimedRule.seconds / max(TimedRule.calls, 1):.3f} ms per decision "
          f"({TimedRule.calls} decisions)")


if __name__ == "__main__":
    main()
