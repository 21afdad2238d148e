"""What the exact endgame solver (ddz_env/endgame.py) costs: CPU per position at a given number of cards.

    nice -n 19 python benchmarks/bench_endgame.py --cards 6 9 12 15 18 --positions 200 --seed 2026

Positions come from real self-play: seeded hands of the rule agent (or ``--agent random``: random legal
moves, random bids; or any agent spec) at all three seats, each stopped at the first play-phase position with at most the
given number of cards in the three hands (so the positions are the ones a game reaches, the kickers,
bombs and springs of real play included). Each position is solved from empty tables (``clear_tables``:
the move lists and the transposition table, so no position profits from another) by ``solve``: the exact
value and a best move for the seat on turn. Prints, per card count, the positions solved per CPU second
and the median, 95th percentile and largest CPU milliseconds per position, and the mean nodes searched.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from agents import load
from agents.base import Decisions
from ddz_env import endgame as E
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu


def positions(cards: int, count: int, seed: int, agent: str) -> list[E.Position]:
    """``count`` positions of at most ``cards`` cards in the hands, from seeded self-play of ``agent`` at
    every seat: tables of the batched env held at their first such position while the others play on
    (twice as many tables as positions; the first ``count`` held, by table)."""
    env = VectorDouDizhu(2 * count, seed=seed + cards)
    rng = np.random.default_rng([seed, cards])
    player = None if agent == "random" else load(agent)
    for _ in range(2000):
        st = env.state
        hold = (st.phase == Phase.PLAY) & (st.n_cards.sum(axis=1) <= cards)
        if hold.sum() >= count:
            break
        live = np.flatnonzero(~hold)
        actions = env.random_actions(rng)
        if player is not None:
            actions[live] = player.act_batch(Decisions.of_env(env, live))
        env.step(actions, observe=False, active=~hold)
    return [E.Position.of_batch(env.state, b) for b in np.flatnonzero(hold)[:count].tolist()]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cards", type=int, nargs="+", default=[6, 9, 12, 15])
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--agent", default="rule", help="the self-play agent: rule, random or any spec")
    args = ap.parse_args(argv)
    print(f"{'cards':>5} {'positions':>9} {'mean cards':>10} {'per CPU s':>10} {'median ms':>10} {'p95 ms':>8} "
          f"{'max ms':>8} {'nodes':>8}")
    for cards in args.cards:
        ps = positions(cards, args.positions, args.seed, args.agent)
        ms, nodes = [], []
        for p in ps:
            E.clear_tables()
            t = time.process_time()
            E.solve(p, max_cards=max(cards, E.SOLVE_LIMIT))
            ms.append(1000 * (time.process_time() - t))
            nodes.append(E.nodes_searched())
        ms_a = np.array(ms)
        print(f"{cards:>5} {len(ps):>9} {np.mean([p.cards for p in ps]):>10.1f} {len(ps) / (ms_a.sum() / 1000):>10.0f} "
              f"{np.median(ms_a):>10.2f} {np.percentile(ms_a, 95):>8.2f} {ms_a.max():>8.1f} {np.mean(nodes):>8.0f}")


if __name__ == "__main__":
    main()
