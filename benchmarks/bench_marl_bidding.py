"""How much of an agent's gap to another is its bidding: the agent as it is, then its play with another
agent's bids, doubles and redoubles, both against the same opponent on the same deals (duplicate).

    python benchmarks/bench_marl_bidding.py benchmarks/results/marl/torchrl.pt [--bidder rule] [--against rule]
                                            [--deals 1000] [--seed 11]

Prints, for each of the two, the score per hand against ``--against`` with its 95% interval, the landlord
share and the win rates as landlord and farmer, then the per-deal paired difference (the gain from the
bidder's bidding) with its 95% interval. The same deals and seatings for both rows: the difference is
paired deal by deal.
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

import agents  # noqa: E402
from agents.base import BatchAgent, Decisions  # noqa: E402
from agents.evaluation.protocols import evaluate  # noqa: E402
from ddz_env.rules import Phase  # noqa: E402


class PlayAndBid(BatchAgent):
    """``player`` in the play phase, ``bidder`` in the bid, double and redouble phases (each sees only the
    decisions of its phases, all from the one seat's observation)."""

    def __init__(self, player: str, bidder: str):
        self.player, self.bidder = agents.load(player), agents.load(bidder)
        self.name = f"{player} (bids: {bidder})"

    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        for a in (self.player, self.bidder):
            if hasattr(a, "begin_hands"):
                a.begin_hands(streams, seeds)

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        out = np.empty(len(decisions), np.int64)
        play = decisions.phase == int(Phase.PLAY)
        for mask, agent in ((play, self.player), (~play, self.bidder)):
            idx = np.flatnonzero(mask)
            if idx.size:
                out[idx] = agent.act_batch(decisions.take(idx))
        return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("agent", help="an agent spec (a library policy.pt, a run folder, pretrained ...)")
    p.add_argument("--bidder", default="rule", help="who bids and doubles for it in the second row")
    p.add_argument("--against", default="rule", help="the opponent of both rows")
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args(argv)
    rows = {}
    for label, a in ((f"{args.agent}", args.agent), (f"its play, {args.bidder}'s bids", PlayAndBid(args.agent, args.bidder))):
        r = evaluate(a, args.against, deals=args.deals, seed=args.seed)
        rows[label] = r
        A = r["A"]
        lo, hi = A["score_ci95"]
        rate = {k: "-" if A[k] is None else f"{A[k]:.1%}" for k in ("win_rate_landlord", "win_rate_farmer")}
        print(f"{label:60s} vs {args.against}: {A['mean_score']:+.3f} [{lo:+.3f}, {hi:+.3f}]  landlord share "
              f"{A['landlord_share']:.1%}, win rate as landlord {rate['win_rate_landlord']}, as farmer "
              f"{rate['win_rate_farmer']}", flush=True)
    own, other = (np.asarray(r["per_deal_score_a"], float) for r in rows.values())
    d = other - own
    half = 1.96 * d.std(ddof=1) / np.sqrt(d.size)
    print(f"gain from {args.bidder}'s bidding: {d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}] per hand "
          f"(paired over {d.size} deals, seed {args.seed})")
    return {"rows": rows, "gain": float(d.mean()), "gain_ci95": [float(d.mean() - half), float(d.mean() + half)]}


if __name__ == "__main__":
    main()
