"""The paired per-deal difference of two evaluations on the same deals (two ``evaluate.py --out`` files).

    python evaluate.py --a RUN_A --b rule --deals 1000 --seed 11 --out a.json
    python evaluate.py --a RUN_B --b rule --deals 1000 --seed 11 --out b.json
    python benchmarks/paired.py a.json b.json          # B's score minus A's, deal by deal

Both files must have played the same deals (seed, count, mode, opponent and rules), which is checked. Prints
each side's mean with its 95% interval and the mean of the per-deal differences (``per_deal_score_a``: agent
A's mean score over the deal's seatings) with a Student-t 95% interval over deals: far narrower than the two
intervals side by side, since a deal's luck falls on both.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from agents._entry import plain  # noqa: E402
from agents.evaluation import stats  # noqa: E402


def mean_ci(x: np.ndarray) -> tuple[float, float, float]:
    """Mean and its Student-t 95% interval over deals (``agents.evaluation.stats.mean_ci``)."""
    r = stats.mean_ci(np.asarray(x, float))
    return r["mean"], r["ci95"][0], r["ci95"][1]


def paired(a: dict, b: dict) -> dict:
    """``b - a`` per deal; ``ValueError`` when the two did not play the same deals against the same opponent."""
    ca, cb = a.get("config", {}), b.get("config", {})
    for key in ("deals", "seed", "mode", "b", "rules"):
        if ca.get(key) != cb.get(key):
            raise ValueError(f"the two evaluations differ in {key}: {ca.get(key)!r} and {cb.get(key)!r}")
    xa, xb = np.asarray(a["per_deal_score_a"], float), np.asarray(b["per_deal_score_a"], float)
    d = xb - xa
    return {"a": ca.get("a"), "b": cb.get("a"), "opponent": ca.get("b"), "deals": len(d), "seed": ca.get("seed"),
            "mean_a": mean_ci(xa), "mean_b": mean_ci(xb), "difference": mean_ci(d)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=plain(__doc__.splitlines()[0]))
    p.add_argument("a", help="evaluate.py --out JSON of the first agent")
    p.add_argument("b", help="evaluate.py --out JSON of the second (the difference is b - a)")
    args = p.parse_args(argv)
    try:
        with open(args.a) as fa, open(args.b) as fb:
            r = paired(json.load(fa), json.load(fb))
    except (OSError, ValueError, KeyError) as e:
        print(f"paired.py: error: {e}", file=sys.stderr)
        return 2

    def fmt(m: tuple[float, float, float]) -> str:
        return f"{m[0]:+.3f} [{m[1]:+.3f}, {m[2]:+.3f}]"

    print(f"against {r['opponent']}, {r['deals']} deals, seed {r['seed']}:")
    print(f"  A {r['a']}: {fmt(r['mean_a'])}")
    print(f"  B {r['b']}: {fmt(r['mean_b'])}")
    print(f"  B - A, paired per deal: {fmt(r['difference'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
