"""Head-to-head evaluation of two agents on the same seeded deals (``evaluate.py`` is its CLI).

Modes:

* ``"duplicate"`` (default): every deal is played under the six seatings of two agents
  over three seats, AAB ABA BAA BBA BAB ABB, with bidding and doubling on, so the luck
  of the cards cancels: each agent holds every seat, alone and in pairs, on every deal.
* ``"fixed-landlord"``: bidding and doubling off (the DouZero / RLCard protocol): on every
  deal A is landlord (at bid 1) against B as both farmers, then the same deal with the
  sides swapped; WP and ADP per side, to set beside published tables.

Hands are recorded (``arena.FIELDS``) and merged in deal order, and every figure is
computed from the merged records (``stats.py``), so a run is a function of the seed and
the agents alone: ``workers=N`` gives the numbers of ``workers=1``.
"""
from __future__ import annotations

import copy
import itertools
import os
import re
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ddz_env.rules import PRESETS, Rules

from .arena import COL, DEFAULT_TABLES, FIELDS, AgentError, Job, make_deal, play_hands
from ..base import as_batch_agent
from ..loader import load
from .stats import summarize, summarize_fixed

DUPLICATE_SEATINGS = ("AAB", "ABA", "BAA", "BBA", "BAB", "ABB")
MODES = ("duplicate", "fixed-landlord")
AgentSpec = Any  # a registered name, a checkpoint path, or an agent object


def resolve_agent(spec: AgentSpec):
    """An agent object from a spec (a name or path is loaded; an object is used as is)."""
    if isinstance(spec, (str, os.PathLike)):
        return load(spec)
    if not callable(getattr(spec, "act_batch", None)) and not callable(getattr(spec, "act", None)):
        raise TypeError(f"an agent is a name, a checkpoint path or an object with act_batch(decisions) or "
                        f"act(observation); got {spec!r}")
    return spec


def _label(spec: AgentSpec) -> str:
    return os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else repr(spec)


def file_label(label: str, limit: int = 24) -> str:
    """An agent's label as a short, file-system-safe part of a file name: ``rule``, ``pretrained``,
    ``runs_x_model.pt`` (letters, digits, ``. + -``; anything else ``_``; the last ``limit`` characters)."""
    safe = re.sub(r"[^A-Za-z0-9.+-]+", "_", label).strip("._") or "agent"
    return safe[-limit:].lstrip("._") or "agent"


def replay_name(index: int, labels: tuple[str, str], seats: Sequence[int]) -> str:
    """The file name of a hand record: the deal, then who sat where, ``deal000042-A-rule-B-random-seats-ABA.json``
    (``seats``: the agent, 0 for A and 1 for B, in seats 0, 1, 2)."""
    pattern = "".join("AB"[k] for k in seats)
    return f"deal{index:06d}-A-{file_label(labels[0])}-B-{file_label(labels[1])}-seats-{pattern}.json"


def jobs_for(seed: int, start: int, stop: int, mode: str) -> list[Job]:
    """The hands of deals [start, stop) in every seating, in (deal, seating) order; agent 0 is A, 1 is B."""
    jobs = []
    for i in range(start, stop):
        d = make_deal(seed, i)
        if mode == "fixed-landlord":  # seating 0: A landlord at the deal's landlord seat, B farmers; 1: swapped
            patterns = ["".join("A" if s == d.first_bidder else "B" for s in range(3)),
                        "".join("B" if s == d.first_bidder else "A" for s in range(3))]
        else:
            patterns = DUPLICATE_SEATINGS
        for k, p in enumerate(patterns):
            jobs.append(Job(i, k, d, tuple(0 if c == "A" else 1 for c in p)))
    return jobs


_CACHE: dict[str, Any] = {}  # per process: the agents of the current run
_RUNS = itertools.count()


