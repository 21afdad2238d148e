"""Same compute against DouZero: its trainer and ours train for the same wall time here, then play.

    python benchmarks/bench_vs_douzero.py                         # 60 minutes each, 1,000 deals (about 3.5 h)
    python benchmarks/bench_vs_douzero.py --minutes 1 --deals 50  # the whole pipeline in a few minutes
    python benchmarks/bench_vs_douzero.py --resume                # after a stop: the finished stages are kept

In one run, on this machine:

1. DouZero's own trainer (the ``douzero`` package, CPU: ``--actor_device_cpu --training_device
   cpu``, ``--douzero-actors`` actor processes, its defaults otherwise, objective ``--objective``,
   WP by default as our ``douzero`` config's targets; ``--douzero-threads`` torch threads per
   process, 1 as our trainer's ``torch_threads``) trains for ``--minutes``. It has no time limit
   of its own: a driver process runs DouZero's ``train`` unchanged, counting its updates (a
   wrapper around its ``learn``) and, at the time, lets the updates in flight finish, allows no
   more, saves its learner's three networks as DouZero's checkpoint does, and ends the process
   with its actors. Its frames: updates x ``T x B`` (3,200), DouZero's own count. The driver
   runs in a temporary folder (DouZero writes its metadata, environment included, into its run
   folder); only the three weight files are kept.
2. Ours trains for the same wall time, twice: ``--config douzero`` (DouZero's network and
   settings) and ``--config default --set rules=douzero`` (our default, on DouZero's game),
   with in-training evaluation off (``eval_every=0``) so that both sides spend the time on
   training. Kept checkpoints (``keep_checkpoints``) give ours at DouZero's frame count too
   (equal frames: the first checkpoint at or past it; a run that had not reached it in the time
   trains on to it). Frames are samples learned, on both sides (DouZero's ``T x B`` per update,
   ours ``batch_size``).
3. Each of ours (equal time, equal frames) plays DouZero's final weights (``douzero:DIR``) in
   DouZero's protocol: a fixed landlord at bid 1, no doubling, every deal both ways
   (``evaluate.py --mode fixed-landlord``), ``--deals`` seeded deals (default 1,000). WP: the
   share of hands won, per deal the mean of the two seatings; ADP: the mean score per hand
   (R19 at bid 1: doubled per bomb and rocket, and for spring), likewise; both with 95%
   intervals over deals (normal approximation). Positive is ours ahead.

Writes ``--out-dir`` (default ``runs/bench_vs_douzero``): ``douzero/`` (DouZero's final weights,
a ``douzero:`` folder), ``ours_douzero/`` and ``ours_default/`` (our run folders) and
``results.json``; prints the table. Each finished stage (a training run, a match) is written to
``stages.json`` at once; ``--resume`` keeps those of the same ``--minutes``, ``--deals`` and ``--seed``
and redoes only the rest (an interrupted stage starts over). Every training stage records the CPU
seconds its processes used and the load average around it, so that "the same wall time" can be
checked for the same compute on a shared machine. Needs the ``douzero`` extra (``pip install 'ddz-env[douzero]'``:
DouZero, RLCard, GitPython) and the ``train`` extra.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import resource
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POSITIONS = ("landlord", "landlord_up", "landlord_down")
OURS = (("ours_douzero", "douzero", []), ("ours_default", "default", ["rules=douzero"]))


# ------------------------------------------------------------------------------------------ accounting
def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and of its reaped children so far."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _metered(fn, *args) -> dict:
    """``fn(*args)`` (a dict), with the CPU seconds it used and the 1-minute load average before and after added."""
    load0, cpu0 = os.getloadavg()[0], _cpu_s()
    out = fn(*args)
    out.update(cpu_s=round(_cpu_s() - cpu0, 1), load_before=round(load0, 2), load_after=round(os.getloadavg()[0], 2))
    return out


# ------------------------------------------------------------------------------------------ DouZero's trainer
def _driver(params: dict) -> None:
    """Inside the subprocess: DouZero's ``train`` on CPU; at ``params["seconds"]`` its learner's weights are saved
    (after the updates in flight, none after) and the process ends with its actors."""
    import multiprocessing
    import threading

    os.environ["OMP_NUM_THREADS"] = str(params["threads"])  # (before torch: the spawned actors inherit it)
    import torch

    torch.set_num_threads(params["threads"])
    import douzero.dmc.dmc as dmc
    from douzero.dmc import parser

    flags = parser.parse_args(["--actor_device_cpu", "--training_device", "cpu", "--num_actors",
                               str(params["actors"]), "--objective", params["objective"], "--savedir",
                               params["savedir"], "--xpid", "douzero", "--disable_checkpoint"])
    out = Path(params["out"])
    learner: dict = {}
    state = {"updates": 0, "active": 0, "stopped": False}
    cond = threading.Condition()
    create_optimizers, learn = dmc.create_optimizers, dmc.learn

    def capture_learner(flags_, learner_model):  # train() builds its optimizers from the learner's model
        learner["model"] = learner_model
        return create_optimizers(flags_, learner_model)

    def counted_learn(*args, **kwargs):  # one update of one position's network; none once stopped
        with cond:
            if state["stopped"]:
                return {}
            state["active"] += 1
        try:
            return learn(*args, **kwargs)
        finally:
            with cond:
                state["active"] -= 1
                state["updates"] += 1
                cond.notify_all()

    dmc.create_optimizers, dmc.learn = capture_learner, counted_learn
    t0 = time.perf_counter()

    def stop() -> None:
        with cond:
            state["stopped"] = True
            while state["active"]:
                cond.wait()
        wall = time.perf_counter() - t0
        model = learner["model"]
        out.mkdir(parents=True, exist_ok=True)
        for pos in POSITIONS:  # what DouZero's checkpoint() writes as <position>_weights_<frames>.ckpt
            torch.save(model.get_model(pos).state_dict(), out / f"{pos}.ckpt")
        frames = state["updates"] * flags.unroll_length * flags.batch_size  # DouZero's frame count
        (out / "trained.json").write_text(json.dumps({"frames": frames, "updates": state["updates"], "wall_s": wall}))
        for p in multiprocessing.active_children():
            p.terminate()
        for p in multiprocessing.active_children():  # reaped, so that their CPU time reaches the benchmark
            p.join(timeout=30)
        os._exit(0)

    threading.Timer(params["seconds"], stop).start()
    dmc.train(flags)  # (it never returns by itself: stop() ends the process)


def train_douzero(seconds: float, out: Path, actors: int, objective: str, threads: int) -> dict:
    """DouZero's trainer for ``seconds``; its learner's weights at the time saved in ``out`` (a ``douzero:`` folder)."""
    try:
        import douzero  # noqa: F401
        import git  # noqa: F401  (DouZero's trainer imports GitPython)
    except ImportError as e:
        from agents._entry import install_extra

        raise SystemExit(f"bench_vs_douzero: DouZero's trainer needs the douzero extra: {install_extra('douzero')} "
                         f"(douzero, rlcard, gitpython) ({e})") from None
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory(prefix="douzero-") as tmp:
        params = {"seconds": seconds, "actors": actors, "objective": objective, "threads": threads,
                  "savedir": os.path.join(tmp, "runs"), "out": str(out.resolve())}
        cmd = [sys.executable, os.path.abspath(__file__), "--douzero-driver", json.dumps(params)]
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)  # (cwd outside any git repository: DouZero asks git)
        try:
            log, _ = p.communicate(timeout=seconds + 600)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            raise SystemExit("bench_vs_douzero: DouZero's trainer did not stop within 10 minutes of its time") from None
        wall = time.perf_counter() - t0
    done = out / "trained.json"
    if p.returncode != 0 or not done.is_file():
        raise SystemExit(f"bench_vs_douzero: DouZero's trainer failed (exit {p.returncode}):\n{log[-3000:]}")
    info = json.loads(done.read_text())
    return {"frames": info["frames"], "updates": info["updates"], "train_s": round(info["wall_s"], 1),
            "process_s": round(wall, 1), "fps": round(info["frames"] / info["wall_s"], 1), "actors": actors,
            "threads": threads, "objective": objective, "folder": str(out)}


# ------------------------------------------------------------------------------------------ ours
def _frames(path: Path) -> int:
    import torch

    return int(torch.load(path, map_location="cpu", weights_only=True)["frames"])


def train_ours(config: str, overrides: list[str], seconds: float, target: int, run_dir: Path) -> dict:
    """Our trainer for ``seconds`` (checkpoints kept at every ``target`` frames); then the equal-frames one."""
    from agents.dmc.config import load_config, resume_config
    from agents.dmc.learner.trainer import load_checkpoint, train

    if run_dir.exists():
        shutil.rmtree(run_dir)
    every = target if target > 0 else 10 ** 15  # (DouZero made no update: no equal-frames checkpoint)
    cfg = load_config(config, overrides + [f"max_seconds={seconds}", "total_frames=1000000000000",
                                           "keep_checkpoints=true", f"checkpoint_every={every}",
                                           "eval_every=0", "log_every_frames=0", f"log_every={max(seconds / 10, 5)}"])
    t0 = time.perf_counter()
    train(cfg, run_dir, progress=False)
    wall = time.perf_counter() - t0
    final = run_dir / "checkpoint.pt"
    frames = _frames(final)
    time_ckpt = run_dir / f"checkpoint_{frames:012d}.pt"
    extra_s = 0.0
    if frames < target:  # slower than DouZero: train on to its frame count
        ck = load_checkpoint(final)
        cfg2 = resume_config(ck["config"], [f"total_frames={target}", "max_seconds=0"],
                             has_tables=ck.get("collector") is not None)
        t1 = time.perf_counter()
        train(cfg2, run_dir, resume=ck, progress=False)
        extra_s = time.perf_counter() - t1
    kept = sorted((_frames(Path(p)), Path(p)) for p in glob.glob(str(run_dir / "checkpoint_*.pt")))
    equal = next(p for f, p in kept if f >= target) if target > 0 else time_ckpt
    for _f, p in kept:  # only the two that play are kept
        if p not in (equal, time_ckpt):
            p.unlink()
    return {"config": config, "overrides": overrides, "batch_size": cfg.batch_size, "train_s": round(wall, 1),
            "frames": frames, "fps": round(frames / wall, 1), "time_checkpoint": str(time_ckpt),
            "equal_frames": _frames(equal), "equal_checkpoint": str(equal), "extra_s_to_equal_frames": round(extra_s, 1)}


# ------------------------------------------------------------------------------------------ head to head
def head_to_head(a: str, b: str, deals: int, seed: int, workers: int) -> dict:
    """``a`` against ``b`` in DouZero's protocol: WP and ADP of ``a`` with 95% intervals over deals."""
    import numpy as np

    from agents.evaluation.arena import COL
    from agents.evaluation.protocols import run_records
    from agents.evaluation.stats import mean_ci, summarize_fixed

    t0 = time.perf_counter()
    records = run_records(a, b, deals, seed, "fixed-landlord", workers)
    lord_won = records[:, COL["winner"]] == records[:, COL["landlord"]]
    a_won = np.where(records[:, COL["seating"]] == 0, lord_won, ~lord_won)  # seating 0: a is landlord
    wp = mean_ci(a_won.reshape(-1, 2).mean(axis=1))
    res = summarize_fixed(records)
    return {"a": a, "b": b, "deals": deals, "seed": seed, "WP": wp["mean"], "WP_ci95": wp["ci95"],
            "ADP": res["A"]["mean_score"], "ADP_ci95": res["A"]["score_ci95"],
            "WP_landlord": res["A"]["landlord"]["WP"], "WP_farmer": res["A"]["farmer"]["WP"],
            "seconds": round(time.perf_counter() - t0, 1)}


