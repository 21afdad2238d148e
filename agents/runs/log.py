"""Logging around a training loop, for any trainer: log lines written through the progress bar, and
TensorBoard scalars when TensorBoard is installed (a view: its failures never stop a run)."""
from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path

from .._entry import install_extra


def _is_console(h: logging.Handler) -> bool:
    return isinstance(h, logging.StreamHandler) and getattr(h, "stream", None) in (sys.stdout, sys.stderr)


@contextlib.contextmanager
def log_through_bar(tqdm_cls, loggers: list[logging.Logger]):
    """While a progress bar is drawn, the console handlers of ``loggers`` write through ``tqdm_cls.write``
    (tqdm's own ``logging_redirect_tqdm``); other handlers (files) are untouched. Only loggers that have a
    console handler are redirected (a redirected logger without one would print its records twice, once
    more through the root's); with none, the root logger gets the bar's handler."""
    from tqdm.contrib.logging import logging_redirect_tqdm

    console = [lg for lg in loggers if any(_is_console(h) for h in lg.handlers)] or [logging.root]
    with logging_redirect_tqdm(loggers=console, tqdm_class=tqdm_cls):
        yield


def _quiet_writer_threads() -> None:
    """TensorBoard's writer thread re-raises a failed write (the main thread gets it at its next call, where
    :class:`TensorBoardView` turns the view off with one line); without this its traceback would also be
    printed by ``threading.excepthook``. Other threads' exceptions go to the hook as before. Idempotent."""
    import threading

    hook = threading.excepthook
    if getattr(hook, "_ddz_quiet_tensorboard", False):
        return

    def quiet(args):
        if type(args.thread).__module__.startswith("tensorboard.summary.writer"):
            return
        hook(args)

    quiet._ddz_quiet_tensorboard = True
    threading.excepthook = quiet


#: the TensorBoard folders whose run was told that tensorboard is not installed (a run opens two views into one)
_TOLD_MISSING: set[str] = set()


class TensorBoardView:
    """TensorBoard scalars as a view of the run, never a part of it: a failure of its folder (read-only, a
    full disk, made read-only mid-run, a file in its place) turns it off with one warning line, and the run
    goes on and checkpoints (before, such a failure ended training in a traceback with no checkpoint).
    ``add_scalar`` / ``flush`` / ``close`` as ``SummaryWriter``'s; each does nothing once it is off. The
    writer's own thread reports a failed write at the next call, which is where it is caught."""

    def __init__(self, folder: Path, log: logging.Logger):
        self.log = log
        self.writer = None
        self.off = False
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            self.off = True
            if str(folder) not in _TOLD_MISSING:  # (the training log's view and the evaluator's: said once a run)
                _TOLD_MISSING.add(str(folder))
                log.info(f"tensorboard is not installed: no TensorBoard scalars ({install_extra('tensorboard')}); "
                         "log.csv has them all")
            return
        _quiet_writer_threads()
        self._guard(lambda: setattr(self, "writer", SummaryWriter(str(folder))))

    def _guard(self, call) -> None:
        if self.off:
            return
        try:
            call()
        except Exception as e:  # noqa: BLE001 - any failure of the view (OSError, the writer thread's errors)
            self.off = True
            self.log.warning("TensorBoard is off for the rest of the run (%s: %s); the run goes on, log.csv and "
                             "eval.csv keep every figure", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            writer, self.writer = self.writer, None
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        if self.writer is not None:
            self._guard(lambda: self.writer.add_scalar(tag, value, step))

    def flush(self) -> None:
        if self.writer is not None:
            self._guard(self.writer.flush)

    def close(self) -> None:
        if self.writer is not None:
            self._guard(self.writer.close)
            self.writer = None


def summary_writer(folder: Path, log: logging.Logger) -> TensorBoardView | None:
    """A :class:`TensorBoardView` into ``folder``, or None (with one line in ``log``) when TensorBoard is
    missing or its folder cannot be made (one warning)."""
    view = TensorBoardView(folder, log)
    return None if view.off else view


__all__ = ["log_through_bar", "summary_writer", "TensorBoardView"]
