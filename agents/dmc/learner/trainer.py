"""The DMC learner and its actors (DouZero's Deep Monte-Carlo, batched).

Read top to bottom:

1. :func:`learn`: one update. Every sample is (planes, action, net, target); each of the
   four networks regresses its own samples' Q(s, a) on the Monte-Carlo targets (MSE), one
   optimizer over all of them (the per-network losses are summed, so each network gets
   the gradient of its own mean loss).
2. :func:`train`: the learner. Batches come from an experience source (``sources.py``: inline
   in this process with ``num_actors: 0``, deterministic, and ``--resume`` continues bit for
   bit; actor processes over shared memory; or Ray actors on a cluster with ``backend: ray``);
   it learns on each and publishes the new weights. Its bookkeeping is a list of observers
   (``agents/runs/observers.py``: log rows, evaluations, the progress bar, checkpoints), called after
   every update; what they write lives apart: ``runlog.py`` (CSV log, learning curve),
   ``checkpoint.py`` (checkpoint files), ``periodic_eval.py`` (evaluation during training).
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..config import NET_NAMES, POSITIONS, TrainConfig, save_config
from .periodic_eval import TrainingEvaluator, eval_summary
from ..checkpoint import FORMAT_VERSION, checkpoint_dict, load_checkpoint, save_checkpoint
from .experience import Collector
from .runlog import CSV_FIELDS, RunLog, log_through_bar, plot_learning_curve  # noqa: F401 (CSV_FIELDS: re-export)
from ...runs.folder import CheckpointWriteError
from ...runs.observers import Checkpoints, Evaluations, LogRows, Progress, ProgressBar
from ...runs.stop import StopSignals
from .sources import InlineSource, make_source
from ..model import HAND_CLASSES, HIDDEN_CELLS, NUM_NETS, OBS_CELLS, DMCModel, make_model

log = logging.getLogger("dmc")


# ---------------------------------------------------------------------------------------------- learner
def make_optimizer(cfg: TrainConfig, model: torch.nn.Module) -> torch.optim.Optimizer:
    """Adam in its fused form (one kernel over all parameters: 9.6 against 7.3 updates per CPU-second of
    the default network in benchmarks/bench_train.py's setting), else the foreach form; or RMSprop."""
    if cfg.optimizer == "adam":
        try:
            return torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=cfg.optim_eps, fused=True)
        except (RuntimeError, TypeError):  # a device or an older torch without the fused kernel
            return torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=cfg.optim_eps)
    return torch.optim.RMSprop(model.parameters(), lr=cfg.lr, alpha=cfg.rmsprop_alpha, eps=cfg.optim_eps)


#: with a bf16 learner, each network's rows are padded up to a multiple of this (weight-0 rows): on a
#: CPU, oneDNN's bf16 kernels are built per matrix shape, and a batch's per-network row counts change at
#: every update (1.2 updates per CPU-second unpadded against 9.6 in fp32, on a CPU without AVX512-BF16)
BF16_BUCKET = 128


