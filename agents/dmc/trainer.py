"""The DMC learner and its actors (DouZero's Deep Monte-Carlo, batched).

Read top to bottom:

1. :func:`learn`: one update. Every sample is (planes, action, net, target); each of the
   four networks regresses its own samples' Q(s, a) on the Monte-Carlo targets (MSE), one
   optimizer over all of them (the per-network losses are summed, so each network gets
   the gradient of its own mean loss).
2. :func:`train`: the learner. Batches come from an experience source (``sources.py``: inline
   in this process with ``num_actors: 0``, deterministic, and ``--resume`` continues bit for
   bit; actor processes over shared memory; or Ray actors on a cluster with ``backend: ray``);
   it learns on each and publishes the new weights. CSV log, progress bar, checkpoints,
   evaluation, learning curve.
"""
from __future__ import annotations

import contextlib
import csv
import logging
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .config import NET_NAMES, POSITIONS, TrainConfig, save_config
from .evaluator import TrainingEvaluator, read_rows
from .checkpoint import FORMAT_VERSION, checkpoint_dict, load_checkpoint, save_checkpoint
from .experience import Collector, Stats
from .sources import make_source
from .model import NUM_NETS, DMCModel

log = logging.getLogger("dmc")
CSV_FIELDS = (["time_s", "frames", "updates", "fps"] + [f"loss_{n}" for n in NET_NAMES]
              + [f"return_{p}" for p in POSITIONS] + ["hands", "void_rate", "score_vs_opponents"])


# ---------------------------------------------------------------------------------------------- learner
def make_model(cfg: TrainConfig) -> DMCModel:
    return DMCModel(**cfg.model_kwargs())


def make_optimizer(cfg: TrainConfig, model: torch.nn.Module) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=cfg.optim_eps)
    return torch.optim.RMSprop(model.parameters(), lr=cfg.lr, alpha=cfg.rmsprop_alpha, eps=cfg.optim_eps)


def learn(model: DMCModel, optimizer: torch.optim.Optimizer, batch: tuple[np.ndarray, ...], cfg: TrainConfig,
          device: torch.device) -> list[float]:
    """One update on a batch (obs int8 (N, 1740), action int32, net int8, target float32): losses per net."""
    obs, action, net, target = batch
    obs_t = torch.from_numpy(obs).to(device, non_blocking=True)
    action_t = torch.from_numpy(action.astype(np.int64)).to(device, non_blocking=True)
    target_t = torch.from_numpy(target).to(device, non_blocking=True)
    losses = [math.nan] * NUM_NETS
    total = None
    parts = []
    for n in range(NUM_NETS):
        sel = np.flatnonzero(net == n)
        if sel.size == 0:
            continue
        sel_t = torch.from_numpy(sel).to(device)
        with cfg.autocast():
            q = model.q_pairs(n, obs_t.index_select(0, sel_t), action_t.index_select(0, sel_t))
        loss = torch.mean((q - target_t.index_select(0, sel_t)) ** 2)
        parts.append((n, loss))
        total = loss if total is None else total + loss
    if not bool(torch.isfinite(total.detach())):
        raise ValueError(f"training diverged: non-finite loss ({', '.join(f'{NET_NAMES[n]} {float(l.detach()):g}' for n, l in parts)}); "
                         f"the last checkpoint holds the last good weights (try a lower lr)")
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
    optimizer.step()
    for n, loss in parts:
        losses[n] = float(loss.detach())
    return losses


