"""A library learner's run folder, as DMC's: ``train.py --config sb3`` (any config whose ``algo`` names a
library learner, :mod:`agents.runs.algos`) lands here.

The learner's ``train(seconds, run_dir, decisions=..., cadence=...)`` trains to a time or a count of decisions
learned from (``max_seconds``, ``max_decisions``: the first reached ends the run) and writes its resumable
state and its policy (``policy.pt``, the ``"movescore"`` export) into the run folder; it resumes from that
state. One call a run: the learner calls the run's evaluation inside its training on the cadence
(:class:`~agents.runs.session.Cadence`: every ``eval_every_seconds`` of training, every
``eval_every_decisions`` learned), its state saved just before, so a library starts once a run:

* ``config.yaml``: the :class:`~agents.runs.algos.LibraryConfig` (``--resume RUN`` reads it back);
* ``log.csv``: one row per evaluation (training seconds, the learner's steps, CPU seconds);
* ``eval.csv``: at each evaluation (always at the end) the policy against each of
  ``eval_opponents`` in duplicate on ``eval_deals`` deals of ``eval_seed``, DMC's columns (``frames`` holds
  the learner's steps); ``python -m agents.cli.compare`` and the learning curve read it as DMC's;
* ``policy.pt``: what ``agents.load(RUN)`` and ``evaluate.py --a RUN`` seat.

Evaluation time is not training time: the run's seconds are the learner's own count (its clocks pause while
it evaluates; kept in its state across resumes), so ``max_seconds`` is training alone.
"""
from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import logging
import os
import resource
import time
from pathlib import Path
from typing import Any

from ddz_env.files import write_binary, write_text

from .._entry import install_extra
from ..evaluation.metrics import EVAL_FIELDS as METRIC_FIELDS
from ..evaluation.metrics import csv_values
from .config import yaml_module
from .algos import ALGOS, LIBRARY_SCHEMA, REQUIRES, LibraryConfig
from .stop import StopSignals
from .session import STATE_JSON

log = logging.getLogger("ddz.train")
POLICY = "policy.pt"
LOG_FIELDS = ("segment", "train_seconds", "steps", "cpu_seconds", "wall_seconds")
#: eval.csv's columns: DMC's (the metric catalogue, agents/evaluation/metrics.py)
EVAL_FIELDS = METRIC_FIELDS


def learner_module(algo: str):
    """The module of a library learner (``ImportError`` naming the extra that brings its library: its modules
    are looked for first, since some learners import their library only when they train)."""
    module = ALGOS[algo][0]
    needs, extra = REQUIRES.get(algo, ((), "marl"))
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"learner {algo!r} needs its library (not installed: {', '.join(missing)}): "
                          f"{install_extra(extra)}" + (" (in its own venv: make setup-rllib)" if extra == "rllib" else ""))
    try:
        return importlib.import_module(module)
    except ImportError as e:
        extra = "rllib" if algo == "rllib" else "marl"
        raise ImportError(f"learner {algo!r} needs its library: {install_extra(extra)} ({e})") from None


def check_options(cfg: LibraryConfig, module) -> None:
    """``ValueError`` for an option the learner does not take (did-you-mean) or a bad value, and for an agent
    spec among them that does not load, before anything starts (the learner's own ``check_options``)."""
    if hasattr(module, "check_options"):
        module.check_options(dict(cfg.options))
    else:  # a learner with only its DEFAULTS: the shared checks
        from ..integrations.options import check_options as check

        check(cfg.algo, dict(cfg.options), getattr(module, "DEFAULTS", {}))


def check_agents(cfg: LibraryConfig) -> None:
    """Every evaluation opponent loads (a mistyped one is said before the run folder exists)."""
    from ..loader import load

    for spec in cfg.eval_opponents:
        try:
            load(spec)
        except (ValueError, FileNotFoundError, ImportError, TypeError) as e:
            raise ValueError(f"config key 'eval_opponents': {e}") from None


def load_library_config(run_dir: str | os.PathLike, overrides: list[str] | None = None) -> LibraryConfig:
    """The config of a library run folder (its ``config.yaml``) with ``--set`` overrides (not ``algo``)."""
    p = Path(run_dir) / "config.yaml"
    if not p.is_file():
        raise FileNotFoundError(f"{run_dir}: no config.yaml (not a run folder of train.py)")
    from .config import load_yaml

    saved = load_yaml(p.read_text(), f"config {str(p)!r}")
    return LIBRARY_SCHEMA.resume(saved, overrides, where=f"config {str(p)!r}")  # (refuses a stored trust=...)


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _append(path: Path, fields: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """Rows added to a CSV file, the file written whole (atomically: a stop or a full disk mid-write leaves
    the rows before, never half a row)."""
    import io

    old = path.read_text() if path.is_file() else ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields)
    if not old:
        w.writeheader()
    w.writerows(rows)
    write_text(path, old + buf.getvalue())


