"""A learner's bookkeeping as observers: each job that watches training is its own small class.

A training loop keeps a :class:`Progress` (frames, updates, seconds) and, after every update, calls
``update(progress, losses, stats)`` on each of its observers, then ``close(progress, failed)`` once at
the end (``failed``: the loop raised). The observers of DMC's trainer (``agents/dmc/learner/trainer.py``),
in the order it calls them:

=====================  ====================================================================
:class:`LogRows`       ``log.csv`` rows and the log line, every ``log_every`` (``runlog.RunLog``)
:class:`Evaluations`   the evaluation during training every ``eval_every`` frames
                       (``periodic_eval.TrainingEvaluator``), the final one on ``close``
:class:`ProgressBar`   the tqdm bar toward what ends the run (log lines written through it)
:class:`Checkpoints`   ``checkpoint.pt`` every ``checkpoint_every`` frames or
                       ``checkpoint_every_seconds``, whichever comes first, and on ``close``
=====================  ====================================================================

Nothing here knows DMC: what a row, an evaluation or a checkpoint is comes in as objects and
callables, so a second learner reuses them (``agents/runs/library.py`` keeps its own segments).
"""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass
class Progress:
    """Where a training run stands: frames learned, updates made, seconds trained (all its sessions)."""

    frames: int = 0
    updates: int = 0
    elapsed: Callable[[], float] = lambda: 0.0


class Observer:
    """Watches a training loop (does nothing by default)."""

    def update(self, progress: Progress, losses: Sequence[float], stats: Any) -> None:
        """After each update."""

    def close(self, progress: Progress, failed: bool) -> None:
        """Once, at the end (``failed``: the loop raised; nothing slow then)."""


