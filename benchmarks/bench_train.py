"""Training throughput of the DMC trainer: frames (decisions) per second, learner + actors.

    python benchmarks/bench_train.py [--duration 60] [--configs default douzero] [--set key=value ...]
    .venv-rllib/bin/python benchmarks/bench_train.py --configs default default:backend=ray   # Ray vs shared memory

Each config trains for ``--duration`` seconds in a temporary run folder (``max_seconds``);
the rate is taken between the first and the last CSV log line, so process start-up and
the first batches do not count. The CPU-time columns estimate the rate on 2 dedicated cores
when other jobs share the machine. DouZero's own trainer does about 650 frames/s on this
2-core machine (2 CPU actors plus a CPU learner) with its network (LSTM 128 over the
history + a 6 x 512 MLP); the ``douzero`` config is that network size. ``x first`` is each
rate over the first config's, measured in the same run (e.g. the Ray backend against the
shared-memory one). Ray's actor processes are not this process's children: their CPU time is
not counted (the CPU columns show "-").
"""
from __future__ import annotations

import argparse
import csv
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOUZERO_FPS = 650.0


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(spec: str, duration: float, overrides: list[str]) -> dict:
    """``spec``: a config name, optionally with overrides: ``douzero:precision=bf16,num_envs=256``."""
    name, _, extra = spec.partition(":")
    overrides = overrides + [x for x in extra.split(",") if x]
    from agents.dmc.config import load_config
    from agents.dmc.trainer import make_model, train

    cfg = load_config(name,
                      [f"max_seconds={duration}", "log_every_frames=0", f"log_every={max(duration / 8, 1.0)}",
                       "total_frames=10000000000", "checkpoint_every=10000000000"] + overrides)
    params = sum(p.numel() for p in make_model(cfg).parameters())
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        cpu0 = _cpu_seconds()
        train(cfg, Path(tmp) / "run", progress=False)
        wall = time.perf_counter() - t0
        cpu = _cpu_seconds() - cpu0  # learner + its (joined) actor processes
        rows = list(csv.DictReader(open(Path(tmp) / "run" / "log.csv")))
    first, last = rows[0], rows[-1]
    dt = float(last["time_s"]) - float(first["time_s"])
    fps = (int(last["frames"]) - int(first["frames"])) / dt if dt > 0 else float("nan")
    frames_per_cpu_s = int(last["frames"]) / cpu if cpu > 0 else float("nan")
    if cfg.backend == "ray":
        cpu = frames_per_cpu_s = float("nan")
    return {"cpu_s": cpu, "per_cpu_s": frames_per_cpu_s, "config": spec, "actors": cfg.num_actors, "envs": cfg.num_envs, "batch": cfg.batch_size,
            "params": params, "frames": int(last["frames"]), "wall_s": wall, "fps": fps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of training per config")
    ap.add_argument("--configs", nargs="+", default=["default", "douzero", "douzero:precision=bf16"])
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}  duration: {args.duration:.0f} s per config  DouZero reference: "
          f"{DOUZERO_FPS:.0f} frames/s")
    results = [measure(name, args.duration, args.overrides) for name in args.configs]
    print(f"\n{'config':<34} {'actors':>6} {'envs':>5} {'batch':>6} {'params':>10} {'frames':>10} "
          f"{'frames/s':>9} {'x first':>7} {'x DouZero':>9} {'cpu_s':>6} {'fr/cpu-s':>8} {'2 x fr/cpu-s':>12}")

    def num(x: float, width: int) -> str:
        return f"{x:>{width}.0f}" if x == x else f"{'-':>{width}}"

    for r in results:
        print(f"{r['config']:<34} {r['actors']:>6} {r['envs']:>5} {r['batch']:>6} {r['params']:>10,} "
              f"{r['frames']:>10,} {r['fps']:>9.0f} {r['fps'] / results[0]['fps']:>7.2f} {r['fps'] / DOUZERO_FPS:>9.1f} "
              f"{num(r['cpu_s'], 6)} {num(r['per_cpu_s'], 8)} {num(2 * r['per_cpu_s'], 12)}")
    print("\nframes/s: wall-clock rate between the first and last log lines (shares the cores with whatever else "
          "runs);\nfr/cpu-s: all frames per CPU second of the learner and its actors (start-up included); "
          "2 x fr/cpu-s estimates\nthe rate on 2 dedicated cores.")


if __name__ == "__main__":
    main()
