"""Training throughput of the DMC trainer: frames (decisions) per second, learner + actors.

    python benchmarks/bench_train.py [--duration 60] [--configs default douzero] [--set key=value ...]
    .venv-rllib/bin/python benchmarks/bench_train.py --configs default default:backend=ray   # Ray vs shared memory

Each config trains for ``--duration`` seconds in a temporary run folder (``max_seconds``);
the rate is taken between the first and the last CSV log line, so process start-up and
the first batches do not count. The CPU-time columns estimate the rate on 2 dedicated cores
when other jobs share the machine. ``x first`` is each rate over the first config's, measured
in the same run (e.g. the Ray backend against the shared-memory one). Ray's actor processes
are not this process's children: their CPU time is not counted (the CPU columns show "-").

The spec ``douzero-trainer`` times DouZero's own trainer (the ``douzero`` package, in the
``bench`` extra) in the same run: 2 CPU actors and a CPU learner with one thread, its
network (LSTM 128 over the history + a 6 x 512 MLP; the ``douzero`` config is that size);
its rate is taken between the first and last of its 5-second log lines that count frames
(it runs at least 150 s: its first frames come after about a minute). ``x DouZero`` is
each rate over that row's, when the run has one; a spec ``WORKTREE/config`` (a folder that
holds a checkout of this project) trains that checkout's code instead: before and after in
one run, e.g. ``--configs /tmp/base/default default``.

    python benchmarks/bench_train.py --duration 60 --configs douzero-trainer default douzero
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

DOUZERO = "douzero-trainer"


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure_douzero(duration: float) -> dict:
    """DouZero's own trainer for ``duration`` seconds: frames/s between its first and last log lines."""
    import re
    import signal
    import subprocess
    import threading

    code = ("import sys; from douzero.dmc import parser, train; train(parser.parse_args(sys.argv[1:]))")
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--actor_device_cpu", "--training_device", "cpu", "--num_actors", "2", "--num_threads", "1",
                "--disable_checkpoint", "--savedir", tmp, "--xpid", "bench"]
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, env=env, cwd=tmp, start_new_session=True)
        points: list[tuple[float, int]] = []

        def read() -> None:
            for line in p.stderr:
                m = re.search(r"After (\d+) \(L", line)
                if m:
                    points.append((time.perf_counter(), int(m.group(1))))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            p.wait(timeout=duration)
        except subprocess.TimeoutExpired:
            pass
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # its actors are its children: end the whole group
            except ProcessLookupError:
                pass
            p.wait()
        reader.join(timeout=5)
        wall = time.perf_counter() - t0
    moving = [(t, f) for t, f in points if f > 0]  # from the first frames the learner took
    if len(moving) < 2:
        from agents._entry import install_extra

        raise RuntimeError(f"DouZero's trainer (exit code {p.returncode}) logged {len(moving)} progress lines with "
                           f"frames in {duration:.0f} s (the douzero package and GitPython, which it imports: "
                           f"{install_extra('bench')}; a longer --duration)")
    (ta, fa), (tb, fb) = moving[0], moving[-1]
    # (its actors are killed, not joined: RUSAGE_CHILDREN does not hold their CPU time)
    return {"cpu_s": float("nan"), "per_cpu_s": float("nan"), "config": DOUZERO, "actors": 2, "envs": 1,
            "batch": 3200, "params": float("nan"), "frames": fb, "wall_s": wall, "fps": (fb - fa) / (tb - ta)}


def measure(spec: str, duration: float, overrides: list[str]) -> dict:
    """``spec``: a config name, optionally with overrides: ``douzero:precision=bf16,num_envs=256``; or
    ``WORKTREE/spec``: the same, trained by the checkout in folder WORKTREE (in a child process)."""
    if spec == DOUZERO:  # its first frames come after about a minute (32 x 100-step batches per position)
        return measure_douzero(max(duration, 150.0))
    tree, sep, rest = spec.rpartition("/")
    if sep and Path(tree, "agents", "dmc").is_dir():
        import json
        import subprocess

        code = ("import json, sys; sys.path.insert(0, sys.argv[2]); import bench_train as b; "
                "sys.path.insert(0, sys.argv[1]); import agents; assert agents.__file__.startswith(sys.argv[1]); "
                "r = b.measure(sys.argv[3], float(sys.argv[4]), json.loads(sys.argv[5])); "
                "print('RESULT ' + json.dumps(r))")
        env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
        out = subprocess.run([sys.executable, "-c", code, str(Path(tree).resolve()), str(Path(__file__).parent), rest,
                              str(duration), json.dumps(overrides)], capture_output=True, text=True, env=env)
        lines = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
        if out.returncode or not lines:
            raise RuntimeError(f"{spec}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
        r = json.loads(lines[-1][7:])
        r["config"] = spec
        return r
    name, _, extra = spec.partition(":")
    overrides = overrides + [x for x in extra.split(",") if x]
    from agents.dmc.config import load_config
    from agents.dmc.learner.trainer import make_model, train

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
    from agents._entry import plain  # (here: a worker process imports this module, then a worktree's agents)

    ap = argparse.ArgumentParser(description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of training per config")
    ap.add_argument("--configs", nargs="+", default=[DOUZERO, "default", "douzero"],
                    help=f"configs to time, in order ({DOUZERO!r}: DouZero's own trainer; WORKTREE/NAME: another "
                         f"checkout's code)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}  duration: {args.duration:.0f} s per config  load average before: {load:.2f}")
    results = []
    for name in args.configs:
        results.append(measure(name, args.duration, args.overrides))
        print(f"  {name}: {results[-1]['fps']:.0f} frames/s (load average {os.getloadavg()[0]:.2f})", flush=True)
    dz = next((r["fps"] for r in results if r["config"] == DOUZERO), float("nan"))
    print(f"\n{'config':<34} {'actors':>6} {'envs':>5} {'batch':>6} {'params':>10} {'frames':>10} "
          f"{'frames/s':>9} {'x first':>7} {'x DouZero':>9} {'cpu_s':>6} {'fr/cpu-s':>8} {'2 x fr/cpu-s':>12}")

    def num(x: float, width: int) -> str:
        return f"{x:>{width}.0f}" if x == x else f"{'-':>{width}}"

    for r in results:
        params = f"{r['params']:>10,}" if r["params"] == r["params"] else f"{'-':>10}"
        xdz = f"{r['fps'] / dz:>9.1f}" if dz == dz else f"{'-':>9}"
        print(f"{r['config']:<34} {r['actors']:>6} {r['envs']:>5} {r['batch']:>6} {params} "
              f"{r['frames']:>10,} {r['fps']:>9.0f} {r['fps'] / results[0]['fps']:>7.2f} {xdz} "
              f"{num(r['cpu_s'], 6)} {num(r['per_cpu_s'], 8)} {num(2 * r['per_cpu_s'], 12)}")
    print("\nframes/s: wall-clock rate between the first and last log lines (shares the cores with whatever else "
          "runs);\nfr/cpu-s: all frames per CPU second of the learner and its actors (start-up included); "
          "2 x fr/cpu-s estimates\nthe rate on 2 dedicated cores.")


if __name__ == "__main__":
    main()
