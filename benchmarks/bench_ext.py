"""Decisions a second through the outside seat's protocol (ext:): the message built from the planes, written
as a JSON line to examples/ext_client.py, its reply read back and checked.

    python benchmarks/bench_ext.py [--decisions 4000] [--repeat 3] [--no-text] [--http]

The decisions are those of real hands (the rule agent plays them out on 64 tables; every phase, every seat),
asked in batches as the evaluation asks them; the figure is decisions a second end to end, and beside it the
share of the time spent building the messages (``agents.external.message.messages``) in this process.
``--no-text`` leaves the view in words out (``?text=no``); ``--http`` asks examples/ext_server.py over HTTP
instead, a server started in this process's thread.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
import threading
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from agents import load  # noqa: E402
from agents.base import Decisions  # noqa: E402
from agents.external.message import messages  # noqa: E402
from ddz_env.vector import VectorDouDizhu  # noqa: E402


def batches(n: int, tables: int = 64, seed: int = 0) -> list[Decisions]:
    """Batches of real decisions, ``n`` in all: the rule agent plays hands on ``tables`` tables."""
    vec, rule, out, total = VectorDouDizhu(tables, seed=seed), load("rule"), [], 0
    while total < n:
        d = Decisions.of_env(vec)
        out.append(d)
        total += len(d)
        vec.step(rule.act_batch(d))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decisions", type=int, default=4000)
    p.add_argument("--repeat", type=int, default=3, help="timed runs over the same decisions (the median is reported)")
    p.add_argument("--no-text", action="store_true", help="messages without the view in words (?text=no)")
    p.add_argument("--http", action="store_true", help="over HTTP to examples/ext_server.py")
    a = p.parse_args(argv)
    work = batches(a.decisions)
    n = sum(len(d) for d in work)
    query = "?text=no" if a.no_text else ""
    server = None
    if a.http:
        sys.path.insert(0, os.path.join(ROOT, "examples"))
        from ext_server import make_server

        server = make_server(0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        spec = f"http://127.0.0.1:{server.server_address[1]}/{query}"
    else:
        client = os.path.join(ROOT, "examples", "ext_client.py")
        spec = f"ext:{shlex.quote(sys.executable)} {shlex.quote(client)}{query}"
    for d in work:  # (once untimed: the card strings a hand repeats are remembered)
        messages(d, np.zeros(len(d), np.int64), not a.no_text)
    t0 = time.perf_counter()
    for d in work:
        messages(d, np.zeros(len(d), np.int64), not a.no_text)
    build = time.perf_counter() - t0
    times = []
    with load(spec) as agent:
        agent.act_batch(work[0])  # (the program starts: not timed)
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            for d in work:
                agent.act_batch(d)
            times.append(time.perf_counter() - t0)
    if server is not None:
        server.shutdown()
    took = float(np.median(times))
    print(f"{spec}: {n:,} decisions, median of {a.repeat} runs {took:.2f} s = {n / took:,.0f} decisions/s "
          f"({1e6 * took / n:.0f} us each; building the messages {1e6 * build / n:.0f} us of it); best run "
          f"{n / min(times):,.0f} decisions/s")


if __name__ == "__main__":
    main()
