"""Decisions per second of an agent exported to ONNX (onnxruntime) against the same agent in torch.

    python benchmarks/bench_onnx.py [--agents pretrained,benchmarks/results/marl/torchrl.pt] [--decisions 4096]
                                    [--tables 64] [--seconds 4] [--threads 1]

Each agent is exported (``agents.onnx.export.export_onnx``, into a temporary folder), then both
play the same seeded decisions of every phase (``--tables`` random hands stepped together, forced decisions
included, as the evaluation hands them over): in batches of ``--tables`` decisions (the evaluation's way) and
one decision a call (a person's table, the web page). The two alternate in rounds of a pass over the decisions
until each has had ``--seconds`` (a machine's other load falls on both alike). Both give the same moves (checked
on every pass). Prints decisions per second of each and the ratio ONNX / torch; one thread each (``--threads``).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents import load  # noqa: E402
from agents.onnx.agent import OnnxAgent  # noqa: E402
from agents.onnx.export import decisions, export_onnx  # noqa: E402


def rate(agents: dict, batches: list, seconds: float) -> dict[str, float]:
    """Decisions per second of each agent over ``batches``, passes alternating until each had ``seconds``."""
    spent = dict.fromkeys(agents, 0.0)
    done = dict.fromkeys(agents, 0)
    while min(spent.values()) < seconds:
        moves = {}
        for name, agent in agents.items():
            t = time.perf_counter()
            moves[name] = [agent.act_batch(d) for d in batches]
            spent[name] += time.perf_counter() - t
            done[name] += sum(len(d) for d in batches)
        first, *others = moves.values()
        for other in others:
            if not all(np.array_equal(a, b) for a, b in zip(first, other)):
                raise SystemExit("bench_onnx.py: the ONNX agent chose another move than the torch agent")
    return {name: done[name] / spent[name] for name in agents}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="pretrained,benchmarks/results/marl/torchrl.pt",
                    help="comma-separated agent specs with networks (DMC, move-scoring policies)")
    ap.add_argument("--decisions", type=int, default=4096, help="seeded decisions played by both (default 4096)")
    ap.add_argument("--tables", type=int, default=64, help="hands stepped together: the batch (default 64)")
    ap.add_argument("--seconds", type=float, default=4.0, help="time for each agent and way (default 4)")
    ap.add_argument("--threads", type=int, default=1, help="math threads of each (default 1)")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    batches = decisions(a.decisions, seed=0, tables=a.tables)
    singles = [d.take(np.array([i])) for d in batches for i in range(len(d))][: max(256, a.decisions // 8)]
    n = sum(len(d) for d in batches)
    print(f"{n:,} decisions of {a.tables} random hands (every phase), {a.threads} thread(s), "
          f"torch {torch.__version__}, onnxruntime {__import__('onnxruntime').__version__}")
    print(f"{'agent':<40} {'way':<18} {'torch dec/s':>12} {'onnx dec/s':>12} {'onnx/torch':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in a.agents.split(","):
            agent = load(spec)
            path = os.path.join(tmp, "agent.onnx")
            export_onnx(agent, path, check=0)
            onnx_agent = OnnxAgent.from_file(path, threads=a.threads)
            pair = {"torch": agent, "onnx": onnx_agent}
            for way, data in ((f"batches of {a.tables}", batches), ("one at a time", singles)):
                r = rate(pair, data, a.seconds)
                print(f"{spec:<40} {way:<18} {r['torch']:>12,.0f} {r['onnx']:>12,.0f} {r['onnx'] / r['torch']:>9.2f}x",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