def _read(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def evaluate_policy(cfg: LibraryConfig, policy: Path, steps: int, seconds: float) -> list[dict[str, Any]]:
    """The policy against each evaluation opponent, duplicate: ``eval.csv``'s rows."""
    from ..evaluation.protocols import evaluate

    rows = []
    for opp in cfg.eval_opponents:
        a = evaluate(str(policy), opp, deals=cfg.eval_deals, seed=cfg.eval_seed)["A"]
        lo, hi = a["score_ci95"]
        rows.append({"frames": steps, "time_s": round(seconds, 1), "opponent": opp, "mode": "duplicate",
                     "deals": cfg.eval_deals, **csv_values(a, "duplicate", digits=5)})
        # one deal has no interval (None): the line says the score alone (a None in %+.3f was a logging error)
        ci = "" if lo is None or hi is None else f" [{lo:+.3f}, {hi:+.3f}]"
        log.info("eval at %d steps vs %s: %+.3f%s per hand", steps, opp, a["mean_score"], ci)
    return rows


def _number(text: str) -> float:
    """An eval.csv cell as a number; an empty one (no interval: a one-deal evaluation) as NaN, not drawn."""
    return float(text) if text not in ("", None) else float("nan")


def plot_library_curve(run_dir: Path) -> bool:
    """``learning_curve.png`` of a library run: the score per hand against each evaluation opponent (95%
    interval) and the decisions per second of each segment, against decisions learned. False without
    matplotlib; a failure costs the picture only (eval.csv and log.csv hold the figures)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    evals, segs = _read(run_dir / "eval.csv"), _read(run_dir / "log.csv")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for opp in dict.fromkeys(r["opponent"] for r in evals):
        pts = sorted((int(r["frames"]), float(r["score"]), _number(r["ci_lo"]), _number(r["ci_hi"]))
                     for r in evals if r["opponent"] == opp)
        x = [p[0] for p in pts]
        ax1.plot(x, [p[1] for p in pts], marker="o", label=f"vs {opp}")
        ax1.fill_between(x, [p[2] for p in pts], [p[3] for p in pts], alpha=0.2)
    ax1.axhline(0, color="grey", lw=0.5)
    ax1.set_xlabel("decisions learned")
    ax1.set_ylabel("score per hand, duplicate (95% CI)")
    ax1.legend()
    prev_steps, prev_t, xs, ys = 0, 0.0, [], []
    for r in segs:
        steps, t = int(r["steps"]), float(r["train_seconds"])
        if t > prev_t:
            xs.append(steps)
            ys.append((steps - prev_steps) / (t - prev_t))
        prev_steps, prev_t = steps, t
    ax2.plot(xs, ys, marker="o")
    ax2.set_xlabel("decisions learned")
    ax2.set_ylabel("decisions per second of training")
    fig.suptitle(f"{run_dir.name}: {int(segs[-1]['steps']) if segs else 0:,} decisions learned")
    fig.tight_layout()
    buf = io.BytesIO()  # (drawn in memory, then written whole: ddz_env.files)
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    write_binary(run_dir / "learning_curve.png", lambda f: f.write(buf.getvalue()))
    return True


def _views(run_dir: Path, tb, segment: dict, rows: list[dict]) -> None:
    """The run's views after a segment: TensorBoard scalars and the learning curve (a failure: one warning)."""
    if tb is not None:
        tb.add_scalar("train/decisions_per_second", segment["steps_per_second"], segment["steps"])
        for r in rows:
            tb.add_scalar(f"eval/{r['opponent']}/duplicate/score", float(r["score"]), int(r["frames"]))
        tb.flush()
    try:
        plot_library_curve(run_dir)
    except Exception as e:  # noqa: BLE001 - matplotlib and the disk fail in many ways: the picture only
        log.warning("no learning-curve PNG (%s: %s); eval.csv and log.csv have its figures", type(e).__name__, e)


def run_library(cfg: LibraryConfig, run_dir: str | os.PathLike, resume: bool = False, progress: bool = True) -> Path:
    """Train ``cfg``'s library learner into ``run_dir`` (see the module doc); the policy's path.

    ``resume``: continue the run in ``run_dir`` (its learner state; evaluations already in ``eval.csv`` are
    not done again). ``ValueError`` for an option the learner does not take or an evaluation opponent that
    does not load, before the run folder is made."""
    module = learner_module(cfg.algo)
    check_options(cfg, module)
    check_agents(cfg)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text(run_dir / "config.yaml", yaml_module().safe_dump(cfg.to_dict(), sort_keys=False))
    logged = _read(run_dir / "log.csv") if resume else []
    evaluated = {int(r["frames"]) for r in _read(run_dir / "eval.csv")} if resume else set()
    if not resume:
        for name in ("log.csv", "eval.csv"):
            (run_dir / name).unlink(missing_ok=True)
    done = float(logged[-1]["train_seconds"]) if logged else 0.0
    steps = int(logged[-1]["steps"]) if logged else 0
    if steps > 0 and not os.path.lexists(run_dir / STATE_JSON):  # (never a silent restart from random weights)
        raise ValueError(f"cannot resume {run_dir}: its log.csv has {steps:,} decisions learned but its learner "
                         f"state ({STATE_JSON}) is missing; restore the run folder's files, or start a new run")
    if logged and steps not in evaluated and (run_dir / POLICY).is_file():
        # stopped between a segment's log row and its evaluation: that evaluation first (policy.pt is that
        # segment's policy: the learner writes it last), so no segment of eval.csv is lost
        _append(run_dir / "eval.csv", EVAL_FIELDS, evaluate_policy(cfg, run_dir / POLICY, steps, done))
        evaluated.add(steps)
    if _spent(cfg, done, steps):
        log.info("the run has already trained its %s (--set %s=... to go on); policy %s", _budget(cfg, done, steps),
                 _budget(cfg, done, steps).split()[0], run_dir / POLICY)
        return run_dir / POLICY
    from .log import summary_writer
    from .session import Cadence

    tb = summary_writer(run_dir / "tensorboard", log)
    cpu0, t0 = _cpu(), time.perf_counter()
    last = {"steps": steps, "seconds": done}

    def evaluation(steps: int, seconds: float) -> None:
        """The run's evaluation, called by the learner inside its training (its state saved just before):
        a log.csv row, eval.csv's rows, the views."""
        _append(run_dir / "log.csv", LOG_FIELDS, [{"segment": len(logged) + 1, "train_seconds": round(seconds, 1),
                                                   "steps": steps, "cpu_seconds": round(_cpu() - cpu0, 1),
                                                   "wall_seconds": round(time.perf_counter() - t0, 1)}])
        logged.append({"train_seconds": seconds, "steps": steps})
        rows: list[dict] = []
        if steps not in evaluated:
            rows = evaluate_policy(cfg, run_dir / POLICY, steps, seconds)
            _append(run_dir / "eval.csv", EVAL_FIELDS, rows)
            evaluated.add(steps)
        rate = (steps - last["steps"]) / max(seconds - last["seconds"], 1e-9)
        _views(run_dir, tb, {"steps": steps, "steps_per_second": rate}, rows)
        last.update(steps=steps, seconds=seconds)

    cadence = Cadence(evaluation, cfg.eval_every_seconds, cfg.eval_every_decisions, last=(done, steps),
                      at_start=cfg.eval_at_start and steps == 0 and 0 not in evaluated)
    with StopSignals():  # (SIGTERM as Ctrl-C: the learner saves its work, Session.keeping)
        # one call for the whole run: the learner evaluates on the cadence inside its training (a library
        # starts once a run), and stops at the first budget reached
        out = module.train(cfg.max_seconds if cfg.max_seconds > 0 else float("inf"), str(run_dir),
                           decisions=cfg.max_decisions if cfg.max_decisions > 0 else None, cadence=cadence,
                           seed=cfg.seed, resume=resume, progress=progress, **cfg.options)
    steps, done = int(out.get("steps", 0)), float(out.get("wall_seconds", done))
    if steps not in evaluated:  # (the end of the run: always evaluated)
        evaluation(steps, done)
    if tb is not None:
        tb.close()
    policy = Path(out.get("policy") or run_dir / POLICY)
    log.info("done: %s, %d decisions in %.0f s of training; policy %s", ALGOS[cfg.algo][1], steps, done, policy)
    return policy

def _spent(cfg: LibraryConfig, seconds: float, decisions: int) -> bool:
    """Whether a run with this much training behind it has reached either of its budgets."""
    return (cfg.max_seconds > 0 and seconds >= cfg.max_seconds) or 0 < cfg.max_decisions <= decisions


def _budget(cfg: LibraryConfig, seconds: float, decisions: int) -> str:
    """The budget a run has reached, in its config's words."""
    if cfg.max_seconds > 0 and seconds >= cfg.max_seconds:
        return f"max_seconds {cfg.max_seconds:g}"
    return f"max_decisions {cfg.max_decisions:,}"


__all__ = ["run_library", "evaluate_policy", "load_library_config", "learner_module", "check_options", "POLICY"]