class ReplayWriteError(OSError):
    """Saving the hand records failed (a full disk, a folder made read-only during the run).

    Every hand was still played: ``records`` holds all their rows, and :func:`evaluate` adds
    ``result``, the complete figures. ``saved`` records were written (each whole: a record is
    written through a temporary file), the others not."""

    def __init__(self, message: str, records: np.ndarray | None = None, saved: int = 0):
        super().__init__(message)
        self.records = np.zeros((0, len(FIELDS)), np.int64) if records is None else records
        self.saved = int(saved)
        self.result: dict | None = None

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self):  # (across processes: the evaluation's workers)
        return (type(self), (str(self), self.records, self.saved))


class ReplayWriter:
    """``on_history`` of :func:`~agents.evaluation.arena.play_hands` that saves each hand as a hand record
    (:mod:`ddz_env.record`) in ``folder``, named by the deal and who sat where (:func:`replay_name`:
    ``deal000042-A-rule-B-random-seats-BBA.json``), the players named by label.

    The hand is rebuilt on the scalar :class:`~ddz_env.game.Game` from its actions, and its scores
    must equal the batched env's: a mismatch raises (a rules bug, never seen). A record that cannot
    be written (``OSError``) stops the saving, not the play: ``error`` says which and why, ``saved``
    counts the records written."""

    def __init__(self, folder: str, labels: tuple[str, str], seed: int, mode: str, rules: Rules,
                 deals: int | None = None):
        self.folder, self.labels, self.seed, self.mode, self.rules = folder, labels, seed, mode, rules
        self.deals = deals  # save only the hands of deals 0 .. deals - 1 (None: all)
        self.saved = 0
        self.error: str | None = None

    def __call__(self, job: Job, actions: list, row: np.ndarray) -> None:
        from ddz_env.game import Game

        if self.error is not None or (self.deals is not None and job.index >= self.deals):
            return
        from ddz_env.files import write_failure
        from ddz_env.record import record_of, save

        game = Game.from_deal(job.deal, rules=self.rules)
        for s, a in actions:
            game.step(a, seat=s)
        want = row[COL["score0"]:COL["score2"] + 1].tolist()
        if not game.is_over or game.scores.tolist() != want:
            raise RuntimeError(f"deal {job.index} seating {job.seating}: the replayed hand scores "
                               f"{game.scores.tolist()}, the batched env {want}")
        players = [("A: " if k == 0 else "B: ") + self.labels[k] for k in job.seats]
        rec = record_of(game, players, {"seed": self.seed, "deal": job.index, "seating": job.seating,
                                        "mode": self.mode})
        name = replay_name(job.index, self.labels, job.seats)
        try:
            save(rec, os.path.join(self.folder, name))
        except OSError as e:
            self.error = f"{name}: {write_failure(e)}"
            return
        self.saved += 1


def _play_chunk(task: tuple, on_hand: Callable[[int], None] | None = None) -> tuple[np.ndarray, int, str | None]:
    """Play deals [start, stop) of a run in every seating: (rows in (deal, seating) order, hand
    records saved, the first record that could not be saved or None)."""
    run, spec_a, spec_b, labels, seed, mode, rules, start, stop, tables, replay_dir, replay_deals = task
    if _CACHE.get("run") != run:  # agents load once per run and process (private copies: streams keep state)
        _CACHE.clear()
        _CACHE["run"] = run
        _CACHE["agents"] = [as_batch_agent(copy.deepcopy(resolve_agent(s))) for s in (spec_a, spec_b)]
    writer = None
    if replay_dir is not None:
        writer = ReplayWriter(replay_dir, labels, seed, mode, rules, replay_deals)
    try:
        rows = play_hands(_CACHE["agents"], jobs_for(seed, start, stop, mode), seed, rules=rules, names=("A", "B"),
                          tables=tables, on_hand=on_hand, on_history=writer)
    finally:  # an agent holding a program or a connection (ext:, http:) lets it go; the next chunk takes it again
        for agent in _CACHE["agents"]:
            release = getattr(agent, "release", None)
            if callable(release):
                release()
    return rows, (writer.saved if writer else 0), (writer.error if writer else None)


