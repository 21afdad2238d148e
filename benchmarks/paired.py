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
import math
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


#: the largest evaluation file read (an ``evaluate.py --out`` JSON is a few KB: 2,000 deals' scores, ~40 KB)
MAX_EVALUATION_BYTES = 16 << 20


def _finite(x: int | float) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # (an integer of hundreds of digits: JSON allows it, a float does not hold it)
        return False


def check_result(res, what: str) -> None:
    """``ValueError`` in one line when ``res`` is not an ``evaluate.py --out`` result: an object with its
    ``config`` object and ``per_deal_score_a``, a non-empty list of finite numbers, one per deal."""
    if not isinstance(res, dict) or not isinstance(res.get("config"), dict):
        raise ValueError(f"{what} is not an evaluate.py --out result (an object with its \"config\")")
    scores = res.get("per_deal_score_a")
    if not isinstance(scores, list) or not scores:
        raise ValueError(f"{what} has no per-deal scores (\"per_deal_score_a\": a list of numbers, one per deal)")
    for x in scores:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not _finite(x):
            shown = repr(x) if len(repr(x)) <= 40 else repr(x)[:37] + "..."
            raise ValueError(f"{what}: \"per_deal_score_a\" holds {shown}, not a finite number")
    deals = res["config"].get("deals")
    if deals is not None and deals != len(scores):
        raise ValueError(f"{what}: {len(scores)} per-deal scores for {deals!r} deals")


def read_result(path: str) -> dict:
    """The ``evaluate.py --out`` result in ``path``: a regular file of at most :data:`MAX_EVALUATION_BYTES`
    (checked before it is opened: a FIFO would block, a device stream for ever), JSON, of that form;
    ``FileNotFoundError`` / ``ValueError`` in one line otherwise."""
    from ddz_env.files import input_file

    input_file(path, "evaluation", MAX_EVALUATION_BYTES)
    try:
        with open(path, encoding="utf-8") as f:
            res = json.load(f)
    except UnicodeDecodeError as e:
        raise ValueError(f"evaluation {path!r} is not JSON (not UTF-8 text: {e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"evaluation {path!r} is not JSON ({e})") from None
    except RecursionError:
        raise ValueError(f"evaluation {path!r} is not an evaluate.py --out result (nested too deep)") from None
    check_result(res, f"evaluation {path!r}")
    return res


def paired(a: dict, b: dict) -> dict:
    """``b - a`` per deal; ``ValueError`` when either is not an ``evaluate.py --out`` result
    (:func:`check_result`) or the two did not play the same deals against the same opponent."""
    check_result(a, "the first evaluation")
    check_result(b, "the second evaluation")
    ca, cb = a["config"], b["config"]
    for key in ("deals", "seed", "mode", "b", "rules"):
        if ca.get(key) != cb.get(key):
            raise ValueError(f"the two evaluations differ in {key}: {ca.get(key)!r} and {cb.get(key)!r}")
    xa, xb = np.asarray(a["per_deal_score_a"], float), np.asarray(b["per_deal_score_a"], float)
    if len(xa) != len(xb):
        raise ValueError(f"the two evaluations have {len(xa)} and {len(xb)} per-deal scores: not the same deals")
    d = xb - xa
    return {"a": ca.get("a"), "b": cb.get("a"), "opponent": ca.get("b"), "deals": len(d), "seed": ca.get("seed"),
            "mean_a": mean_ci(xa), "mean_b": mean_ci(xb), "difference": mean_ci(d)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=plain(__doc__.splitlines()[0]))
    p.add_argument("a", help="evaluate.py --out JSON of the first agent")
    p.add_argument("b", help="evaluate.py --out JSON of the second (the difference is b - a)")
    args = p.parse_args(argv)
    try:
        r = paired(read_result(args.a), read_result(args.b))
    except (OSError, ValueError) as e:
        print(f"paired.py: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
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