def every(step: int, now: int) -> int:
    """The next multiple of ``step`` after ``now``."""
    return (now // step + 1) * step


class Checkpoints(Observer):
    """``save(progress)`` every ``period`` frames or, with ``seconds`` > 0, once ``seconds`` have passed
    since the last save (or the start), whichever comes first; and at the end of a run
    that did not fail. ``save(progress, kept=False)`` is a save on time: the frames-based ones stay at
    the multiples of ``period``, where kept copies (``keep_checkpoints``) are taken."""

    #: the clock of ``seconds`` (a class attribute: a test replaces it with a fake one)
    clock = staticmethod(time.monotonic)

    def __init__(self, save: Callable[..., None], period: int, frames: int, seconds: float = 0.0):
        self.save, self.period, self.seconds = save, int(period), float(seconds)
        self.next = every(self.period, frames)
        self.last = self.clock()

    def update(self, progress: Progress, losses, stats) -> None:
        now = self.clock()  # (the state saved is this update's: the unsaved seconds count from here)
        if progress.frames >= self.next:
            self.save(progress)
            self.next = every(self.period, progress.frames)
            self.last = now
        elif self.seconds > 0 and now - self.last >= self.seconds:
            self.save(progress, kept=False)
            self.last = now

    def close(self, progress: Progress, failed: bool) -> None:
        if not failed:
            self.save(progress)


class Evaluations(Observer):
    """Submits the weights to ``evaluator`` (``poll`` / ``submit(model, frames, seconds)`` / ``close``) every
    ``period`` frames; the final weights at the end; in-flight evaluations dropped when the run failed. With
    ``at_start``, a run that starts from nothing also has its untrained weights evaluated (frames 0), so its
    curve starts where learning starts."""

    def __init__(self, evaluator: Any, model: Any, period: int, frames: int, log: logging.Logger,
                 at_start: bool = False):
        self.evaluator, self.model, self.period, self.log = evaluator, model, int(period), log
        self.next = every(self.period, frames)
        if at_start and frames == 0:
            self.evaluator.submit(self.model, 0, 0.0)

    def update(self, progress: Progress, losses, stats) -> None:
        self.evaluator.poll()
        if progress.frames >= self.next:
            self.evaluator.submit(self.model, progress.frames, progress.elapsed())
            self.next = every(self.period, progress.frames)

    def close(self, progress: Progress, failed: bool) -> None:
        if failed:
            self.evaluator.close(wait=False)
            return
        self.evaluator.submit(self.model, progress.frames, progress.elapsed())  # (not again when already done)
        self.log.info("waiting for %d evaluation(s) to finish", len(self.evaluator.pending))
        self.evaluator.close(wait=True)


class ProgressBar(Observer):
    """A tqdm bar toward what ends the run: ``total`` frames or, with ``max_seconds`` > 0, that many seconds
    of training (its sessions together), whichever comes first at the rate so far; log lines go through it
    while it is up. It reads, for a one-hour run that ``max_seconds`` ends::

         2%|▏         | 01:09<58:51 to max_seconds 3600; 207k/200M frames, 4.76k fr/s

    and ``to total_frames`` with the frames' ETA where the frames run out first."""

    #: seconds between two redraws (the bar is redrawn at most this often, and on close)
    redraw = 0.2

    def __init__(self, total: int, initial: int, per_update: int, loggers: Sequence[logging.Logger],
                 max_seconds: float = 0.0):
        from tqdm import tqdm

        from .log import log_through_bar

        self.total, self.per_update, self.max_seconds = int(total), int(per_update), float(max_seconds)
        self.tqdm = tqdm
        self.first: tuple[int, float] | None = None  # (frames, seconds) at the first update: the rate counts from there
        self.drawn = -float("inf")
        self.bar = tqdm(total=1000, initial=0, dynamic_ncols=True, bar_format="{percentage:3.0f}%|{bar}| {desc}")
        self.logs = contextlib.ExitStack()
        self.logs.enter_context(log_through_bar(tqdm, list(loggers)))
        self.bar.set_description_str(f"{self._count(initial)} frames, starting", refresh=True)

    def _count(self, frames: int) -> str:
        def fmt(n: int) -> str:
            return self.tqdm.format_sizeof(n) if n >= 1000 else str(n)

        return f"{fmt(min(frames, self.total))}/{fmt(self.total)}"

    def describe(self, frames: int, seconds: float) -> tuple[float, str]:
        """The fraction of the run done and the bar's text, ``frames`` learned after ``seconds`` of training."""
        if self.first is None:
            self.first = (frames, seconds)
        f0, s0 = self.first
        fps = (frames - f0) / (seconds - s0) if seconds > s0 and frames > f0 else None
        left_frames = max(0, self.total - frames)
        by_frames = left_frames / fps if fps else (0.0 if left_frames == 0 else None)
        by_time = max(0.0, self.max_seconds - seconds) if self.max_seconds > 0 else None
        timed = by_time is not None and (by_frames is None or by_time < by_frames)
        fraction = min(1.0, seconds / self.max_seconds) if timed else min(1.0, frames / self.total)
        left = by_time if timed else by_frames
        fmt = self.tqdm.format_interval
        goal = f"max_seconds {self.max_seconds:g}" if timed else "total_frames"
        rate = f"{self.tqdm.format_sizeof(fps)} fr/s" if fps else "? fr/s"
        return fraction, (f"{fmt(seconds)}<{fmt(left) if left is not None else '?'} to {goal}; "
                          f"{self._count(frames)} frames, {rate}")

    def _draw(self, progress: Progress, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self.drawn < self.redraw:
            return
        self.drawn = now
        fraction, text = self.describe(progress.frames, progress.elapsed())
        self.bar.n = round(1000 * fraction)
        self.bar.set_description_str(text, refresh=True)

    def update(self, progress: Progress, losses, stats) -> None:
        self._draw(progress, force=self.first is None)

    def close(self, progress: Progress, failed: bool) -> None:
        if not failed:
            self._draw(progress, force=True)
        self.bar.close()
        self.logs.close()


class LogRows(Observer):
    """Adds each update to ``runlog`` (``add``, ``due``, ``write``: ``agents/dmc/learner/runlog.py``) and
    writes a row and ``line(row)`` when due; the last row at the end."""

    def __init__(self, runlog: Any, line: Callable[[int, dict], None]):
        self.runlog, self.line = runlog, line

    def update(self, progress: Progress, losses, stats) -> None:
        self.runlog.add(losses, stats)
        if self.runlog.due(progress.frames):
            self.line(progress.frames, self.runlog.write(progress.elapsed(), progress.frames, progress.updates))

    def close(self, progress: Progress, failed: bool) -> None:
        if not failed and progress.frames != self.runlog.last_frames:  # the final row, unless the last update wrote it
            self.runlog.write(progress.elapsed(), progress.frames, progress.updates)
        self.runlog.close()


__all__ = ["Progress", "Observer", "Checkpoints", "Evaluations", "ProgressBar", "LogRows", "every"]