def mode_rules(mode: str, rules: Rules | str | None = None) -> Rules:
    """The rules a mode plays under: ``rules`` (default the rulebook) in duplicate mode; the
    ``"douzero"`` preset (no bidding, no doubling) in fixed-landlord mode, whatever ``rules`` says."""
    return PRESETS["douzero"] if mode == "fixed-landlord" else Rules.of(rules)


def _one_thread() -> None:
    """Worker start: one math thread per process (N workers on N cores, no oversubscription)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


#: how often a worker looks whether the evaluation that started it is still there (seconds)
PARENT_CHECK_S = 0.5
#: Linux's prctl option: the signal this process gets when its parent ends
_PR_SET_PDEATHSIG = 1


def _worker_start(parent: int) -> None:
    """Worker start (the pool's initializer): one math thread, and the worker ends with its evaluation."""
    _one_thread()
    end_with_parent(parent)


def end_with_parent(parent: int, deathsig: bool = True, every: float = PARENT_CHECK_S) -> None:
    """Make this process (an evaluation worker) end when the process ``parent`` that started it is gone.

    A ``SIGKILL`` of the evaluation (a person's ``kill -9``, the out-of-memory killer) cannot be caught
    there, so its workers cannot be told to stop: each waited for its next chunk for ever, holding its
    agents' memory (364 MB a worker with ``pretrained``). So a worker watches for itself, two ways:

    * on Linux (``deathsig``), ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker when the
      thread that started it ends (the evaluation's: the pool lives within one call of it);
    * everywhere, a daemon thread that looks every ``every`` seconds whether the worker's parent is still
      ``parent`` (an orphan is adopted by another process: ``os.getppid()`` changes) and ends the process
      if not, in a chunk or between chunks alike. (On Windows the parent id does not change, and only
      the executor's own shutdown ends the workers.)

    A parent gone before this runs is seen at once (the death signal would never come)."""
    if deathsig and sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError, TypeError):  # (no libc prctl: the thread below still watches)
            pass
    if os.getppid() != parent:
        os._exit(1)
    import threading

    threading.Thread(target=_watch_parent, args=(parent, every), name="ddz-parent-watch", daemon=True).start()


def _watch_parent(parent: int, every: float) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)  # (nothing to save: the evaluation that wanted this worker's rows is gone)


