"""Stopping a training run by signal, at a point where its state can be saved.

Ctrl-C (``SIGINT``) and ``SIGTERM`` (``kill``, a scheduler's stop, ``docker stop``) take the same
path: :class:`StopSignals`, installed by a training loop only while it trains (the previous
handlers are restored after), raises ``KeyboardInterrupt`` for the first and :class:`Terminated`
(a ``KeyboardInterrupt``) for the second, so every ``except KeyboardInterrupt`` that ends actors
and closes files serves both. A signal that arrives inside :meth:`StopSignals.update` (an update of
the weights, its counters and its bookkeeping) waits for that stretch to end, so the state the
learner then saves is the one after a whole update; the exception says so (``clean``). A second
signal does not wait: it cuts whatever runs, the save on stopping included (the checkpoint is
written whole or not at all, ``agents.runs.folder.write_checkpoint``). ``train.py`` exits 130
after Ctrl-C and 143 (128 + 15) after ``SIGTERM``.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

#: the exit status of a run stopped by Ctrl-C (128 + SIGINT) and by SIGTERM (128 + SIGTERM)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """The run got ``SIGTERM``: raised as Ctrl-C's ``KeyboardInterrupt`` is (the same path), exit 143."""


def exit_status(stop: KeyboardInterrupt) -> int:
    """The exit status of a run that ``stop`` ended: 143 after SIGTERM, else 130."""
    return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


class StopSignals:
    """``with StopSignals() as stop:`` SIGINT and SIGTERM raise ``KeyboardInterrupt`` / :class:`Terminated`
    in the main thread, at once, or at the end of the ``with stop.update():`` stretch they arrive in.

    The exception raised has ``clean``: True when it was raised outside such a stretch or at its end
    (the state is the one after a whole update), False when a second signal cut one. Installed only
    in the main thread (elsewhere Python delivers no signal), and not over a signal that is ignored
    (``SIG_IGN``: a background job's SIGINT) or whose handler was not set from Python."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.pending: int | None = None  # the first signal received
        self.depth = 0  # nested update() stretches running
        self.previous: dict[int, object] = {}

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                old = signal.getsignal(sig)
                if old is signal.SIG_IGN or old is None:
                    continue
                self.previous[sig] = old
                signal.signal(sig, self._received)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self.previous.items():
            signal.signal(sig, old)
        self.previous.clear()

    @staticmethod
    def exception(signum: int, clean: bool) -> KeyboardInterrupt:
        e = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        e.clean = clean
        return e

    def _received(self, signum: int, frame) -> None:
        if self.pending is None:
            self.pending = signum
            if self.depth > 0:
                return  # raised when the update ends
            raise self.exception(signum, clean=True)
        raise self.exception(signum, clean=self.depth == 0)  # a second signal: now

    @contextlib.contextmanager
    def update(self) -> Iterator[None]:
        """A stretch that a first signal does not cut: it is raised when the stretch ends."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
        if self.depth == 0 and self.pending is not None:
            raise self.exception(self.pending, clean=True)


__all__ = ["StopSignals", "Terminated", "exit_status", "EXIT_INTERRUPTED", "EXIT_TERMINATED"]
