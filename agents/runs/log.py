"""Logging around a training loop, for any trainer: log lines written through the progress bar, and
TensorBoard scalars when TensorBoard is installed."""
from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path


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


def summary_writer(folder: Path, log: logging.Logger):
    """A TensorBoard writer into ``folder``, or None (with one line in ``log``) when TensorBoard is missing."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        log.info("tensorboard is not installed: no TensorBoard scalars (pip install 'ddz-env[tensorboard]'); "
                 "log.csv has them all")
        return None
    return SummaryWriter(str(folder))


__all__ = ["log_through_bar", "summary_writer"]