def _chunks(deals: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous deal ranges: one for one worker (its tables refill as hands end), else ~4 per worker."""
    if workers == 1:
        return [(0, deals)]
    size = max(1, -(-deals // (workers * 4)))
    return [(s, min(s + size, deals)) for s in range(0, deals, size)]


def run_records(a: AgentSpec, b: AgentSpec, deals: int, seed: int = 0, mode: str = "duplicate",
                workers: int = 1, rules: Rules | str | None = None,
                on_progress: Callable[[int], None] | None = None, tables: int = DEFAULT_TABLES,
                replay_dir: str | os.PathLike | None = None, replay_deals: int | None = None,
                labels: tuple[str, str] | None = None) -> np.ndarray:
    """The hand records of a run, (deals * seatings, len(FIELDS)) int64 in (deal, seating) order;
    with ``replay_dir`` every hand (of the first ``replay_deals`` deals, if given) is also saved
    there as a hand record (:class:`ReplayWriter`), its players named by ``labels`` (default: the
    specs ``a`` and ``b`` as given, a name or a path; an object's repr).

    ``workers > 1`` where spawned workers could not play (a script read on standard input; an agent
    of a class defined in a program with no file: :func:`_no_workers_reason`) plays in this process
    instead, said in one line on standard error (the figures are the same: see the module's note).

    Raises ``TypeError`` before any worker starts for an agent object that cannot be pickled
    (:func:`check_sendable`), :class:`ReplayWriteError` after the play when a record could not be saved,
    and ``RuntimeError`` when a worker process dies (killed, out of memory) instead of waiting for it."""
    run = f"{os.getpid()}-{next(_RUNS)}"
    labels = (_label(a), _label(b)) if labels is None else (str(labels[0]), str(labels[1]))
    if replay_dir is not None:
        replay_dir = os.fspath(replay_dir)
        os.makedirs(replay_dir, exist_ok=True)
    rules = mode_rules(mode, rules)
    if workers > 1:
        reason = _no_workers_reason((a, b))
        if reason is not None:
            _notice_once(f"evaluation: the deals are played in this process, not in {workers} worker processes: "
                         f"{reason}")
            workers = 1
    if workers > 1:
        check_sendable((a, b), workers)
    tasks = [(run, a, b, labels, seed, mode, rules, s, e, tables, replay_dir, replay_deals)
             for s, e in _chunks(deals, workers)]
    per_deal = 2 if mode == "fixed-landlord" else len(DUPLICATE_SEATINGS)
    parts, saved, errors = [], 0, []

    def take(out: tuple) -> None:
        nonlocal saved
        parts.append(out[0])
        saved += out[1]
        if out[2] is not None:
            errors.append(out[2])

    try:
        if workers == 1:
            for t in tasks:
                take(_play_chunk(t, on_progress))
        else:
            _play_in_workers(tasks, workers, per_deal, take, on_progress)
    except AgentError as e:  # the hands finished before the error: the earlier chunks' and the failing one's
        e.records = np.concatenate(parts + [e.records]).reshape(-1, len(FIELDS))
        raise
    records = np.concatenate(parts).reshape(-1, len(FIELDS))
    if errors:
        wanted = (deals if replay_deals is None else min(deals, replay_deals)) * per_deal
        raise ReplayWriteError(f"saving hand records in {replay_dir} failed ({errors[0]}): {saved} of the {wanted} "
                               f"records were saved, each one whole, the others not", records, saved)
    return records


def _no_workers_reason(specs: Sequence[AgentSpec]) -> str | None:
    """Why spawned worker processes cannot play these specs, or None when they can.

    A spawned worker re-creates the parent's main module before it takes a task: by name after
    ``python -m``, else by running the main script's file again. A script read on standard input
    (``python - <<EOF``) has the file name '<stdin>' and no file, so every worker died at start and
    the run stopped as if killed. A program with no file at all (``python -c``, a notebook) is not
    re-run, so workers start, but an agent object of a class defined there cannot be rebuilt in
    them (its class is nowhere to import from), and the worker died the same way."""
    import multiprocessing.process

    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None
    path = getattr(main, "__file__", None)
    if path is not None:
        # as multiprocessing does: a relative path is taken from the folder the program started in
        full = os.path.join(multiprocessing.process.ORIGINAL_DIR or os.getcwd(), path)
        if os.path.isfile(full):
            return None
        return (f"the main script {path!r} has no file (read from standard input?), and each spawned worker "
                f"process runs the main script again from its file (save the script to a file to use workers)")
    for spec in specs:
        if not isinstance(spec, (str, os.PathLike)) and getattr(type(spec), "__module__", None) == "__main__":
            return (f"agent {_label(spec)} is of class {type(spec).__qualname__}, defined in a main program "
                    f"with no file, which spawned worker processes cannot import (define it in a module to use "
                    f"workers)")
    return None


def check_sendable(specs: Sequence[AgentSpec], workers: int) -> None:
    """``TypeError`` in one line naming the first agent of ``specs`` that cannot be sent to worker processes.

    Each worker gets its agents pickled (a name or a path is loaded there; an object is sent as it is).
    An object that cannot be pickled (a lambda or an open file among its attributes, a class defined
    inside a function) failed in the executor's feeder thread after the pool had started, and the
    evaluation then hung in some runs (2 of 6) instead of failing: so every spec is pickled here first,
    before any worker starts, with the pickler the workers' queue uses. (Nothing is checked where the
    deals would be played in this process anyway: :func:`_no_workers_reason`.)"""
    from multiprocessing.reduction import ForkingPickler

    if _no_workers_reason(specs) is not None:  # (run_records plays those in this process: nothing is sent)
        return
    for spec in specs:
        if isinstance(spec, (str, os.PathLike)):
            continue
        try:
            ForkingPickler.dumps(spec)
        except Exception as e:  # (pickle raises PicklingError, TypeError, AttributeError, or what a __reduce__ raises)
            why = str(e).splitlines()[0] if str(e) else ""
            raise TypeError(f"agent {_label(spec)} cannot be sent to {workers} worker processes: it cannot be "
                            f"pickled ({type(e).__name__}: {why}); play it with workers=1, or give a registered "
                            f"name or a checkpoint path, which each worker loads itself") from None


_NOTICES: set[str] = set()


def _notice_once(message: str) -> None:
    """One line on standard error, once per process (a league plays many pairs with the same specs)."""
    if message not in _NOTICES:
        _NOTICES.add(message)
        print(message, file=sys.stderr)


def _play_in_workers(tasks: list[tuple], workers: int, per_deal: int, take: Callable[[tuple], None],
                     on_progress: Callable[[int], None] | None) -> None:
    """The chunks on ``workers`` spawned processes, results taken in task order.

    A ``ProcessPoolExecutor``, not a ``multiprocessing.Pool``: a Pool replaces a worker that was
    killed but never returns its task, so the caller waited forever; the executor fails the
    run (``BrokenProcessPool``), said here as a ``RuntimeError``.

    The workers end with the evaluation however it stops: after an error they finish their chunk and
    leave; on Ctrl-C or ``SIGTERM`` (taken as Ctrl-C while the workers play: ``agents.runs.stop``, a
    :class:`~agents.runs.stop.Terminated` raised) they are ended at once (:func:`_end_workers`); after a
    ``SIGKILL`` of this process they end themselves (:func:`end_with_parent`)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from ..runs.stop import StopSignals

    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_worker_start,
                               initargs=(os.getpid(),))
    try:
        with StopSignals():
            futures = [pool.submit(_play_chunk, t) for t in tasks]
            for t, fut in zip(tasks, futures):
                try:
                    out = fut.result()
                except BrokenProcessPool:
                    raise RuntimeError(f"an evaluation worker process died (killed, or out of memory?) while deals "
                                       f"{t[7]}..{t[8] - 1} were played: the evaluation stops, no figures (run it "
                                       f"again; with fewer workers if memory is short)") from None
                take(out)
                if on_progress:
                    on_progress((t[8] - t[7]) * per_deal)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the workers stop now, not at the end of their chunks
        _end_workers(pool)
        raise
    finally:  # an error: the chunks not started are dropped, the running ones end with their chunk
        pool.shutdown(wait=True, cancel_futures=True)


def _end_workers(pool: Any, wait: float = 10.0) -> None:
    """End ``pool``'s worker processes now: ``SIGTERM``, then ``SIGKILL`` for any still there after ``wait``
    seconds (an agent that catches SIGTERM). What they were playing is dropped: the run is stopping."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        try:
            p.terminate()
        except (OSError, ValueError):  # (gone already, or closed)
            pass
    for p in processes:
        try:
            p.join(wait)
            if p.exitcode is None:
                p.kill()
                p.join(wait)
        except (OSError, ValueError):
            pass


def complete_deals(records: np.ndarray, per_deal: int) -> np.ndarray:
    """The records of the deals played in every seating, in (deal, seating) order."""
    if len(records) == 0:
        return records
    order = np.lexsort((records[:, COL["seating"]], records[:, COL["deal"]]))
    records = records[order]
    deals, counts = np.unique(records[:, COL["deal"]], return_counts=True)
    return records[np.isin(records[:, COL["deal"]], deals[counts == per_deal])]


def evaluate(a: AgentSpec, b: AgentSpec, deals: int = 2000, seed: int = 0, mode: str = "duplicate",
             workers: int = 1, rules: Rules | str | None = None, progress: bool = False, tables: int = DEFAULT_TABLES,
             replay_dir: str | os.PathLike | None = None, replay_deals: int | None = None) -> dict:
    """Play ``a`` against ``b`` on ``deals`` seeded deals and return every figure (JSON-ready).

    ``a`` / ``b``: a registered name (``"rule"``, ``"random"``), a checkpoint path, or an agent
    object (picklable when ``workers > 1``): a batch agent (``act_batch``) or anything with
    ``act(observation)``. Each worker plays its deals on ``tables`` tables of the batched env
    at once, each agent deciding all its pending decisions in one call. ``rules`` (a ``Rules``, a preset
    name or fields; default the rulebook) are the duplicate mode's; fixed-landlord mode plays the
    ``"douzero"`` preset (:func:`mode_rules`). ``progress`` shows a tqdm bar.
    ``replay_dir``: save every hand (of the first ``replay_deals`` deals, if given) as a hand record
    there (``ddz_env.record``; slower: each saved hand is replayed on the scalar ``Game``).
    See ``agents/evaluation/stats.py`` for what each figure means.

    Raises ``ValueError`` for a bad value or a ``replay_dir`` that cannot be written and ``TypeError``
    for an agent object that ``workers > 1`` cannot be sent to (one that cannot be pickled), before any
    hand; :class:`~agents.evaluation.arena.AgentError` when an agent fails (``partial``: the figures of the
    deals finished), :class:`ReplayWriteError` when records could not be saved during the run
    (``result``: the complete figures) and ``RuntimeError`` when a worker process dies.
    """
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(tables, bool) or not isinstance(tables, (int, np.integer)) or tables < 1:
        raise ValueError(f"tables must be a positive integer, got {tables!r}")
    deals, workers, seed = int(deals), int(workers), int(seed)
    rules = mode_rules(mode, rules)  # (a bad value fails here, before any agent loads)
    if replay_dir is not None:  # where the records go is checked before any hand is played
        from ddz_env.files import folder_problem

        problem = folder_problem(replay_dir)
        if problem is not None:
            raise ValueError(f"replay_dir {os.fspath(replay_dir)!r}: {problem}")
    # fail fast, here, on an unknown name or a bad checkpoint; one worker plays with copies of these
    # objects, several workers load the specs themselves
    agents = resolve_agent(a), resolve_agent(b)
    specs = agents if workers == 1 else (a, b)
    bar = None
    if progress:
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm comes with the 'train' extra: no bar without it
            tqdm = None
    if progress and tqdm is not None:
        per_deal = 2 if mode == "fixed-landlord" else len(DUPLICATE_SEATINGS)
        bar = tqdm(total=deals * per_deal, unit="hand", desc=f"{_label(a)} vs {_label(b)}", leave=False)
    config = {"a": _label(a), "b": _label(b), "deals": deals, "seed": seed, "mode": mode, "workers": workers,
              "rules": rules.name}

    def summary(records: np.ndarray) -> dict:
        return summarize_fixed(records) if mode == "fixed-landlord" else summarize(records, DUPLICATE_SEATINGS)

    try:
        records = run_records(*specs, deals, seed, mode, workers, rules, bar.update if bar else None, tables,
                              replay_dir, replay_deals, labels=(config["a"], config["b"]))
    except AgentError as e:  # keep what was played: the figures of the deals finished in every seating
        done = complete_deals(e.records, 2 if mode == "fixed-landlord" else len(DUPLICATE_SEATINGS))
        e.partial = {"config": config, **summary(done)} if len(done) else None
        raise
    except ReplayWriteError as e:  # every hand was played: the figures are complete, only records are missing
        e.result = {"config": config, **summary(e.records)}
        raise
    finally:
        if bar is not None:
            bar.close()
    return {"config": config, **summary(records)}


__all__ = ["evaluate", "run_records", "resolve_agent", "check_sendable", "end_with_parent", "ReplayWriter", "ReplayWriteError", "jobs_for", "complete_deals", "DUPLICATE_SEATINGS", "MODES"]
