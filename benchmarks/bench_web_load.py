"""The web server under load: latency of a realistic mix of the page's requests over concurrent connections.

    python benchmarks/bench_web_load.py [--requests 2000] [--connections 20] [--seed 0] [--source DIR]
                                        [--weights 5,3,2] [--json OUT.json]

Starts ``python -m agents.play.web`` as a subprocess on a free port (``--source DIR``: the checkout whose
server is run, e.g. an older one exported with ``git archive``, to compare in the same run; default this
one), keeping hands in a temporary ``--save-dir``, then sends ``--requests`` requests over ``--connections``
keep-alive connections (one thread each, ``http.client``), each connection running sessions of the page one
after another, closed loop (the next request as soon as the answer is in), drawn with ``--weights``
(play, watch, replays; ``5,0,2``: no watched hands, to see what they cost the others):

* **play** (half the sessions): ``GET /api/agents`` (the page loads), ``POST /api/games`` (against ``rule``
  or ``random``), the person's moves (``POST .../action``, a random legal action; each answer carries the
  agents' replies, which the page plays back at its pace) until the hand is over, then half the time
  ``GET .../replay`` (Replay this hand);
* **watch** (three in ten): ``GET /api/agents``, ``POST /api/watch`` (three agents of ``rule`` and ``random``),
  then, where the server answers with a watched hand's id, ``GET /api/watch/{id}`` every 0.1 s (the page's
  wait between reads, not timed) until the hand is over;
* **replays** (two in ten): ``GET /api/replays``, a kept hand (``GET /api/kept/{name}``), then the same record
  posted back (``POST /api/replay``, a file opened on the page).

Prints the number of requests, errors (any status but 200 and 202) and p50 / p95 / p99 latency in ms, overall
and by kind, and the server's threads at the end (``/proc``); apart, as *(hand ready)*, the time from a watch
request to the watched hand read whole (the waits between reads included; not a request, so not in *all*). The figures depend on the machine and on what
else runs on it: compare checkouts in one run, on one machine (``--source`` twice, or one after another).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("agents", "new game", "move", "replay", "watch", "watch read", "replays list", "kept hand", "post replay")
POLL_S = 0.1  # the wait between two reads of a watched hand (the page's; not timed)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(source: Path, save_dir: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(source), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "agents.play.web", "--port", str(port), "--save-dir", save_dir],
                            cwd=str(source), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server did not start: {proc.stderr.read().strip()}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/api/agents")
            if c.getresponse().status == 200:
                c.close()
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not answer in 120 s")


class Client:
    """One connection: its requests' (kind, seconds, status), until the shared budget of requests is spent."""

    def __init__(self, port: int, budget: "Budget", rng: random.Random, weights=(5, 3, 2)):
        self.port, self.budget, self.rng, self.weights = port, budget, rng, weights
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.times: list[tuple[str, float, int]] = []
        self.ready: list[float] = []  # seconds from a watch request to its hand read whole (polls' waits included)

    def call(self, kind: str, method: str, path: str, body=None):
        if not self.budget.take():
            raise StopIteration
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        t0 = time.perf_counter()
        try:
            self.conn.request(method, path, body=data, headers=headers)
            r = self.conn.getresponse()
            raw = r.read()
        except (OSError, http.client.HTTPException):
            self.times.append((kind, time.perf_counter() - t0, 0))
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            return 0, {}
        self.times.append((kind, time.perf_counter() - t0, r.status))
        try:
            return r.status, json.loads(raw)
        except ValueError:
            return r.status, {}

    def play(self) -> None:
        self.call("agents", "GET", "/api/agents")
        vs = [self.rng.choice(("rule", "random")) for _ in range(2)]
        st, r = self.call("new game", "POST", "/api/games", {"seat": self.rng.randrange(3), "vs": vs,
                                                              "seed": self.rng.randrange(1000), "deal": 0})
        if st != 200:
            return
        gid = r["id"]
        while not r["view"]["over"]:
            st, r2 = self.call("move", "POST", f"/api/games/{gid}/action",
                               {"action": self.rng.choice(r["view"]["legal"]), "version": r["version"]})
            if st != 200:
                return
            r = r2
        if self.rng.random() < 0.5:
            self.call("replay", "GET", f"/api/games/{gid}/replay")

    def watch(self) -> None:
        self.call("agents", "GET", "/api/agents")
        players = [self.rng.choice(("rule", "random")) for _ in range(3)]
        t0 = time.perf_counter()
        st, r = self.call("watch", "POST", "/api/watch", {"players": players, "seed": self.rng.randrange(1000),
                                                          "deal": self.rng.randrange(5)})
        if st in (200, 202) and "positions" in r:  # (a server that plays the hand in the request)
            self.ready.append(time.perf_counter() - t0)
        if st not in (200, 202) or "positions" in r:
            return
        while not r.get("done"):
            time.sleep(POLL_S)
            st, r = self.call("watch read", "GET", f"/api/watch/{r['id']}")
            if st != 200:
                return
        self.ready.append(time.perf_counter() - t0)

    def replays(self) -> None:
        st, r = self.call("replays list", "GET", "/api/replays")
        kept = r.get("kept") or []
        if st != 200 or not kept:
            return
        st, r = self.call("kept hand", "GET", f"/api/kept/{self.rng.choice(kept[:20])}")
        if st == 200:
            self.call("post replay", "POST", "/api/replay", r["record"])

    def run(self) -> None:
        sessions = (self.play, self.watch, self.replays)
        try:
            while True:
                self.rng.choices(sessions, weights=self.weights)[0]()
        except StopIteration:
            pass
        finally:
            self.conn.close()


