"""Same wall time for every learner: each MARL library's learner with the move-scoring policy, beside DMC.

    python benchmarks/bench_marl_learning.py                          # 30 minutes each, then the league
    python benchmarks/bench_marl_learning.py --minutes 1 --deals 20   # the whole pipeline in minutes
    python benchmarks/bench_marl_learning.py --resume                 # after a stop: finished stages kept,
                                                                      # an interrupted training resumes

One after another on this machine (never two at once: each has the whole CPU), every learner of
``--learners`` trains from scratch for ``--minutes`` of wall time:

==========  ============================================================================================
``dmc``     our DMC trainer, ``train.py --config default`` (``max_seconds``; in-training evaluation off)
``sb3``     sb3-contrib's MaskablePPO with ``agents.integrations.sb3.policy`` (one seat against opponents)
``tianshou`` Tianshou's PPO with ``agents.integrations.tianshou.nets`` (one seat against opponents)
``torchrl`` TorchRL's PPO with ``agents.integrations.torchrl.modules``, self-play: all three seats learn
``rllib``   RLlib's PPO (new API stack) with ``agents.integrations.rllib.module``, self-play (run with the
            RLlib venv's python, ``--rllib-python``, since Ray pins its own Gymnasium)
==========  ============================================================================================

Every learner trains through ``train.py --config NAME`` (DMC: ``default``) in its own run folder, its
periodic evaluation off (the league evaluates); an interrupted stage resumes with ``train.py --resume``. Each
stage runs in a child process; its wall time, the CPU seconds of its processes and the load average around it
are recorded, and a table of decisions per CPU second beside DMC's frames per CPU second is printed after
the training stages (``x DMC``), so that "the same wall time" can be checked for the same compute on a shared
machine.

Then a league of all of them with ``random`` and ``rule`` (``evaluate.py --league``: duplicate, ``--deals``
deals, seed ``--seed``, which no training uses: DMC's in-training evaluation is seeded 10000 and off
here). The table: steps (env decisions of the learning seats; DMC: frames learned), CPU seconds, the
league rating and the score per hand against ``rule`` and against ``random``, with 95% intervals.

Writes ``--out-dir`` (default ``runs/bench_marl_learning``): one run folder per learner,
``stages.json`` (each finished stage at once), ``league.json`` (+ ``.png``) and ``results.json``; and,
with ``--keep DIR``, writes each library learner's final ``policy.pt`` to ``DIR/NAME.pt`` for committing, its
weights in float16 (4 MB; ``halve_policy_file``). Needs the ``train`` and ``marl`` extras (and the RLlib venv for ``rllib``).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.runs.algos import ALGOS  # noqa: E402  (the one table of learners: each one's label)

#: name -> (what trains it: its module, DMC's `train.py --config default`; a label for the table)
LEARNERS = {name: ("train.py --config default" if name == "dmc" else module, label)
            for name, (module, label) in ALGOS.items()}
DEFAULT_RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"


def _cpu_children() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def stage_command(name: str, run_dir: Path, seconds: float, seed: int, resume: bool, python: str) -> list[str]:
    """The child process of one learner's training stage: ``train.py --config NAME`` (DMC: ``default``), its
    periodic evaluation off (the league evaluates), or ``train.py --resume`` of its run folder."""
    train = [python, str(ROOT / "train.py")]
    if resume and ((run_dir / "checkpoint.pt").is_file() or (run_dir / "config.yaml").is_file()):
        return train + ["--resume", str(run_dir), "--no-progress"]
    if name == "dmc":
        return train + ["--config", "default", "--run-dir", str(run_dir), "--no-progress",
                        "--set", f"max_seconds={seconds}", "--set", "eval_every=0", "--set", f"seed={seed}"]
    return train + ["--config", name, "--run-dir", str(run_dir), "--no-progress", "--set", f"max_seconds={seconds}",
                    "--set", "eval_every_seconds=0", "--set", "eval_deals=1", "--set", "eval_opponents=[random]",
                    "--set", f"seed={seed}"]


def run_stage(name: str, out_dir: Path, seconds: float, seed: int, resume: bool, python: str) -> dict:
    """Train one learner (a child process, its output shown as it comes); its figures."""
    run_dir = out_dir / name
    if not resume and run_dir.exists():
        shutil.rmtree(run_dir)
    cmd = stage_command(name, run_dir, seconds, seed, resume, python)
    print(f"--- {name}: {LEARNERS[name][1]}, {seconds:.0f} s", flush=True)
    load0, cpu0, t0 = os.getloadavg()[0], _cpu_children(), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    for line in proc.stdout:
        print(f"  [{name}] {line}", end="", flush=True)
    if proc.wait() != 0:
        raise RuntimeError(f"{name}'s training stage failed (exit {proc.returncode}): {' '.join(cmd)}")
    out = {"name": name, "label": LEARNERS[name][1], "wall_s": round(time.perf_counter() - t0, 1),
           "cpu_s": round(_cpu_children() - cpu0, 1), "load_before": round(load0, 2),
           "load_after": round(os.getloadavg()[0], 2)}
    if name == "dmc":
        import torch

        ck = torch.load(run_dir / "checkpoint.pt", map_location="cpu", weights_only=True)
        out.update(steps=int(ck["frames"]), unit="frames", policy=str(run_dir))
    else:
        import csv

        with open(run_dir / "log.csv", newline="") as f:
            last = list(csv.DictReader(f))[-1]
        out.update(steps=int(last["steps"]), unit="decisions", policy=str(run_dir / "policy.pt"))
    out["per_cpu_s"] = round(out["steps"] / out["cpu_s"], 1) if out["cpu_s"] > 0 else float("nan")
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=30.0, help="wall time of each learner's training")
    p.add_argument("--learners", default=",".join(LEARNERS), help=f"comma-separated, of {', '.join(LEARNERS)}")
    p.add_argument("--deals", type=int, default=1000, help="league deals per pair (duplicate)")
    p.add_argument("--seed", type=int, default=11, help="the league's deal seed (used by no training)")
    p.add_argument("--train-seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2, help="league worker processes")
    p.add_argument("--out-dir", default=str(ROOT / "runs" / "bench_marl_learning"))
    p.add_argument("--rllib-python", default=str(DEFAULT_RLLIB_PYTHON), help="the RLlib venv's python")
    p.add_argument("--keep", default="", help="write each library learner's policy.pt to this folder as NAME.pt (float16 weights)")
    p.add_argument("--resume", action="store_true", help="keep finished stages (same --minutes); resume the rest")
    p.add_argument("--train-only", action="store_true", help="stop after the training stages (no league: a later "
                   "--resume with more --learners adds them and plays it)")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.learners.split(",") if n.strip()]
    unknown = [n for n in names if n not in LEARNERS]
    if unknown:
        p.error(f"unknown learner(s) {unknown}: choose from {', '.join(LEARNERS)}")
    if args.minutes <= 0 or args.deals < 1:
        p.error("--minutes must be positive and --deals at least 1")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stages_path = out_dir / "stages.json"
    stages = json.loads(stages_path.read_text()) if args.resume and stages_path.is_file() else {}
    if stages.get("minutes", args.minutes) != args.minutes:
        p.error(f"--resume: the stages in {stages_path} are of --minutes {stages['minutes']}, not {args.minutes}")
    stages["minutes"] = args.minutes
    seconds = 60.0 * args.minutes
    for name in names:
        if name in stages.get("done", {}):
            print(f"--- {name}: kept from {stages_path}")
            continue
        python = args.rllib_python if name == "rllib" else sys.executable
        started = name in stages.setdefault("started", [])
        if not started:
            stages["started"].append(name)
        stages_path.write_text(json.dumps(stages, indent=1))
        stages.setdefault("done", {})[name] = run_stage(name, out_dir, seconds, args.train_seed,
                                                        args.resume and started, python)
        stages_path.write_text(json.dumps(stages, indent=1))
    done = [stages["done"][n] for n in names]
    dmc = next((r for r in done if r["name"] == "dmc"), None)
    print(f"\n{'learner':34s} {'decisions':>12s} {'CPU s':>8s} {'per CPU s':>10s} {'x DMC':>6s}")
    for r in done:
        per = r["steps"] / r["cpu_s"] if r["cpu_s"] > 0 else float("nan")
        ratio = per / (dmc["steps"] / dmc["cpu_s"]) if dmc and dmc["cpu_s"] > 0 else float("nan")
        print(f"{r['label']:34s} {r['steps']:>12,d} {r['cpu_s']:8.0f} {per:10.0f} {ratio:6.2f}")
    if args.train_only:
        print(f"--- trained: {', '.join(names)} (--train-only: no league)")
        return {"minutes": args.minutes, "stages": done}
    if args.keep:
        from agents.integrations.move_policy import halve_policy_file

        keep = Path(args.keep)
        keep.mkdir(parents=True, exist_ok=True)
        for row in done:
            if row["name"] != "dmc":
                halve_policy_file(row["policy"], keep / f"{row['name']}.pt")  # (float16 weights: half the bytes)

    from agents.cli.league import format_league
    from agents.evaluation.league import play_league, save_heatmap

    specs = ["random", "rule"] + [row["policy"] for row in done]
    print(f"--- league: {len(specs)} agents, {args.deals} deals a pair, seed {args.seed}", flush=True)
    league = play_league(specs, deals=args.deals, seed=args.seed, workers=args.workers, progress=True)
    print(format_league(league))
    (out_dir / "league.json").write_text(json.dumps(league.to_json(), indent=1))
    save_heatmap(league, out_dir / "league.png")
    rows = []
    for k, row in enumerate(done):
        i = k + 2
        rows.append({**row, "rating": float(league.ratings[i]),
                     "rating_ci95": [float(league.ratings_lo[i]), float(league.ratings_hi[i])],
                     **{f"vs_{b}": float(league.matrix[i, j]) for j, b in ((0, "random"), (1, "rule"))},
                     **{f"vs_{b}_ci95": [float(league.matrix_lo[i, j]), float(league.matrix_hi[i, j])]
                        for j, b in ((0, "random"), (1, "rule"))}})
    print(f"\n{'learner':34s} {'steps':>12s} {'CPU s':>8s} {'rating':>8s} {'vs rule [95% CI]':>26s} "
          f"{'vs random [95% CI]':>26s}")
    for r in rows:
        print(f"{r['label']:34s} {r['steps']:>12,d} {r['cpu_s']:8.0f} {r['rating']:+8.3f} "
              f"{r['vs_rule']:+7.3f} [{r['vs_rule_ci95'][0]:+.3f}, {r['vs_rule_ci95'][1]:+.3f}] "
              f"{r['vs_random']:+7.3f} [{r['vs_random_ci95'][0]:+.3f}, {r['vs_random_ci95'][1]:+.3f}]")
    results = {"minutes": args.minutes, "deals": args.deals, "seed": args.seed, "rows": rows,
               "command": "python benchmarks/bench_marl_learning.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
