"""A learner's bookkeeping as observers: each job that watches training is its own small class.

A training loop keeps a :class:`Progress` (frames, updates, seconds) and, after every update, calls
``update(progress, losses, stats)`` on each of its observers, then ``close(progress, failed)`` once at
the end (``failed``: the loop raised). The observers of DMC's trainer (``agents/dmc/learner/trainer.py``),
in the order it calls them:

=====================  ====================================================================
:class:`LogRows`       ``log.csv`` rows and the log line, every ``log_every`` (``runlog.RunLog``)
:class:`Evaluations`   the evaluation during training every ``eval_every`` frames
                       (``periodic_eval.TrainingEvaluator``), the final one on ``close``
:class:`ProgressBar`   the tqdm bar (log lines written through it while it is drawn)
:class:`Checkpoints`   ``checkpoint.pt`` every ``checkpoint_every`` frames and on ``close``
=====================  ====================================================================

Nothing here knows DMC: what a row, an evaluation or a checkpoint is comes in as objects and
callables, so a second learner reuses them (``agents/integrations/runner.py`` keeps its own segments).
"""
from __future__ import annotations

import contextlib
import logging
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
    """``save(progress)`` every ``period`` frames and at the end of a run that did not fail."""

    def __init__(self, save: Callable[[Progress], None], period: int, frames: int):
        self.save, self.period = save, int(period)
        self.next = every(self.period, frames)

    def update(self, progress: Progress, losses, stats) -> None:
        if progress.frames >= self.next:
            self.save(progress)
            self.next = every(self.period, progress.frames)

    def close(self, progress: Progress, failed: bool) -> None:
        if not failed:
            self.save(progress)


class Evaluations(Observer):
    """Submits the weights to ``evaluator`` (``poll`` / ``submit(model, frames, seconds)`` / ``close``) every
    ``period`` frames; the final weights at the end; in-flight evaluations dropped when the run failed."""

    def __init__(self, evaluator: Any, model: Any, period: int, frames: int, log: logging.Logger):
        self.evaluator, self.model, self.period, self.log = evaluator, model, int(period), log
        self.next = every(self.period, frames)

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
    """A tqdm bar of ``total`` frames, ``per_update`` frames a step; log lines go through it while it is up."""

    def __init__(self, total: int, initial: int, per_update: int, loggers: Sequence[logging.Logger]):
        from tqdm import tqdm

        from .log import log_through_bar

        self.total, self.per_update = int(total), int(per_update)
        self.bar = tqdm(total=self.total, initial=initial, unit="fr", unit_scale=True, dynamic_ncols=True)
        self.logs = contextlib.ExitStack()
        self.logs.enter_context(log_through_bar(tqdm, list(loggers)))

    def update(self, progress: Progress, losses, stats) -> None:
        # (the last batch may pass the total: the bar stops at it)
        self.bar.update(max(0, min(self.per_update, self.total - self.bar.n)))

    def close(self, progress: Progress, failed: bool) -> None:
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
