"""Evaluation during training: the learner's weights against fixed opponents, in a separate process.

Every ``eval_every`` frames the learner hands a copy of its weights to one evaluation
process (a spawned ``ProcessPoolExecutor`` of one worker, so the learner never waits for
it) that plays them with the batched evaluation (``agents.evaluate``) against each of
``eval_opponents`` on ``eval_deals`` fixed deals of ``eval_seed``: duplicate format with the
run's rules when bidding is on, and the fixed-landlord protocol. Each (opponent, mode)
gives one row of ``eval.csv``: score per hand with its 95% interval, win rates as
landlord and as farmers (head to head), and the agent's bidding and doubling rates;
TensorBoard gets the same scalars when it is installed (``pip install tensorboard``).
"""
from __future__ import annotations

import contextlib
import csv
import logging
import math
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ddz_env.files import replacing

from ...evaluation.metrics import EVAL_FIELDS as METRIC_FIELDS
from ...evaluation.metrics import TENSORBOARD_KEYS, csv_values
from ...runs.log import summary_writer

log = logging.getLogger("dmc")
#: eval.csv's columns: the metric catalogue's (agents/evaluation/metrics.py)
EVAL_FIELDS = METRIC_FIELDS


def _init_worker(learner_pid: int) -> None:
    """The evaluation worker: one math thread, and exit as soon as the learner is gone (killed,
    out of memory: the worker is reparented). A worker busy in an evaluation would otherwise play
    it to the end first: under load that outlived a 30 s wait (a CI run)."""
    import threading
    import time

    import torch

    torch.set_num_threads(1)

    def watch() -> None:
        while os.getppid() == learner_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="learner-watch", daemon=True).start()


def _signed(x: Any) -> str:
    """A score or an end of its interval in the log line, as evaluate.py's table prints them: ``-1.150``,
    ``+0.753`` (eval.csv keeps 5 decimals); ``?`` for a missing one."""
    return "?" if x in ("", None) else f"{float(x):+.3f}"


def _rate(x: Any) -> str:
    """A win rate in the log line, in the scores' 3 decimals: ``0.515`` (eval.csv keeps 5: ``0.51471``)."""
    return f"{float(x):.3f}"


def _round(x: Any) -> Any:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 5)


def eval_rows(model_kwargs: dict, state: dict, frames: int, elapsed: float, opponents: list[str], deals: int,
              seed: int, rules: str, replay_root: str | None = None,
              replay_deals: int = 0) -> list[dict[str, Any]]:
    """Play the weights ``state`` against each opponent; one row per (opponent, mode). Runs in the worker.
    With ``replay_deals`` > 0 the hands of that many deals go to ``replay_root/<frames>-<opponent>-<mode>/``."""
    from agents.evaluation.protocols import ReplayWriteError, evaluate

    from ..agent import DMCAgent
    from ..model import DMCModel

    model = DMCModel(**model_kwargs)
    model.load_state_dict(state)
    agent = DMCAgent(model, name=f"dmc@{frames}")
    from ddz_env.rules import Rules

    modes = (["duplicate"] if Rules.of(rules).bidding else []) + ["fixed-landlord"]
    rows = []
    for opp in opponents:
        for mode in modes:
            where = None
            if replay_root is not None and replay_deals > 0:
                where = os.path.join(replay_root, f"{frames:012d}-{os.path.basename(opp)}-{mode}")
            try:
                res = evaluate(agent, opp, deals=deals, seed=seed, mode=mode, rules=rules, replay_dir=where,
                               replay_deals=replay_deals if where else None)
            except ReplayWriteError as e:  # (a full disk) the figures are complete: keep them, say what is missing
                log.warning("evaluation at %d frames: %s", frames, e)
                res = e.result
            row = {"frames": frames, "time_s": round(elapsed, 1), "opponent": opp, "mode": mode, "deals": deals}
            row |= {k: _round(v) for k, v in csv_values(res["A"], mode, digits=5).items()}
            rows.append(row)
    return rows


def read_rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


#: the weights of each submitted evaluation wait here (``<frames>.pt``) until its rows are in eval.csv
PENDING = "eval_pending"