class Budget:
    def __init__(self, n: int):
        self.left, self.lock = n, threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))] * 1000


def threads_of(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--connections", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--source", default=str(ROOT), help="the checkout whose server is run (default: this one)")
    ap.add_argument("--weights", default="5,3,2", help="how often each kind of session runs: play, watch, replays")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    a = ap.parse_args(argv)
    source = Path(a.source).resolve()
    weights = tuple(float(w) for w in a.weights.split(","))
    if len(weights) != 3 or min(weights) < 0 or not sum(weights):
        ap.error("--weights takes 3 numbers, not all 0: play, watch, replays")
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        proc, port = start_server(source, os.path.join(tmp, "hands"))
        try:
            # a few hands kept first, so that the replays sessions have something to open
            warm = Client(port, Budget(200), random.Random(-1))
            for _ in range(3):
                warm.play()
            warm.conn.close()
            budget = Budget(a.requests)
            clients = [Client(port, budget, random.Random(a.seed * 1000 + i), weights) for i in range(a.connections)]
            threads = [threading.Thread(target=c.run) for c in clients]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            server_threads = threads_of(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    times = [x for c in clients for x in c.times]
    out = {"source": str(source), "weights": weights, "requests": len(times), "connections": a.connections,
           "wall_s": round(wall, 2),
           "per_s": round(len(times) / wall, 1), "server_threads": server_threads,
           "errors": sum(1 for _, _, st in times if st not in (200, 202)), "kinds": {}}
    rows = [("all", [t for _, t, _ in times])] + [(k, [t for kind, t, _ in times if kind == k]) for k in KINDS]
    print(f"{out['source']} (sessions play:watch:replays {a.weights}): {out['requests']} requests over "
          f"{a.connections} connections in {wall:.1f} s "
          f"({out['per_s']}/s), {out['errors']} errors, server threads at the end: {server_threads}")
    print(f"{'kind':<14}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for kind, ts in rows:
        if not ts:
            continue
        fig = {"n": len(ts), "p50": round(pct(ts, 50), 1), "p95": round(pct(ts, 95), 1),
               "p99": round(pct(ts, 99), 1), "max": round(max(ts) * 1000, 1)}
        out["kinds"][kind] = fig
        print(f"{kind:<14}{fig['n']:>6}{fig['p50']:>9}{fig['p95']:>9}{fig['p99']:>9}{fig['max']:>9}")
    ready = [t for c in clients for t in c.ready]
    if ready:  # not a request: from a watch request to its hand read whole, the waits between reads included
        out["hand ready"] = {"n": len(ready), "p50": round(pct(ready, 50), 1), "p95": round(pct(ready, 95), 1),
                             "p99": round(pct(ready, 99), 1), "max": round(max(ready) * 1000, 1)}
        fig = out["hand ready"]
        print(f"{'(hand ready)':<14}{fig['n']:>6}{fig['p50']:>9}{fig['p95']:>9}{fig['p99']:>9}{fig['max']:>9}"
              f"   from POST /api/watch to the hand read whole, {POLL_S:g} s between reads")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
