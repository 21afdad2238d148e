"""Has a move-scoring policy's bidding collapsed? Its own probabilities (the softmax of its logits, not
the greedy choice) at the first bid turn of many deals.

    python benchmarks/bench_bid_probs.py benchmarks/results/marl/sb3.pt benchmarks/results/marl/torchrl.pt
                                         [--deals 2000] [--seed 123]

The first bid turn of a hand offers every bid (pass, 1, 2, 3), so each deal gives one decision over the
same four moves. Prints, for each policy file, the mean probability of each bid, how often each is the
greedy choice (what evaluate.py plays) and the median probability of the favourite bid. A collapsed
bid head puts probability near 1 on one bid in every hand; a greedy choice that is always the same bid
with probabilities well below 1 is a policy that prefers that bid, not one that has stopped exploring.
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.integrations.move_policy import load_policy  # noqa: E402
from ddz_env.actions import action_to_string  # noqa: E402
from ddz_env.vector import VectorDouDizhu  # noqa: E402


def first_bids(deals: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(planes (deals, cells) int8, rows, ids)``: the first bid turn of ``deals`` hands."""
    env = VectorDouDizhu(deals, seed=seed)
    env.reset()
    rows, ids, starts = env.legal_sets()
    counts = np.diff(starts)
    if not (counts == counts[0]).all() or not np.array_equal(ids.reshape(deals, -1), np.tile(ids[:counts[0]], (deals, 1))):
        raise RuntimeError("the first bid turns do not all offer the same moves")
    return env.observe().reshape(deals, -1), rows, ids


def bid_probabilities(path: str, planes: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """(deals, moves) the policy's probabilities over the first bid turn's moves."""
    policy = load_policy(path).eval()
    with torch.no_grad():
        scores, _ = policy.score_legal(torch.as_tensor(np.array(planes)), torch.as_tensor(rows.astype(np.int64)),
                                       torch.as_tensor(ids.astype(np.int64)))
    return torch.softmax(scores.reshape(planes.shape[0], -1).double(), dim=1).numpy()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policies", nargs="+", help="move-scoring policy files (.pt, the export format)")
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=123)
    args = ap.parse_args(argv)
    if args.deals < 1:
        ap.error("--deals must be at least 1")
    torch.set_num_threads(1)
    planes, rows, ids = first_bids(args.deals, args.seed)
    names = [action_to_string(int(i)) for i in ids[:ids.size // args.deals]]
    print(f"first bid turn of {args.deals} deals (seed {args.seed}); moves: {', '.join(names)}")
    print(f"{'policy':<28} {'mean probability':<32} {'greedy share':<32} median p(favourite)")
    for path in args.policies:
        p = bid_probabilities(path, planes, rows, ids)
        greedy = np.bincount(p.argmax(1), minlength=p.shape[1]) / p.shape[0]
        mean = " ".join(f"{x:.3f}" for x in p.mean(0))
        share = " ".join(f"{x:.3f}" for x in greedy)
        print(f"{os.path.basename(path):<28} {mean:<32} {share:<32} {np.median(p.max(1)):.3f}")


if __name__ == "__main__":
    main()