class TrainingEvaluator:
    """Submits evaluations to one worker process and appends their rows to ``eval.csv`` as they finish.

    ``eval.csv`` holds exactly one row set per evaluation point up to the checkpoint, whatever the kills and
    resumes: each submitted evaluation's weights are kept in ``eval_pending/<frames>.pt`` until its rows are
    written, so a run killed while an evaluation ran evaluates those weights when it resumes (it lost 3 of 4
    points over 10 kills before), and a point that has rows is never evaluated again (a resumed finished run
    appended the final point twice)."""

    def __init__(self, cfg, run_dir: Path, resume_frames: int | None = None):
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.path = Path(run_dir) / "eval.csv"
        self.pending_dir = self.run_dir / PENDING
        rows = read_rows(self.path) if resume_frames is not None else []
        # a resumed run continues from its checkpoint: rows written after it (or cut short) are dropped
        rows = [r for r in rows if set(EVAL_FIELDS) <= set(r) and r["frames"].isdigit()
                and int(r["frames"]) <= resume_frames]
        with replacing(self.path) as tmp:  # (a full disk leaves the old eval.csv, not half of it)
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
                w.writeheader()
                w.writerows(rows)
        self.done_frames = {int(r["frames"]) for r in rows}
        self.pending: list[tuple[int, Future]] = []
        self.last_frames: int | None = max(self.done_frames, default=None)  # frames of the last evaluation asked for
        self.pool: ProcessPoolExecutor | None = None
        self.tb = summary_writer(Path(run_dir) / "tensorboard", log)  # (a view: a failure turns it off, never the run)
        self._resume_pending(resume_frames)

    def _pending_file(self, frames: int) -> Path:
        return self.pending_dir / f"{frames:012d}.pt"

    def _resume_pending(self, resume_frames: int | None) -> None:
        """Evaluate the kept weights of points up to the checkpoint that have no rows; drop the others."""
        import torch

        for f in sorted(self.pending_dir.glob("*.pt")) if self.pending_dir.is_dir() else []:
            frames = int(f.stem) if f.stem.isdigit() else -1
            if resume_frames is None or frames < 0 or frames > resume_frames or frames in self.done_frames:
                f.unlink(missing_ok=True)
                continue
            try:
                kept = torch.load(f, map_location="cpu", weights_only=True)
            except Exception as e:  # noqa: BLE001 - a file cut short by the kill: that point is lost, say so
                log.warning("the evaluation at %d frames cannot be redone (%s: %s)", frames, type(e).__name__, e)
                f.unlink(missing_ok=True)
                continue
            log.info("evaluating the weights at %d frames (their evaluation was cut short by the stop)", frames)
            self._submit(kept["model_kwargs"], kept["state"], frames, float(kept["elapsed"]))

    def wants(self, frames: int) -> bool:
        """Is an evaluation of the weights at ``frames`` still to be asked for (no rows, none in flight)?"""
        return frames not in self.done_frames and all(f != frames for f, _ in self.pending)

    def _new_pool(self) -> ProcessPoolExecutor:
        import multiprocessing as mp

        return ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                                   initargs=(os.getpid(),))

    def submit(self, model, frames: int, elapsed: float) -> None:
        """Evaluate ``model``'s weights at ``frames`` (not if that point has rows or is in flight)."""
        if not self.wants(frames):
            return
        state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        from ddz_env.files import write_binary

        import torch

        try:  # kept until the rows are written: a kill before then redoes this point on --resume
            self.pending_dir.mkdir(exist_ok=True)
            write_binary(self._pending_file(frames), lambda f: torch.save(
                {"model_kwargs": model.kwargs, "state": state, "elapsed": elapsed}, f))
        except OSError as e:
            log.warning("the weights of the evaluation at %d frames cannot be kept (%s): a stop before it ends "
                        "loses that point", frames, e)
        self._submit(model.kwargs, state, frames, elapsed)

    def _submit(self, model_kwargs: dict, state: dict, frames: int, elapsed: float) -> None:
        from concurrent.futures.process import BrokenProcessPool

        if self.pool is None:
            self.pool = self._new_pool()
        self.last_frames = frames
        c = self.cfg
        args = (eval_rows, model_kwargs, state, frames, elapsed, list(c.eval_opponents), c.eval_deals, c.eval_seed,
                c.rules, str(self.run_dir / "replays"), c.eval_replays)
        try:
            fut = self.pool.submit(*args)
        except BrokenProcessPool:  # the worker died (killed, out of memory): a fresh one, as Ray replaces an actor
            log.warning("the evaluation process died; starting a new one (the evaluations in flight are lost)")
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()
            fut = self.pool.submit(*args)
        self.pending.append((frames, fut))

    def poll(self, wait: bool = False) -> list[dict[str, Any]]:
        """Write the rows of finished evaluations (all of them with ``wait``); returns them."""
        out = []
        still = []
        for frames, fut in self.pending:
            if wait or fut.done():
                try:
                    rows = fut.result()
                except Exception as e:  # noqa: BLE001 - an evaluation failure must not kill training
                    log.warning("evaluation failed: %s: %s", type(e).__name__, e)
                    self._pending_file(frames).unlink(missing_ok=True)
                    continue
                self._write(rows)
                self.done_frames.add(frames)
                self._pending_file(frames).unlink(missing_ok=True)
                out.extend(rows)
            else:
                still.append((frames, fut))
        self.pending = still
        return out

    def _write(self, rows: list[dict[str, Any]]) -> None:
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=EVAL_FIELDS).writerows(rows)
        for r in rows:
            wp = [f"{side} {_rate(r[key])}" for side, key in (("landlord", "wp_landlord"), ("farmers", "wp_farmer"))
                  if r.get(key, "") != ""]
            log.info("eval at %d frames vs %s (%s): %s [%s, %s] per hand%s", r["frames"], r["opponent"], r["mode"],
                     _signed(r["score"]), _signed(r["ci_lo"]), _signed(r["ci_hi"]), f"; WP {', '.join(wp)}" if wp else "")
            if self.tb is not None:
                tag = f"eval/{r['opponent']}/{r['mode']}"
                for key in TENSORBOARD_KEYS:
                    if r.get(key, "") != "":
                        self.tb.add_scalar(f"{tag}/{key}", float(r[key]), int(r["frames"]))
        if self.tb is not None:
            self.tb.flush()

    def close(self, wait: bool = True) -> None:
        self.poll(wait=wait)
        if self.pool is not None:
            self.pool.shutdown(wait=wait, cancel_futures=not wait)
            self.pool = None
        if not self.pending:  # every point has its rows: no empty eval_pending/ left in the run folder
            with contextlib.suppress(OSError):  # (not empty: weights of a point a resume evaluates)
                self.pending_dir.rmdir()
        if self.tb is not None:
            self.tb.close()