def table(results: dict) -> str:
    dz = results["douzero"]
    lines = [f"same compute: {results['minutes']:g} min of training each on {os.cpu_count()} cores; DouZero "
             f"{dz['frames']:,} frames ({dz['fps']:,.0f} frames/s, {dz['actors']} actors, {dz['threads']} thread(s) each, "
             f"objective {dz['objective']}; {dz['cpu_s']:,.0f} CPU-s)",
             f"ours (A) vs DouZero (B), fixed landlord, {results['deals']:,} deals both ways (seed {results['seed']})",
             f"{'ours':<38}{'frames':>12}  {'WP [95% CI]':<24}{'ADP [95% CI]':<26}"]
    for row in results["rows"]:
        h = row["match"]
        wp = f"{h['WP']:.3f} [{h['WP_ci95'][0]:.3f}, {h['WP_ci95'][1]:.3f}]"
        adp = f"{h['ADP']:+.3f} [{h['ADP_ci95'][0]:+.3f}, {h['ADP_ci95'][1]:+.3f}]"
        lines.append(f"{row['label']:<38}{row['frames']:>12,}  {wp:<24}{adp:<26}")
    for name, _, _ in OURS:
        run = results[name]
        lines.append(f"{name}: {run['frames']:,} frames in {run['train_s']:,.0f} s ({run['fps']:,.0f} frames/s, "
                     f"{run['cpu_s']:,.0f} CPU-s, load {run['load_before']:.1f} -> {run['load_after']:.1f})")
    lines.append(f"douzero: load {dz['load_before']:.1f} -> {dz['load_after']:.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from agents._entry import plain

    ap = argparse.ArgumentParser(description=plain(__doc__.splitlines()[0]), epilog=plain(__doc__),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=60.0, help="wall time of each training run (default 60)")
    ap.add_argument("--deals", type=int, default=1000, help="deals of each match, each played both ways (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    ap.add_argument("--workers", type=int, default=1, help="evaluation processes (default 1)")
    ap.add_argument("--douzero-actors", type=int, default=2, help="DouZero's actor processes (default 2)")
    ap.add_argument("--douzero-threads", type=int, default=1,
                    help="torch threads of each DouZero process (default 1, as our torch_threads)")
    ap.add_argument("--objective", choices=("wp", "adp", "logadp"), default="wp",
                    help="DouZero's objective (default wp, as our douzero config's win/loss targets)")
    ap.add_argument("--out-dir", default=str(ROOT / "runs" / "bench_vs_douzero"), help="where everything is written")
    ap.add_argument("--resume", action="store_true",
                    help="keep the stages finished in --out-dir (stages.json) by a run with the same --minutes, "
                         "--deals and --seed; do the rest")
    ap.add_argument("--douzero-driver", help=argparse.SUPPRESS)  # (internal: the trainer's subprocess)
    args = ap.parse_args(argv)
    if args.douzero_driver:
        _driver(json.loads(args.douzero_driver))
        return 0
    if args.minutes <= 0 or min(args.deals, args.workers, args.douzero_actors, args.douzero_threads) < 1:
        ap.error("--minutes must be > 0; --deals, --workers, --douzero-actors and --douzero-threads >= 1")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seconds = args.minutes * 60
    key = {"minutes": args.minutes, "deals": args.deals, "seed": args.seed}
    stages_file = out / "stages.json"
    stages: dict = {}
    if args.resume and stages_file.is_file():
        saved = json.loads(stages_file.read_text())
        if saved.get("key") == key:
            stages = saved["stages"]
            print(f"resuming: {', '.join(stages) or 'no stage'} done ({stages_file})", flush=True)
        else:
            print(f"not resuming: {stages_file} is of {saved.get('key')}, this run {key}", flush=True)

    def stage(name: str, fn, *args_) -> dict:
        if name in stages:
            return stages[name]
        stages[name] = fn(*args_)
        stages_file.write_text(json.dumps({"key": key, "stages": stages}, indent=1))
        return stages[name]

    results: dict = {**key, "command": " ".join(sys.argv)}
    print(f"[1/3] DouZero's trainer, {args.minutes:g} min ...", flush=True)
    dz = results["douzero"] = stage("douzero", _metered, train_douzero, seconds, out / "douzero",
                                    args.douzero_actors, args.objective, args.douzero_threads)
    print(f"      {dz['frames']:,} frames in {dz['train_s']:.0f} s, {dz['cpu_s']:,.0f} CPU-s", flush=True)
    rows = []
    for _k, (name, config, overrides) in enumerate(OURS):
        print(f"[2/3] ours, {' '.join(['--config', config] + ['--set ' + o for o in overrides])}, {args.minutes:g} min ...",
              flush=True)
        run = results[name] = stage(name, _metered, train_ours, config, overrides, seconds, dz["frames"], out / name)
        print(f"      {run['frames']:,} frames in {run['train_s']:.0f} s, {run['cpu_s']:,.0f} CPU-s; "
              f"equal frames: {run['equal_frames']:,}", flush=True)
        label = f"{config}" + (f" ({', '.join(overrides)})" if overrides else "")
        rows.append({"label": f"{label}, equal time", "frames": run["frames"], "checkpoint": run["time_checkpoint"]})
        if dz["frames"] > 0:
            rows.append({"label": f"{label}, equal frames", "frames": run["equal_frames"],
                         "checkpoint": run["equal_checkpoint"]})
    for row in rows:
        print(f"[3/3] {row['label']} vs DouZero, {args.deals} deals x 2 ...", flush=True)
        row["match"] = stage(f"match: {row['label']}", head_to_head, row["checkpoint"], f"douzero:{out / 'douzero'}",
                             args.deals, args.seed, args.workers)
    results["rows"] = rows
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print()
    print(table(results))
    print(f"\nwrote {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
