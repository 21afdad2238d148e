"""One training call of a library learner: what every adapter's ``train(seconds, run_dir, ...)`` shares.

A learner trains to a budget that spans its resumes: ``seconds`` of wall time and, when given, ``decisions``
learned from, whichever is spent first (a test or a comparison at equal work stops on decisions, which
hold on a busy machine as on a quiet one). :class:`Session` owns, once for all learners:

==================  ====================================================================================
the clocks          decisions, wall and CPU seconds so far, read back from ``state.json`` on resume
                    (with the learner's own counters, such as batches or iterations)
the cadences        a checkpoint every ``checkpoint_seconds`` and a progress line every
                    ``progress_seconds`` (:meth:`tick`), in the same words for every learner, with a
                    row of the learner's diagnostics in ``diagnostics.csv`` (losses, entropy, KL...)
the budget          :meth:`running`: until either budget is spent, and at least one update in a call that
                    starts below it (a slow start-up on a loaded machine would otherwise train nothing)
the start           :meth:`keeping`: with the run's ``eval_at_start``, the untrained policy evaluated first
the end             :meth:`finish`: the last checkpoint, the closing line, ``train``'s result
the stops           :meth:`keeping`: on Ctrl-C (SIGTERM too, where ``train.py`` turns it into one) or a
                    :class:`LearnerStopped` (a collector process died), a last checkpoint of the work so
                    far before the stop goes on, so ``--resume`` loses at most the update under way
==================  ====================================================================================

The learner says how to save its own state and the ``policy.pt`` export (a ``save`` callable); the session
writes ``state.json`` after it, atomically: it vouches for the files beside it.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any, Callable, Iterator

from ddz_env.files import write_text

STATE_JSON, POLICY_FILE, DIAGNOSTICS_CSV = "state.json", "policy.pt", "diagnostics.csv"


class LearnerStopped(RuntimeError):
    """A learner cannot go on, through no fault of its state (a collector process died: killed, out of
    memory): its last checkpoint is written and the run can resume. ``train.py`` says so in one line."""


def _read_state(path: str, library: str) -> dict:
    """``state.json``'s counts: a regular file of at most 1 MiB (a FIFO would block a resume for ever), a JSON
    object of numbers; else ``ValueError`` in one line."""
    from ddz_env.files import input_file

    try:
        with open(input_file(path, f"{library}: the learner state", max_bytes=1 << 20), encoding="utf-8") as f:
            data = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{library}: cannot resume: {path} is not JSON ({e})") from None
    except FileNotFoundError as e:
        raise ValueError(f"{library}: cannot resume: {e}") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             for v in data.values()) or "steps" not in data:
        raise ValueError(f"{library}: cannot resume: {path} is not a learner's state (an object of counts with "
                         f"'steps')")
    return data


def _torch_write_error(e: RuntimeError) -> bool:
    """Whether ``e`` is torch's C++ writer failing to write a file (how ``torch.save`` reports a full disk)."""
    text = str(e)
    return any(w in text for w in ("PytorchStreamWriter", "inline_container", "unexpected pos", "file write failed"))