def _frames(n: int) -> str:
    return f"{n / 1e6:.3g}M" if n >= 1_000_000 else f"{n / 1e3:.0f}k" if n >= 1000 else str(n)


def eval_summary(path: Path) -> list[str]:
    """One line per evaluation opponent of ``eval.csv`` (the points the learning curve's evaluation panel
    draws), for the end of a run::

        vs rule (duplicate, 100 deals): -5.28 at 0 -> -1.10 at 100k -> -0.73 at 200k -> ... -> -0.30 at 400k, last [-1.10, +0.49]

    Nothing for a run without evaluations."""
    rows = [r for r in read_rows(path) if str(r.get("frames", "")).isdigit() and r.get("score", "") != ""]
    rows.sort(key=lambda r: int(r["frames"]))
    lines = []
    for key in sorted({(r["opponent"], r["mode"], r["deals"]) for r in rows}):
        pts = [r for r in rows if (r["opponent"], r["mode"], r["deals"]) == key]
        path_ = " -> ".join(f"{float(r['score']):+.2f} at {_frames(int(r['frames']))}" for r in pts)
        last = pts[-1]
        ci = (f", last [{float(last['ci_lo']):+.2f}, {float(last['ci_hi']):+.2f}]"
              if last.get("ci_lo", "") != "" and last.get("ci_hi", "") != "" else "")
        lines.append(f"vs {key[0]} ({key[1]}, {key[2]} deals): {path_}{ci}")
    return lines


__all__ = ["TrainingEvaluator", "eval_rows", "eval_summary", "read_rows", "EVAL_FIELDS"]
