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
import sys
from typing import Any, Callable

import numpy as np

from ddz_env.rules import PRESETS, Rules

from .arena import COL, DEFAULT_TABLES, FIELDS, AgentError, Job, make_deal, play_hands
from .base import as_batch_agent
from .loader import load
from .stats import summarize, summarize_fixed

DUPLICATE_SEATINGS = ("AAB", "ABA", "BAA", "BBA", "BAB", "ABB")
MODES = ("duplicate", "fixed-landlord")
AgentSpec = Any  # a registered name, a checkpoint path, or an agent object


def _resolve(spec: AgentSpec):
    """An agent object from a spec (a name or path is loaded; an object is used as is)."""
    if isinstance(spec, (str, os.PathLike)):
        return load(spec)
    if not callable(getattr(spec, "act_batch", None)) and not callable(getattr(spec, "act", None)):
        raise TypeError(f"an agent is a name, a checkpoint path or an object with act_batch(decisions) or "
                        f"act(observation); got {spec!r}")
    return spec


def _label(spec: AgentSpec) -> str:
    return os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else repr(spec)


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


class ReplayWriter:
    """``on_history`` of :func:`~agents.arena.play_hands` that saves each hand as a hand record
    (:mod:`ddz_env.record`) in ``folder``: ``deal000042-seating3.json``, the players named by label.

    The hand is rebuilt on the scalar :class:`~ddz_env.game.Game` from its actions, and its scores
    must equal the batched env's: a mismatch raises (a rules bug, never seen)."""

    def __init__(self, folder: str, labels: tuple[str, str], seed: int, mode: str, rules: Rules,
                 deals: int | None = None):
        self.folder, self.labels, self.seed, self.mode, self.rules = folder, labels, seed, mode, rules
        self.deals = deals  # save only the hands of deals 0 .. deals - 1 (None: all)

    def __call__(self, job: Job, actions: list, row: np.ndarray) -> None:
        from ddz_env.game import Game

        if self.deals is not None and job.index >= self.deals:
            return
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
        save(rec, os.path.join(self.folder, f"deal{job.index:06d}-seating{job.seating}.json"))


def _play_chunk(task: tuple, on_hand: Callable[[int], None] | None = None) -> np.ndarray:
    """Play deals [start, stop) of a run in every seating; rows in (deal, seating) order."""
    run, spec_a, spec_b, seed, mode, rules, start, stop, tables, replay_dir, replay_deals = task
    if _CACHE.get("run") != run:  # agents load once per run and process (private copies: streams keep state)
        _CACHE.clear()
        _CACHE["run"] = run
        _CACHE["agents"] = [as_batch_agent(copy.deepcopy(_resolve(s))) for s in (spec_a, spec_b)]
    writer = None
    if replay_dir is not None:
        writer = ReplayWriter(replay_dir, (_label(spec_a), _label(spec_b)), seed, mode, rules, replay_deals)
    return play_hands(_CACHE["agents"], jobs_for(seed, start, stop, mode), seed, rules=rules, names=("A", "B"),
                      tables=tables, on_hand=on_hand, on_history=writer)


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


def _chunks(deals: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous deal ranges: one for one worker (its tables refill as hands end), else ~4 per worker."""
    if workers == 1:
        return [(0, deals)]
    size = max(1, -(-deals // (workers * 4)))
    return [(s, min(s + size, deals)) for s in range(0, deals, size)]


def run_records(a: AgentSpec, b: AgentSpec, deals: int, seed: int = 0, mode: str = "duplicate",
                workers: int = 1, rules: Rules | str | None = None,
                on_progress: Callable[[int], None] | None = None, tables: int = DEFAULT_TABLES,
                replay_dir: str | os.PathLike | None = None, replay_deals: int | None = None) -> np.ndarray:
    """The hand records of a run, (deals * seatings, len(FIELDS)) int64 in (deal, seating) order;
    with ``replay_dir`` every hand (of the first ``replay_deals`` deals, if given) is also saved
    there as a hand record (:class:`ReplayWriter`)."""
    run = f"{os.getpid()}-{next(_RUNS)}"
    if replay_dir is not None:
        replay_dir = os.fspath(replay_dir)
        os.makedirs(replay_dir, exist_ok=True)
    rules = mode_rules(mode, rules)
    tasks = [(run, a, b, seed, mode, rules, s, e, tables, replay_dir, replay_deals)
             for s, e in _chunks(deals, workers)]
    per_deal = 2 if mode == "fixed-landlord" else len(DUPLICATE_SEATINGS)
    parts = []
    try:
        if workers == 1:
            for t in tasks:
                parts.append(_play_chunk(t, on_progress))
        else:
            import multiprocessing as mp

            with mp.get_context("spawn").Pool(workers, initializer=_one_thread) as pool:
                for t, part in zip(tasks, pool.imap(_play_chunk, tasks)):  # imap keeps the task order
                    parts.append(part)
                    if on_progress:
                        on_progress((t[7] - t[6]) * per_deal)
    except AgentError as e:  # the hands finished before the error: the earlier chunks' and the failing one's
        e.records = np.concatenate(parts + [e.records]).reshape(-1, len(FIELDS))
        raise
    return np.concatenate(parts).reshape(-1, len(FIELDS))


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
    See ``agents/stats.py`` for what each figure means.
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
    # fail fast, here, on an unknown name or a bad checkpoint; one worker plays with copies of these
    # objects, several workers load the specs themselves
    agents = _resolve(a), _resolve(b)
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
                              replay_dir, replay_deals)
    except AgentError as e:  # keep what was played: the figures of the deals finished in every seating
        done = complete_deals(e.records, 2 if mode == "fixed-landlord" else len(DUPLICATE_SEATINGS))
        e.partial = {"config": config, **summary(done)} if len(done) else None
        raise
    finally:
        if bar is not None:
            bar.close()
    return {"config": config, **summary(records)}


__all__ = ["evaluate", "run_records", "ReplayWriter", "jobs_for", "complete_deals", "DUPLICATE_SEATINGS", "MODES"]