class Cadence:
    """The run's evaluations inside a learner's training (``train(..., cadence=...)``): ``evaluate(decisions,
    seconds)`` every ``every_seconds`` of training and every ``every_decisions`` learned (0: not by that), the
    first due after ``last`` (the run's last evaluation, ``(seconds, decisions)``). The learner calls it from
    :meth:`Session.tick` after an update, with its state saved, so a library starts once a run (Ray's start,
    about 20 s, once) and the evaluation's time is not training's."""

    def __init__(self, evaluate: Callable[[int, float], None], every_seconds: float = 0.0, every_decisions: int = 0,
                 last: tuple[float, int] = (0.0, 0), at_start: bool = False):
        self.evaluate, self.every_seconds, self.every_decisions = evaluate, float(every_seconds), int(every_decisions)
        self.at_start = bool(at_start)  # evaluate the untrained policy (when the run starts at 0 decisions)
        self.passed({"wall_seconds": last[0], "steps": last[1]})

    def passed(self, t: dict) -> None:
        """The next evaluation points after an evaluation at ``t`` (seconds, decisions)."""
        s, d = float(t["wall_seconds"]), int(t["steps"])
        self.next_seconds = (int(s // self.every_seconds) + 1) * self.every_seconds if self.every_seconds else float("inf")
        self.next_decisions = (d // self.every_decisions + 1) * self.every_decisions if self.every_decisions else None

    def due(self, t: dict) -> bool:
        return t["wall_seconds"] >= self.next_seconds or (self.next_decisions is not None
                                                          and t["steps"] >= self.next_decisions)


class Session:
    """The clocks, cadences and budget of one ``train`` call (see the module doc).

    ``state_files``: the learner's own files that must be in ``run_dir`` for ``resume`` to continue (with
    ``state.json``); ``counters``: its own counts kept across resumes (``{"batches": 0}``)."""

    def __init__(self, library: str, run_dir: str | os.PathLike, seconds: float, *, resume: bool, progress: bool,
                 state_files: tuple[str, ...] = (), counters: dict[str, int] | None = None,
                 checkpoint_seconds: float = 120.0, progress_seconds: float = 30.0, decisions: int | None = None,
                 cadence: "Cadence | None" = None, clock: Callable[[], float] = time.time):
        self.clock, self.cadence = clock, cadence
        if decisions is not None and (isinstance(decisions, bool) or not isinstance(decisions, int) or decisions < 1):
            raise ValueError(f"{library}: decisions must be a positive integer or None, got {decisions!r}")
        if not float(seconds) > 0:
            raise ValueError(f"{library}: seconds must be positive (float('inf'): no time limit), got {seconds!r}")
        self.library, self.seconds, self.progress = library, float(seconds), progress
        self.decisions = decisions
        self.checkpoint_seconds, self.progress_seconds = float(checkpoint_seconds), float(progress_seconds)
        self.run_dir = os.path.abspath(os.fspath(run_dir))
        os.makedirs(self.run_dir, exist_ok=True)
        self.done: dict[str, Any] = {"steps": 0, "wall_seconds": 0.0, "cpu_seconds": 0.0, **(counters or {})}
        needed = [self.path(STATE_JSON)] + [self.path(f) for f in state_files]
        present = [os.path.lexists(p) for p in needed]
        if resume and any(present) and not all(present):  # (never a silent restart from random weights)
            missing = ", ".join(os.path.basename(p) for p, here in zip(needed, present) if not here)
            raise ValueError(f"{library}: cannot resume {self.run_dir}: its learner state is incomplete ({missing} "
                             f"missing); restore the run folder's files, or start a new run")
        self.resuming = bool(resume) and all(present)
        if self.resuming:
            self.done.update(_read_state(self.path(STATE_JSON), library))
        elif resume and progress:
            print(f"{library}: nothing to resume in {self.run_dir}: starting afresh", flush=True)
        self.wall0, self.cpu0 = self.clock(), time.process_time()
        self.saved = self.shown = self.clock()
        self.shown_steps = self.first_steps = int(self.done["steps"])

    def path(self, name: str) -> str:
        return os.path.join(self.run_dir, name)

    @property
    def policy_path(self) -> str:
        return self.path(POLICY_FILE)

    def restart_clock(self) -> None:
        """Start the wall clock now (a library's own start-up, e.g. Ray's, is not training time)."""
        self.wall0 = self.saved = self.shown = self.clock()

    def totals(self) -> dict:
        """The counts so far, this call's time included."""
        return {**self.done, "wall_seconds": self.done["wall_seconds"] + self.clock() - self.wall0,
                "cpu_seconds": self.done["cpu_seconds"] + time.process_time() - self.cpu0}

    def running(self) -> bool:
        """Whether to train on: neither budget spent, or no update yet in a call that started below them."""
        if self.done["wall_seconds"] >= self.seconds:
            return False
        if self.decisions is not None and self.done["steps"] >= self.decisions:
            return False
        return self.totals()["wall_seconds"] < self.seconds or self.done["steps"] == self.first_steps

    def write_state(self) -> None:
        write_text(self.path(STATE_JSON), json.dumps(self.totals()))

    def save(self, save: Callable[[], None]) -> None:
        """The learner's files (``save``), then ``state.json``. A write that fails (a full disk: ``OSError``, or
        torch's writer's ``RuntimeError``) is a :class:`~agents.runs.folder.CheckpointWriteError` in one line:
        each file is written whole or not at all, and ``state.json`` last, so the last checkpoint is whole."""
        from ddz_env.files import write_failure

        try:
            save()
            self.write_state()
        except (OSError, RuntimeError) as e:
            if isinstance(e, RuntimeError) and not _torch_write_error(e):
                raise
            from .folder import CheckpointWriteError

            raise CheckpointWriteError(f"{self.library}: writing the learner's state in {self.run_dir} failed "
                                       f"({write_failure(e)}); its last checkpoint is whole") from None
        self.saved = self.clock()

    def tick(self, save: Callable[[], None], extra: Callable[[], str] | None = None,
             diagnostics: Callable[[], dict[str, float]] | None = None) -> None:
        """After an update: a checkpoint, and a progress line with a row of the learner's ``diagnostics``
        (losses, entropy, KL...: ``diagnostics.csv``, one row a progress period), when their periods are up;
        the run's evaluation when the cadence says (its time and CPU are not training's)."""
        if self.cadence is not None and self.cadence.due(self.totals()):
            self.save(save)  # (policy.pt: the policy evaluated)
            t = self.totals()
            self.done.update(wall_seconds=t["wall_seconds"], cpu_seconds=t["cpu_seconds"])
            self.wall0, self.cpu0 = self.clock(), time.process_time()  # (folded in: a stop now counts it once)
            self.cadence.evaluate(int(t["steps"]), float(t["wall_seconds"]))
            self.cadence.passed(t)
            self.wall0, self.cpu0 = self.clock(), time.process_time()  # (the clocks go on after the evaluation)
            self.saved = self.shown = self.clock()
        now = self.clock()
        if now - self.saved >= self.checkpoint_seconds:
            self.save(save)
        if diagnostics is not None and now - self.shown >= self.progress_seconds:
            t = self.totals()
            self.log_diagnostics({"decisions": t["steps"], "wall_seconds": round(t["wall_seconds"], 1),
                                  **{k: round(float(v), 5) for k, v in diagnostics().items()}})
            if not self.progress:
                self.shown = now
        if self.progress and now - self.shown >= self.progress_seconds:
            t = self.totals()
            rate = (t["steps"] - self.shown_steps) / max(now - self.shown, 1e-9)
            more = extra() if extra is not None else ""
            print(f"{self.library}: {t['steps']:,}{self._of_decisions()} decisions learned, {t['wall_seconds']:.0f}"
                  f"{self._of_seconds()} s, {rate:,.0f} decisions/s{self.eta(t, rate)}{'; ' + more if more else ''}",
                  flush=True)
            self.shown, self.shown_steps = now, t["steps"]

    def eta(self, t: dict, rate: float) -> str:
        """``", ETA 12m 30s"``: the wall time left to the first budget the run reaches at ``rate`` decisions a
        second (its seconds, or its decisions); empty when neither can be told."""
        left = [self.seconds - t["wall_seconds"]] if self.seconds != float("inf") else []
        if self.decisions is not None and rate > 0:
            left.append((self.decisions - t["steps"]) / rate)
        if not left:
            return ""
        s = max(0, int(round(min(left))))
        return f", ETA {s // 3600}h {s // 60 % 60:02d}m" if s >= 3600 else f", ETA {s // 60}m {s % 60:02d}s"

    def log_diagnostics(self, row: dict[str, Any]) -> None:
        """One row of ``diagnostics.csv`` (its header from the first row; appended whole)."""
        import csv
        import io

        path = self.path(DIAGNOSTICS_CSV)
        old = open(path, encoding="utf-8").read() if os.path.isfile(path) else ""
        fields = next(csv.reader([old.splitlines()[0]])) if old else list(row)
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore")
        if not old:
            w.writeheader()
        w.writerow(row)
        write_text(path, old + buf.getvalue())

    def _of_decisions(self) -> str:
        return f" of {self.decisions:,}" if self.decisions is not None else ""

    def _of_seconds(self) -> str:
        return f" of {self.seconds:.0f}" if self.seconds != float("inf") else ""

    @contextlib.contextmanager
    def keeping(self, save: Callable[[], None]) -> Iterator[None]:
        """The training loop's block. Entering it, a run that asks for ``eval_at_start`` and has learned nothing
        yet evaluates the untrained policy; a stop inside it (Ctrl-C, :class:`LearnerStopped`) writes the
        learner's files and ``state.json`` once more before it goes on (a failed write leaves the last
        checkpoint, whole)."""
        if self.cadence is not None and self.cadence.at_start and int(self.done["steps"]) == 0:
            self.save(save)  # (policy.pt: the untrained policy, evaluated at 0 decisions: the curve's first point)
            self.cadence.at_start = False
            self.cadence.evaluate(0, float(self.done["wall_seconds"]))
            self.wall0, self.cpu0 = self.clock(), time.process_time()  # (the evaluation is not training time)
            self.saved = self.shown = self.clock()
        try:
            yield
        except (KeyboardInterrupt, LearnerStopped):
            with contextlib.suppress(Exception):
                self.save(save)
            raise

    def finish(self, save: Callable[[], None]) -> dict:
        """The last checkpoint and the closing line; ``train``'s result."""
        self.save(save)
        t = self.totals()
        if self.progress:
            print(f"{self.library}: trained to {t['steps']:,} decisions in {t['wall_seconds']:.0f} s (CPU "
                  f"{t['cpu_seconds']:.0f} s); policy {self.policy_path}", flush=True)
        return {**t, "policy": self.policy_path}


__all__ = ["Session", "Cadence", "LearnerStopped", "STATE_JSON", "POLICY_FILE", "DIAGNOSTICS_CSV"]
