"""Speed of the legality core and of whole random hands (one core).

    python benchmarks/bench_legal.py [--quick]

Prints microseconds per legal-mask query (20-card lead, 17-card lead, a typical
response), batched masks per hand at B = 1, 64, 1024, and random full hands per
second with bidding. The baseline, measured in the same run, is the plain numpy
way: compare the hand with every row of the move table, then filter by type.
When RLCard is installed (``pip install rlcard``), its lead generator
(``DoudizhuJudger.playable_cards_from_hand``) is timed on the same hands.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

from ddz_env.cards import deal, to_string  # noqa: E402
from ddz_env.legal import legal_ids_unchecked, legal_ids_batch, legal_mask, legal_mask_batch  # noqa: E402
from bench_env import bench_core  # noqa: E402  (random full hands through the rules core)
from ddz_env.moves import BEATS, MOVE_COUNTS, MOVE_GROUP, NUM_MOVES  # noqa: E402


def naive_mask(hand: np.ndarray, last: int) -> np.ndarray:
    """Baseline: every row of the table against the hand, then the beats filter."""
    fits = np.all(MOVE_COUNTS <= hand, axis=1)
    return fits & np.concatenate([[last != 0], BEATS[MOVE_GROUP[last], MOVE_GROUP[1:]]])


def per_call_us(fn, cases, repeat: int) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        for c in cases:
            fn(*c)
    return (time.perf_counter() - t0) / (repeat * len(cases)) * 1e6


def typical_responses(n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, int]]:
    """(17-card hand, move to beat) pairs where the move is one another hand could lead."""
    out = []
    while len(out) < n:
        hands, _ = deal(rng)
        leads = legal_ids_unchecked(hands[1], 0)
        out.append((hands[0], int(rng.choice(leads))))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    a = p.parse_args()
    rep = 20 if a.quick else 200
    rng = np.random.default_rng(0)
    deals = [deal(rng) for _ in range(50)]
    lead20 = [(h[0] + b, 0) for h, b in deals]
    lead17 = [(h[0], 0) for h, b in deals]
    resp = typical_responses(50, rng)

    rlcard_lead = None
    try:
        from rlcard.games.doudizhu.judger import DoudizhuJudger

        strs = [(to_string(h),) for h, _ in lead20]
        rlcard_lead = per_call_us(DoudizhuJudger.playable_cards_from_hand, strs, max(2, rep // 10))
    except ImportError:
        pass
    rows = []
    for name, cases in (("20-card lead", lead20), ("17-card lead", lead17), ("typical response", resp)):
        ours_ids = per_call_us(legal_ids_unchecked, cases, rep)
        ours_mask = per_call_us(legal_mask, cases, rep)
        base = per_call_us(naive_mask, cases, max(2, rep // 10))
        rows.append((name, ours_ids, ours_mask, base))
    print("legal-move query, one hand (us per call; lower is better)")
    print(f"{'case':<18}{'ids':>10}{'mask':>10}{'naive numpy':>14}{'speed-up':>10}")
    for name, ids_us, mask_us, base in rows:
        print(f"{name:<18}{ids_us:>10.2f}{mask_us:>10.2f}{base:>14.2f}{base / mask_us:>9.1f}x")
    if rlcard_lead is not None:
        print(f"RLCard's lead generator on the same 20-card hands: {rlcard_lead:.1f} us per call "
              f"({rlcard_lead / rows[0][1]:.1f}x our ids query)")
    else:
        print("(RLCard not installed: its lead generator is not timed)")

    print("\nbatched masks (us per hand; B hands, half leads, half responses; dense into a reused buffer)")
    print(f"{'B':>6}{'dense mask':>12}{'compact ids':>13}{'naive numpy':>13}")
    for B in (1, 64, 1024):
        H = np.stack([(resp[i % 50][0] if i % 2 else lead17[i % 50][0]) for i in range(B)])
        L = np.array([(resp[i % 50][1] if i % 2 else 0) for i in range(B)])
        n = max(10, (rep * 20) // B)
        buf = np.zeros((B, NUM_MOVES), dtype=bool)
        legal_mask_batch(H, L, out=buf)  # warm-up: first touch of the buffer's pages
        t0 = time.perf_counter()
        for _ in range(n):
            legal_mask_batch(H, L, out=buf)
        dense = (time.perf_counter() - t0) / (n * B) * 1e6
        t0 = time.perf_counter()
        for _ in range(n):
            legal_ids_batch(H, L)
        compact = (time.perf_counter() - t0) / (n * B) * 1e6
        m = max(1, n // 20)
        t0 = time.perf_counter()
        for _ in range(m):
            for i in range(B):
                naive_mask(H[i], int(L[i]))
        naive = (time.perf_counter() - t0) / (m * B) * 1e6
        print(f"{B:>6}{dense:>12.2f}{compact:>13.2f}{naive:>13.2f}")

    hps, dps = bench_core(2.0 if a.quick else 5.0)
    print(f"\nrandom full hands (bidding and doubling included), one core: "
          f"{hps:,.0f} hands/s, {dps:,.0f} decisions/s")


if __name__ == "__main__":
    main()