def _rows(sel: np.ndarray, bucket: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``sel`` padded to a multiple of ``bucket`` by repeating its first row, and the 0/1 weights (None: no
    padding)."""
    pad = -sel.size % bucket if bucket > 1 else 0
    if pad == 0:
        return sel, None
    w = np.ones(sel.size + pad, np.float32)
    w[sel.size:] = 0.0
    return np.concatenate([sel, np.full(pad, sel[0], sel.dtype)]), w


def decomposed_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-sample loss of a ``decomposed`` head (N, 5) on targets ``y`` = score / score_scale: the
    outcome's cross-entropy (won: y > 0, lost: y < 0, void: y == 0) plus the squared error of the
    value of the outcome that happened (V_won on won hands, V_lost on lost ones)."""
    outcome = torch.where(y > 0, 0, torch.where(y < 0, 1, 2))
    ce = torch.nn.functional.cross_entropy(out[:, :3], outcome, reduction="none")
    v = torch.where(y > 0, out[:, 3], out[:, 4])
    return ce + torch.where(outcome < 2, (v - y) ** 2, torch.zeros_like(y))


def learn(model: DMCModel, optimizer: torch.optim.Optimizer, batch: tuple[np.ndarray, ...], cfg: TrainConfig,
          device: torch.device) -> list[float]:
    """One update on a batch (obs int8 (N, 1740), action int32, net int8, target float32): losses per net.

    With ``hand_prediction`` > 0 the rows of ``obs`` carry the hidden-hand targets after the planes
    (N, 1770): each network's loss adds that weight times the cross-entropy of its predicted counts of
    the two other hands (the planes alone go into the networks)."""
    obs, action, net, target = batch
    rows_t = torch.from_numpy(obs).to(device, non_blocking=True)
    obs_t = rows_t[:, :OBS_CELLS]
    hidden_t = rows_t[:, OBS_CELLS:].long() if cfg.hand_prediction > 0 else None
    action_t = torch.from_numpy(action.astype(np.int64)).to(device, non_blocking=True)
    target_t = torch.from_numpy(target).to(device, non_blocking=True)
    losses = [math.nan] * NUM_NETS
    total = None
    parts = []
    bucket = BF16_BUCKET if cfg.precision == "bf16" else 1
    for n in range(NUM_NETS):
        sel = np.flatnonzero(net == n)
        if sel.size == 0:
            continue
        rows, weight = _rows(sel, bucket)
        sel_t = torch.from_numpy(rows).to(device)
        w = None if weight is None else torch.from_numpy(weight).to(device)
        with cfg.autocast():
            out = model.q_pairs(n, obs_t.index_select(0, sel_t), action_t.index_select(0, sel_t), raw=True,
                                with_hands=hidden_t is not None)
        if hidden_t is not None:
            out, logits = out
            ce = torch.nn.functional.cross_entropy(logits.float().reshape(-1, HAND_CLASSES),
                                                   hidden_t.index_select(0, sel_t).reshape(-1), reduction="none")
            ce = ce.reshape(-1, HIDDEN_CELLS).mean(1)
        out = out.float()
        y = target_t.index_select(0, sel_t)
        err = decomposed_loss(out, y) if model.decomposed else (out.squeeze(1) - y) ** 2
        if hidden_t is not None:
            err = err + cfg.hand_prediction * ce
        loss = torch.mean(err) if w is None else (err * w).sum() / sel.size
        parts.append((n, loss))
        total = loss if total is None else total + loss
    if not bool(torch.isfinite(total.detach())):
        raise ValueError(f"training diverged: non-finite loss ({', '.join(f'{NET_NAMES[n]} {float(loss.detach()):g}' for n, loss in parts)}); "
                         f"the last checkpoint holds the last good weights (try a lower lr)")
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
    optimizer.step()
    for n, loss in parts:
        losses[n] = float(loss.detach())
    return losses


# ---------------------------------------------------------------------------------------------- training
def train(cfg: TrainConfig, run_dir: str | os.PathLike, resume: dict[str, Any] | None = None,
          progress: bool = True) -> Path:
    """Train into ``run_dir`` (config.yaml, log.csv, checkpoint.pt, learning_curve.png); returns the checkpoint path.

    ``resume``: a checkpoint dict to continue from (its config is the one ``cfg`` should be).
    """
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"config key 'device': {cfg.device!r} but torch sees no CUDA device (use device=cpu)")
    cfg.check_agents()  # every agent spec it seats loads, before the run folder is made
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
        if frames >= cfg.total_frames or 0 < cfg.max_seconds <= elapsed0:
            log.warning("the run has already reached %s: nothing to train (--set %s=... to go on)",
                        f"total_frames {cfg.total_frames}" if frames >= cfg.total_frames
                        else f"max_seconds {cfg.max_seconds:g} ({elapsed0:.0f} s trained)",
                        "total_frames" if frames >= cfg.total_frames else "max_seconds")
    # the run folder and its config only once the state is in place (a refused resume changes nothing)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(cfg, run_dir / "config.yaml")
    ckpt_path = run_dir / "checkpoint.pt"
    runlog = RunLog(run_dir / "log.csv", resume_frames=frames if resume is not None else None,
                    every_frames=cfg.log_every_frames, every_seconds=cfg.log_every)
    t_start = time.perf_counter()

    def elapsed() -> float:
        return elapsed0 + time.perf_counter() - t_start

    progress_ = Progress(frames, updates, elapsed)
    saved_at = [updates if resume is not None else None]  # the updates that checkpoint.pt holds (None: no file)

    def save(p: Progress, kept: bool = True) -> None:
        """checkpoint.pt, and with keep_checkpoints a kept copy (``kept``: a save on frames, not on time)."""
        ck = checkpoint_dict(cfg, model, optimizer, p.frames, p.updates, p.elapsed(), collector)
        save_checkpoint(ck, ckpt_path)
        saved_at[0] = p.updates
        if cfg.keep_checkpoints and kept:
            save_checkpoint(ck, run_dir / f"checkpoint_{p.frames:012d}.pt")

    def keep(stop: KeyboardInterrupt) -> None:
        """Ctrl-C or SIGTERM stopped the run: save what it learned since the last checkpoint, unless a
        second signal cut an update (then the last checkpoint is the state to go on from). ``stop.saved``:
        the frames checkpoint.pt now holds (train.py's message says so)."""
        if not getattr(stop, "clean", False):
            return
        if saved_at[0] != progress_.updates and progress_.updates > 0:
            try:
                save(progress_, kept=False)
            except CheckpointWriteError as e:  # (the previous checkpoint is intact)
                log.warning("%s", e)
                return
        if saved_at[0] == progress_.updates:
            stop.saved = progress_.frames

    def line(at: int, row: dict) -> None:
        log.info("frames %d  fps %s  loss %s  return L/D/U %s/%s/%s%s", at,
                 f"{row['fps']:.0f}" if row["fps"] != "" else "-",
                 "/".join(str(row[f"loss_{n}"]) for n in NET_NAMES),
                 *(row[f"return_{p}"] for p in POSITIONS),
                 f"  vs opponents {row['score_vs_opponents']}" if row["score_vs_opponents"] != "" else "")

    # the bookkeeping, each its own observer (agents/runs/observers.py), called after every update in this
    # order, and closed in the second
    rows = LogRows(runlog, line)
    evals = (Evaluations(TrainingEvaluator(cfg, run_dir, frames if resume is not None else None), model,
                         cfg.eval_every, frames, log, at_start=cfg.eval_at_start) if cfg.eval_every else None)
    bar = (ProgressBar(cfg.total_frames, frames, cfg.batch_size, [logging.root, log], max_seconds=cfg.max_seconds)
           if progress else None)
    checkpoints = Checkpoints(save, cfg.checkpoint_every, frames, cfg.checkpoint_every_seconds)
    observers = [o for o in (rows, evals, bar, checkpoints) if o is not None]
    closing = [o for o in (bar, rows, checkpoints, evals) if o is not None]

    def done() -> bool:
        if progress_.frames >= cfg.total_frames:
            return True
        # the run's time over all its sessions (the checkpoint keeps it): a resumed one-hour run ends at its hour
        return cfg.max_seconds > 0 and elapsed() >= cfg.max_seconds

    source = make_source(cfg, model, frames, collector, run_dir)
    model.train()
    failed = True
    # Ctrl-C and SIGTERM (agents/runs/stop.py): one arriving during an update waits for its end, then the
    # run stops with the state of that update saved (keep); waiting for the actors' next batch is cut at once.
    # The inline source steps the tables that the checkpoint holds: its batch is part of the update.
    with StopSignals() as stop:
        try:
            while not done():
                with stop.update() if isinstance(source, InlineSource) else contextlib.nullcontext():
                    batch, stats = source.get()
                    with stop.update():
                        if not runlog.started:  # the first batch: fps counts from here, not the actors' start-up
                            runlog.start(progress_.frames)
                        losses = learn(model, optimizer, batch, cfg, device)
                        progress_.frames += cfg.batch_size
                        progress_.updates += 1
                        source.publish(model)
                        for o in observers:
                            o.update(progress_, losses, stats)
            failed = False
        except KeyboardInterrupt as e:  # (SIGTERM too: runs.stop.Terminated)
            keep(e)  # a second signal here leaves the previous checkpoint whole (write_checkpoint)
            raise
        finally:
            source.close()  # the actors end
            for o in closing:
                if failed:
                    with contextlib.suppress(Exception):  # the training error is the one to see
                        o.close(progress_, failed=True)
                else:
                    o.close(progress_, failed=False)
    try:  # a view, as TensorBoard: a full disk costs the picture, not the finished run
        plot_learning_curve(run_dir / "log.csv", run_dir / "learning_curve.png")
    except Exception as e:  # noqa: BLE001 - matplotlib and the disk fail in many ways
        log.warning("no learning-curve PNG (%s: %s); log.csv and eval.csv have its figures", type(e).__name__, e)
    log.info("done: %d frames in %.0f s; checkpoint %s", progress_.frames, elapsed(), ckpt_path)
    if cfg.eval_every:  # the evaluation panel of learning_curve.png, in words
        for line_ in eval_summary(run_dir / "eval.csv"):
            log.info("evaluations %s", line_)
    return ckpt_path


__all__ = ["train", "learn", "make_model", "make_optimizer", "checkpoint_dict", "save_checkpoint",
           "load_checkpoint", "plot_learning_curve", "log_through_bar", "RunLog", "FORMAT_VERSION", "CSV_FIELDS"]