# ---------------------------------------------------------------------------------------------- logging
class RunLog:
    """CSV rows of frames, fps, mean loss per network and mean score per position.

    Rows come at fixed frames (``every_frames``: at the first update at or past each
    multiple, so that two runs of one config have their rows at the same frames; wall time is
    the ``time_s`` column), or every ``every_seconds`` when ``every_frames`` is 0. ``fps`` is
    the frames of the row's window over its wall time; a session's first window opens when its
    first batch is there (:meth:`start`), so neither the start-up (actor processes spawning,
    weights loading) nor, after ``--resume``, the frames of the earlier sessions count in it.

    ``resume_frames``: continue the CSV of a resumed run, dropping the rows written after its
    checkpoint (a run killed between checkpoints logged frames it then trains again)."""

    def __init__(self, path: Path, resume_frames: int | None = None, every_frames: int = 0,
                 every_seconds: float = 10.0):
        self.path = path
        self.every_frames = int(every_frames)
        self.every_seconds = float(every_seconds)
        kept = []
        if resume_frames is not None and path.exists():
            with open(path, newline="") as f:
                kept = [r for r in csv.DictReader(f) if int(r["frames"]) <= resume_frames]
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=CSV_FIELDS, extrasaction="ignore")
        self.writer.writeheader()
        self.writer.writerows(kept)
        self.file.flush()
        frames = resume_frames or 0
        self.last_frames = int(kept[-1]["frames"]) if kept else None  # frames of the last row written
        self.next_frames = self._next(frames)
        self.started = False
        self.reset_window(frames)

    def _next(self, frames: int) -> int | None:
        return (frames // self.every_frames + 1) * self.every_frames if self.every_frames else None

    def start(self, frames: int) -> None:
        """The session's experience starts flowing (``frames`` done so far): the fps clock starts here."""
        self.started = True
        self.t0 = time.perf_counter()
        self.f0 = frames

    def reset_window(self, frames: int) -> None:
        self.t0 = time.perf_counter()
        self.f0 = frames
        self.losses = [[] for _ in range(NUM_NETS)]
        self.stats = np.zeros(Stats.SIZE)

    def add(self, losses: list[float], stats: np.ndarray | None) -> None:
        for n, l in enumerate(losses):
            if not math.isnan(l):
                self.losses[n].append(l)
        if stats is not None:
            self.stats += stats

    def due(self, frames: int) -> bool:
        """Is a row due now that ``frames`` are done?"""
        if self.every_frames:
            return frames >= self.next_frames
        return time.perf_counter() - self.t0 >= self.every_seconds

    def write(self, elapsed: float, frames: int, updates: int) -> dict[str, Any]:
        """The row of the window that ends at ``frames`` (written, and returned); a new window opens."""
        dt = max(time.perf_counter() - self.t0, 1e-9)
        hands = self.stats[3]
        row: dict[str, Any] = {"time_s": round(elapsed, 2), "frames": frames, "updates": updates,
                               "fps": round((frames - self.f0) / dt, 1) if frames > self.f0 else ""}
        for n, name in enumerate(NET_NAMES):
            row[f"loss_{name}"] = round(float(np.mean(self.losses[n])), 6) if self.losses[n] else ""
        for p, name in enumerate(POSITIONS):
            row[f"return_{name}"] = round(self.stats[p] / hands, 4) if hands else ""
        row["hands"] = int(hands)
        total = hands + self.stats[4]
        row["void_rate"] = round(self.stats[4] / total, 4) if total else ""
        row["score_vs_opponents"] = round(self.stats[5] / self.stats[6], 4) if self.stats[6] else ""
        self.writer.writerow(row)
        self.file.flush()
        self.last_frames = frames
        self.next_frames = self._next(frames)
        self.reset_window(frames)
        return row

    def close(self) -> None:
        self.file.close()


class _ThroughBar(logging.StreamHandler):
    """A copy of a console handler that writes through ``tqdm.write``: the bar is cleared, the
    line written, the bar drawn again below it (a log line never lands on the bar's line)."""

    def __init__(self, orig: logging.Handler, tqdm_cls):
        super().__init__(orig.stream)
        self.tqdm_cls = tqdm_cls
        self.setLevel(orig.level)
        self.setFormatter(orig.formatter)
        for f in orig.filters:
            self.addFilter(f)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.tqdm_cls.write(self.format(record), file=self.stream)
            self.flush()
        except RecursionError:  # pragma: no cover (logging's own policy)
            raise
        except Exception:  # noqa: BLE001 (a handler reports its errors, never raises them)
            self.handleError(record)


def _is_console(h: logging.Handler) -> bool:
    return isinstance(h, logging.StreamHandler) and getattr(h, "stream", None) in (sys.stdout, sys.stderr)


@contextlib.contextmanager
def log_through_bar(tqdm_cls, loggers: list[logging.Logger]):
    """While a progress bar is drawn: the console handlers of ``loggers`` (and logging's
    last-resort handler) write through ``tqdm_cls.write``; other handlers (files) are untouched."""
    saved = [(lg, lg.handlers) for lg in loggers]
    last = logging.lastResort
    try:
        for lg in loggers:
            lg.handlers = [_ThroughBar(h, tqdm_cls) if _is_console(h) else h for h in lg.handlers]
        if last is not None:
            logging.lastResort = _ThroughBar(last, tqdm_cls)
        yield
    finally:
        for lg, handlers in saved:
            lg.handlers = handlers
        logging.lastResort = last


def plot_learning_curve(csv_path: Path, png_path: Path) -> bool:
    """Mean score per position and loss per network against frames; False if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no learning-curve PNG")
        return False
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    evals = read_rows(csv_path.parent / "eval.csv")
    fig, axes = plt.subplots(1, 3 if evals else 2, figsize=(16.5 if evals else 11, 4))
    ax1, ax2 = axes[0], axes[1]

    def series(key):
        pts = [(float(r["frames"]), float(r[key])) for r in rows if r.get(key) not in ("", None)]
        return ([p[0] for p in pts], [p[1] for p in pts])

    for name in POSITIONS:
        ax1.plot(*series(f"return_{name}"), label=name)
    ax1.set_xlabel("frames")
    ax1.set_ylabel("mean score per hand (R19)")
    ax1.axhline(0, color="grey", lw=0.5)
    ax1.legend()
    for name in NET_NAMES:
        ax2.plot(*series(f"loss_{name}"), label=name)
    ax2.set_xlabel("frames")
    ax2.set_ylabel("MSE loss")
    ax2.set_yscale("log")
    ax2.legend()
    if evals:  # score per hand against each evaluation opponent, with the 95% interval
        ax3 = axes[2]
        for key in sorted({(r["opponent"], r["mode"]) for r in evals}):
            pts = [r for r in evals if (r["opponent"], r["mode"]) == key and r["score"] != ""]
            x = [float(r["frames"]) for r in pts]
            ax3.plot(x, [float(r["score"]) for r in pts], marker=".", label=f"vs {key[0]} ({key[1]})")
            if all(r["ci_lo"] != "" for r in pts):
                ax3.fill_between(x, [float(r["ci_lo"]) for r in pts], [float(r["ci_hi"]) for r in pts], alpha=0.2)
        ax3.axhline(0, color="grey", lw=0.5)
        ax3.set_xlabel("frames")
        ax3.set_ylabel("score per hand (evaluation, 95% CI)")
        ax3.legend(fontsize=8)
    fig.suptitle(png_path.parent.name)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------- training
def train(cfg: TrainConfig, run_dir: str | os.PathLike, resume: dict[str, Any] | None = None,
          progress: bool = True) -> Path:
    """Train into ``run_dir`` (config.yaml, log.csv, checkpoint.pt, learning_curve.png); returns the checkpoint path.

    ``resume``: a checkpoint dict to continue from (its config is the one ``cfg`` should be).
    """
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"config key 'device': {cfg.device!r} but torch sees no CUDA device (use device=cpu)")
    run_dir = Path(run_dir)
    torch.set_num_threads(cfg.torch_threads)
    device = torch.device(cfg.device)
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    model = make_model(cfg).to(device)
    optimizer = make_optimizer(cfg, model)
    frames = updates = 0
    elapsed0 = 0.0
    collector = Collector(cfg, seed=cfg.seed * 1000) if cfg.num_actors == 0 and cfg.backend != "ray" else None
    if resume is not None:
        try:
            model.load_state_dict(resume["model"])
            optimizer.load_state_dict(resume["optimizer"])
            for group in optimizer.param_groups:  # the config's values, not the saved ones: --set lr=... on resume
                group["lr"], group["eps"] = cfg.lr, cfg.optim_eps
                if cfg.optimizer == "rmsprop":
                    group["alpha"] = cfg.rmsprop_alpha
            frames, updates, elapsed0 = int(resume["frames"]), int(resume["updates"]), float(resume["elapsed"])
            torch.set_rng_state(resume["torch_rng"])
            if collector is not None and resume.get("collector") is not None:
                collector.load_state_dict(resume["collector"])
        except (KeyError, RuntimeError, ValueError, TypeError) as e:
            raise ValueError(f"cannot resume from this checkpoint with this config: {type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else ''}") from None
        log.info("resumed at %d frames, %d updates", frames, updates)
    # the run folder and its config only once the state is in place (a refused resume changes nothing)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(cfg, run_dir / "config.yaml")
    ckpt_path = run_dir / "checkpoint.pt"
    runlog = RunLog(run_dir / "log.csv", resume_frames=frames if resume is not None else None,
                    every_frames=cfg.log_every_frames, every_seconds=cfg.log_every)
    evaluator = TrainingEvaluator(cfg, run_dir, frames if resume is not None else None) if cfg.eval_every else None
    t_start = time.perf_counter()
    next_ckpt = (frames // cfg.checkpoint_every + 1) * cfg.checkpoint_every
    next_eval = (frames // cfg.eval_every + 1) * cfg.eval_every if cfg.eval_every else None
    bar = None
    logs = contextlib.ExitStack()  # while the bar is drawn, log lines are written through it
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.total_frames, initial=frames, unit="fr", unit_scale=True, dynamic_ncols=True)
        logs.enter_context(log_through_bar(tqdm, [logging.root, log]))

    def elapsed() -> float:
        return elapsed0 + time.perf_counter() - t_start

    def done() -> bool:
        if frames >= cfg.total_frames:
            return True
        return cfg.max_seconds > 0 and time.perf_counter() - t_start >= cfg.max_seconds

    def save() -> None:
        ck = checkpoint_dict(cfg, model, optimizer, frames, updates, elapsed(), collector)
        save_checkpoint(ck, ckpt_path)
        if cfg.keep_checkpoints:
            save_checkpoint(ck, run_dir / f"checkpoint_{frames:012d}.pt")

    def after_update(losses: list[float], stats: np.ndarray | None) -> None:
        nonlocal next_ckpt, next_eval
        runlog.add(losses, stats)
        if evaluator is not None:
            evaluator.poll()
            if frames >= next_eval:
                evaluator.submit(model, frames, elapsed())
                next_eval = (frames // cfg.eval_every + 1) * cfg.eval_every
        if bar is not None:
            bar.update(cfg.batch_size)
        if runlog.due(frames):
            row = runlog.write(elapsed(), frames, updates)
            log.info("frames %d  fps %s  loss %s  return L/D/U %s/%s/%s%s", frames,
                     f"{row['fps']:.0f}" if row["fps"] != "" else "-",
                     "/".join(str(row[f"loss_{n}"]) for n in NET_NAMES),
                     *(row[f"return_{p}"] for p in POSITIONS),
                     f"  vs opponents {row['score_vs_opponents']}" if row["score_vs_opponents"] != "" else "")
        if frames >= next_ckpt:
            save()
            next_ckpt = (frames // cfg.checkpoint_every + 1) * cfg.checkpoint_every

    source = make_source(cfg, model, frames, collector, run_dir)
    model.train()
    try:
        while not done():
            batch, stats = source.get()
            if not runlog.started:  # the first batch: fps counts from here, not from the actors' start-up
                runlog.start(frames)
            losses = learn(model, optimizer, batch, cfg, device)
            frames += cfg.batch_size
            updates += 1
            source.publish(model)
            after_update(losses, stats)
    finally:
        source.close()
        if bar is not None:
            bar.close()
        logs.close()
        if evaluator is not None and sys.exc_info()[0] is not None:
            evaluator.close(wait=False)  # training failed: drop the evaluations in flight
    if frames != runlog.last_frames:  # the final row, unless the last update wrote it
        runlog.write(elapsed(), frames, updates)
    runlog.close()
    save()
    if evaluator is not None:
        if evaluator.last_frames != frames:
            evaluator.submit(model, frames, elapsed())  # the final weights are evaluated too
        log.info("waiting for %d evaluation(s) to finish", len(evaluator.pending))
        evaluator.close(wait=True)
    plot_learning_curve(run_dir / "log.csv", run_dir / "learning_curve.png")
    log.info("done: %d frames in %.0f s; checkpoint %s", frames, elapsed(), ckpt_path)
    return ckpt_path


__all__ = ["train", "learn", "make_model", "make_optimizer", "checkpoint_dict", "save_checkpoint",
           "load_checkpoint", "plot_learning_curve", "log_through_bar", "RunLog", "FORMAT_VERSION", "CSV_FIELDS"]
