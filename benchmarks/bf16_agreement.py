"""How often bfloat16 matmuls change a trained DMC agent's greedy choice (issue 11, suspect 4).

    python benchmarks/bf16_agreement.py [--agent pretrained] [--deals 200] [--seed 0]

The agent plays ``rule`` in duplicate deals (``agents.evaluate``) with fp32 weights and
matmuls, as evaluation does; at every decision with more than one legal action it also
chooses under ``torch.autocast(bfloat16)``, as the actors of a ``precision: bf16`` run act.
Prints, per phase, the decisions compared and the share where the two choices differ.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


#: per phase: decisions compared, and those where bf16 chose otherwise (module-level: the
#: evaluation plays with a deep copy of the agent object)
SEEN = np.zeros(5, np.int64)
DIFFER = np.zeros(5, np.int64)


class Compare:
    """A batch agent: acts in fp32, counts where bf16 would have chosen otherwise."""

    def __init__(self, agent):
        self.agent = agent

    def act_batch(self, decisions):
        import torch

        fp32 = self.agent.act_batch(decisions)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            bf16 = self.agent.act_batch(decisions)
        multi = np.diff(decisions.legal_starts) > 1
        np.add.at(SEEN, decisions.phase[multi], 1)
        np.add.at(DIFFER, decisions.phase[multi], (fp32 != bf16)[multi])
        return fp32


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="pretrained", help="an agents.load spec of a DMC agent")
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    import torch

    from agents import evaluate, load
    from ddz_env.rules import Phase

    torch.set_num_threads(1)
    cmp = Compare(load(a.agent))
    res = evaluate(cmp, "rule", deals=a.deals, seed=a.seed)
    print(f"{a.agent} vs rule, duplicate, {a.deals} deals (seed {a.seed}): {res['A']['mean_score']:+.3f} per hand (fp32)")
    print(f"{'phase':10s} {'decisions':>10s} {'bf16 differs':>13s}")
    for p in (Phase.BID, Phase.DOUBLE, Phase.REDOUBLE, Phase.PLAY):
        n, d = int(SEEN[p]), int(DIFFER[p])
        print(f"{p.name:10s} {n:10,d} {d / n if n else float('nan'):12.2%}")
    n, d = int(SEEN.sum()), int(DIFFER.sum())
    print(f"{'all':10s} {n:10,d} {d / n:12.2%}  (decisions with more than one legal action)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
