"""What searching buys and costs: ``search:BASE`` at several budgets against BASE (and others) in duplicate.

    python benchmarks/bench_search.py [--base pretrained] [--budgets 8x3,16x4] [--opponents pretrained,rule]
                                      [--deals 200] [--seed 2026] [--prior deck] [--out results.json]

A budget ``SxC`` is ``samples=S`` deals drawn per decision and ``candidates=C`` of BASE's best moves
searched (``agents/search/agent.py``): ``S * C`` rollouts of the rest of the hand per searched decision.
For each budget and opponent it plays the duplicate evaluation (``agents.evaluation.evaluate``: every
deal six times, seats rotated, so both sides hold the same cards) and prints the searcher's score per
hand with its 95% interval, then what a searched decision cost: rollouts, wall and CPU seconds of this
process (one thread). Decisions the search does not touch (bids, doubles, forced plays) cost what
BASE costs and are not counted. ``--belief AGENT`` weighs each decision's deals by how likely AGENT was
to make the other seats' moves (``agents/search/weights.py``; the same budget). Each row is written to ``--out`` as soon as it is measured (a long
run stopped keeps its rows; ``--resume`` skips the rows already there); a stream given as ``--out``
(``/dev/stdout``, a FIFO) gets them once, at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch  # noqa: E402

from ddz_env.files import write_text, written_in_place  # noqa: E402

from agents import load  # noqa: E402
from agents._entry import plain  # noqa: E402
from agents.evaluation.protocols import evaluate  # noqa: E402
from agents.search.agent import SearchAgent  # noqa: E402


def fmt(x) -> str:
    return "   n/a" if x is None else f"{x:+.3f}"


def budgets(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        s, _, c = part.strip().partition("x")
        out.append((int(s), int(c)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=plain(__doc__.splitlines()[0]))
    ap.add_argument("--base", default="pretrained", help="the base agent (an agents.load spec)")
    ap.add_argument("--budgets", default="8x3,16x4", help="SxC,...: samples x candidates per decision")
    ap.add_argument("--opponents", default="pretrained,rule", help="comma-separated agent specs")
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026, help="seed of the deals (held out: not a training seed)")
    ap.add_argument("--prior", default="deck", choices=("deck", "cards"))
    ap.add_argument("--z", type=float, default=2.0, help="switch from the base choice only z standard errors better")
    ap.add_argument("--belief", default="", help="weigh the deals with this agent's view of the others' moves")
    ap.add_argument("--temperature", type=float, default=0.1, help="the belief agent's softmax temperature")
    ap.add_argument("--out", default=None, help="JSON file of the rows (written after each row)")
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --out and skip them")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    rows: list[dict] = []
    out_is_stream = bool(args.out) and written_in_place(args.out)
    if args.resume and args.out and os.path.isfile(args.out):
        rows = json.load(open(args.out))["rows"]
    done = {(r["samples"], r["candidates"], r["opponent"], r["deals"], r["seed"], r["prior"], r.get("belief", ""),
             r.get("temperature", 0.1), r.get("z", 0.0)) for r in rows}
    base = load(args.base)
    print(f"search:{args.base} in duplicate, {args.deals} deals of seed {args.seed}, prior {args.prior}"
          + (f", belief {args.belief} at temperature {args.temperature}" if args.belief else ", uniform")
          + f", z {args.z}")
    print(f"{'budget':>8} {'opponent':>12} {'score/hand [95% CI]':>28} {'decisions':>10} {'rollouts':>9} "
          f"{'CPU s/dec':>10} {'wall s/dec':>10}")
    for r in rows:
        print(f"{r['samples']:>4}x{r['candidates']:<3} {r['opponent']:>12} {r['score']:+8.3f} "
              f"[{fmt(r['ci'][0])}, {fmt(r['ci'][1])}] {r['decisions']:>10} {r['rollouts_per_decision']:>9.0f} "
              f"{r['cpu_seconds_per_decision']:>10.3f} {r['wall_seconds_per_decision']:>10.3f}  (kept)")
    for samples, candidates in budgets(args.budgets):
        for opponent in args.opponents.split(","):
            key = (samples, candidates, opponent, args.deals, args.seed, args.prior, args.belief, args.temperature,
                   args.z)
            if key in done:
                continue
            agent = SearchAgent(base, samples=samples, candidates=candidates, prior=args.prior, seed=0,
                                belief=load(args.belief) if args.belief else None, temperature=args.temperature,
                                z=args.z,
                                name=f"search:{args.base}?samples={samples}&candidates={candidates}")
            t0 = time.time()
            res = evaluate(agent, opponent, deals=args.deals, seed=args.seed)
            a = res["A"]
            cost = agent.cost()
            row = {"samples": samples, "candidates": candidates, "opponent": opponent, "deals": args.deals,
                   "seed": args.seed, "prior": args.prior, "base": args.base,
                   "belief": args.belief, "temperature": args.temperature, "z": args.z, "score": a["mean_score"],
                   "ci": list(a["score_ci95"]), "hands": res["hands"], "seconds": time.time() - t0, **cost}
            rows.append(row)
            print(f"{samples:>4}x{candidates:<3} {opponent:>12} {row['score']:+8.3f} [{fmt(row['ci'][0])}, "
                  f"{fmt(row['ci'][1])}] {cost['decisions']:>10} {cost['rollouts_per_decision']:>9.0f} "
                  f"{cost['cpu_seconds_per_decision']:>10.3f} {cost['wall_seconds_per_decision']:>10.3f}",
                  flush=True)
            if args.out and not out_is_stream:  # whole, a link followed, never replaced (ddz_env.files)
                write_text(args.out, json.dumps({"rows": rows}, indent=1))
    if args.out and out_is_stream:  # a stream (/dev/stdout, a FIFO) is written in place: once, at the end
        write_text(args.out, json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
