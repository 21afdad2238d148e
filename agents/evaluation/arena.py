"""Play seeded deals between seated agents on the batched env; record each hand as a row of integers.

Everything random is keyed by (seed, deal index[, seat]), never by the order in which
hands are played or the table they land on: deal ``i`` of seed ``s`` is the same cards
whichever worker plays it, and the agent in seat ``k`` starts that deal's hand with
the same stream seed in every seating. So two identical agents make identical choices
in every seating (duplicate self-play scores exactly 0), ``--workers N`` gives the
numbers of one worker, and the batch size changes nothing.

:func:`play_hands` runs a list of :class:`Job` (a deal, a seating, which agent sits
where) on one :class:`~ddz_env.vector.VectorDouDizhu` of up to ``tables`` tables: each
step gathers every agent's pending decisions across the tables into one
``act_batch`` call, and a table whose hand ended takes the next job (``load_deals``).
It only schedules and dispatches: a finished hand's row is the env's summary of it
(``step``'s ``info``: bids, doubles, bombs...), with the job's deal index and seating.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ddz_env.rules import Deal, Phase, Rules, deal_hand
from ddz_env.vector import VectorDouDizhu

from ..base import Decisions, illegal_choices

#: columns of a hand record (one int64 row per hand)
FIELDS = (
    "deal", "seating", "first_bidder",
    "score0", "score1", "score2",
    "void", "landlord", "bid", "winner",
    "bid0", "bid1", "bid2",  # -1 not asked, 0 pass, 1..3
    "dbl0", "dbl1", "dbl2",  # -1 not asked (landlord, void, doubling off), 0 no, 1 yes
    "redouble",  # -1 not asked, 0 no, 1 yes
    "bombs0", "bombs1", "bombs2",  # bombs and rockets played by each seat
    "spring", "anti_spring", "plays",
)
COL = {name: i for i, name in enumerate(FIELDS)}
#: the columns copied from the env's hand summary (``VectorDouDizhu.step``'s info): column(s) -> info key
_FROM_INFO = (("first_bidder", "first_bidder"), ("score0", "final_scores"), ("void", "void"), ("landlord", "landlord"),
              ("bid", "bid"), ("winner", "winner"), ("bid0", "bids"), ("dbl0", "doubles"), ("redouble", "redouble"),
              ("spring", "spring"), ("anti_spring", "anti_spring"), ("plays", "plays"))
DEFAULT_TABLES = 1024  # tables stepped together: DMC vs DMC ran 300 hands/s at 1024, 210 at 256, 95 at 64 (bench_eval.py)


class AgentError(RuntimeError):
    """An agent failed or chose an illegal action; names the agent, seat, deal and phase.

    ``records``: the rows of the hands finished before the error (in job order), so that
    what was played is not lost."""

    def __init__(self, message: str, records: np.ndarray | None = None):
        super().__init__(message)
        self.records = np.zeros((0, len(FIELDS)), np.int64) if records is None else records

    def __reduce__(self):  # keep the records across processes (evaluation workers)
        return (type(self), (str(self), self.records))


@dataclass(frozen=True)
class Job:
    """One hand to play: deal ``index`` (cards ``deal``) in seating ``seating``; ``seats[s]`` is the
    index (into the agent list) of the agent in seat ``s``."""

    index: int
    seating: int
    deal: Deal  # ddz_env.rules.Deal (with bidding off its first bidder is the landlord, unless it names one)
    seats: tuple[int, int, int]


def make_deal(seed: int, index: int) -> Deal:
    """Deal ``index`` of ``seed`` (a :class:`~ddz_env.rules.Deal`): independent of every other deal and
    of who plays it."""
    return deal_hand(np.random.default_rng([int(seed), int(index)]))


def seat_seed(seed: int, index: int, seat: int) -> int:
    """The seed an agent in ``seat`` gets for deal ``index`` (the same on every seating)."""
    return int(np.random.SeedSequence([int(seed), int(index), int(seat), 0xD0]).generate_state(1)[0])


_PHASE_NAMES = {int(p): p.name for p in Phase}


def play_hands(agents: Sequence[Any], jobs: Sequence[Job], seed: int, rules: Rules | str | None = None,
               names: Sequence[str] | None = None, tables: int = DEFAULT_TABLES,
               on_hand: Callable[[int], None] | None = None,
               on_history: Callable[[Job, list, np.ndarray], None] | None = None) -> np.ndarray:
    """Play ``jobs`` with batch agents ``agents`` (``act_batch``, ``begin_hands``); records in job order.

    ``rules``: the hands' :class:`~ddz_env.rules.Rules` (default the rulebook; with bidding off each
    deal's first bidder is landlord). ``names[k]`` labels agent ``k`` in errors; ``on_hand(n)`` is called as hands finish;
    ``on_history(job, actions, row)``, if given, gets each finished hand's every ``(seat, action)``
    in order and its record row (the caller can rebuild the hand: :mod:`ddz_env.record`).
    An agent that raises or returns an illegal id raises :class:`AgentError` (with the
    records of the hands finished so far).
    """
    names = list(names) if names is not None else [f"#{k}" for k in range(len(agents))]
    n_jobs = len(jobs)
    records = np.zeros((n_jobs, len(FIELDS)), np.int64)
    if n_jobs == 0:
        return records
    B = max(1, min(int(tables), n_jobs))
    vec = VectorDouDizhu(B, seed=0, rules=rules)
    job_of = np.full(B, -1, np.int64)  # the job each table plays; -1: idle (no job left)
    seat_agent = np.full((B, 3), -1, np.int64)
    finished = np.zeros(n_jobs, bool)
    next_job = 0
    seat3 = np.arange(3)
    history: list[list] = [[] for _ in range(B)] if on_history is not None else []

    def start(slots: np.ndarray) -> None:
        nonlocal next_job
        take = slots[:max(0, min(slots.size, n_jobs - next_job))]
        job_of[slots] = -1
        if take.size == 0:
            return
        js = [jobs[j] for j in range(next_job, next_job + take.size)]
        job_of[take] = np.arange(next_job, next_job + take.size)
        next_job += take.size
        vec.load_deals(take, [j.deal for j in js])
        seat_agent[take] = np.array([j.seats for j in js])
        for b in take.tolist() if history else ():
            history[b] = []
        seeds = np.array([[seat_seed(seed, j.index, s) for s in range(3)] for j in js], np.uint64)
        streams = take[:, None] * 3 + seat3
        for k, agent in enumerate(agents):
            held = seat_agent[take] == k
            if held.any():
                begin = getattr(agent, "begin_hands", None)
                if begin is not None:
                    begin(streams[held], seeds[held])

    def fail(message: str) -> AgentError:
        done = np.flatnonzero(finished)
        return AgentError(message, records[done])

    start(np.arange(B))
    while (job_of >= 0).any():
        obs = vec.observe()
        legal = vec.legal_sets()
        seat = vec.current_player
        actions = vec.default_actions()  # idle tables play on with R20's defaults, ignored
        active = job_of >= 0
        who = np.where(active, seat_agent[np.arange(B), seat], -1)
        for k, agent in enumerate(agents):
            idx = np.flatnonzero(who == k)
            if idx.size == 0:
                continue
            d = Decisions.of_env(vec, idx, observation=obs, legal_sets=legal)
            try:
                a = np.asarray(agent.act_batch(d))
                if a.shape != (idx.size,) or a.dtype.kind not in "iu":
                    raise ValueError(f"act_batch must return {idx.size} integer action ids, got an array of "
                                     f"shape {a.shape} and dtype {a.dtype}")
            except Exception as e:  # noqa: BLE001 - named and re-raised with the hand it happened in
                row = getattr(e, "batch_index", 0)  # (an agent that says which decision of the batch failed)
                b = int(idx[row if isinstance(row, int) and 0 <= row < idx.size else 0])
                raise fail(f"agent {names[k]} ({agent!r}) failed at seat {int(seat[b])}, deal "
                           f"{jobs[job_of[b]].index}, phase {_PHASE_NAMES[int(vec.phase[b])]}: "
                           f"{type(e).__name__}: {e}") from e
            a = a.astype(np.int64)
            bad = illegal_choices(d, a)
            if bad.size:
                i = int(bad[0])
                b = int(idx[i])
                raise fail(f"agent {names[k]} ({agent!r}) at seat {int(seat[b])}, deal {jobs[job_of[b]].index}, "
                           f"phase {_PHASE_NAMES[int(vec.phase[b])]}: illegal action {int(a[i])} "
                           f"({d.legal(i).size} legal actions)")
            actions[idx] = a
        if history:  # (a Python loop over the tables: only when the caller keeps the hands' actions)
            for b, s_, a_ in zip(np.flatnonzero(active).tolist(), seat[active].tolist(), actions[active].tolist()):
                history[b].append((s_, a_))
        _, _, done, info = vec.step(actions, observe=False)
        ended = np.flatnonzero(done & active)
        if ended.size:
            j = job_of[ended]
            rows = records[j]
            rows[:, COL["deal"]] = [jobs[x].index for x in j]
            rows[:, COL["seating"]] = [jobs[x].seating for x in j]
            for col, key in _FROM_INFO:  # the env's summary of each ended hand
                v = info[key][ended]
                rows[:, COL[col]:COL[col] + (v.shape[1] if v.ndim == 2 else 1)] = v.reshape(len(ended), -1)
            rows[:, COL["bombs0"]:COL["bombs2"] + 1] = info["bombs"][ended] + info["rockets"][ended]
            records[j] = rows
            finished[j] = True
            if history:
                for b, x, row in zip(ended.tolist(), j.tolist(), rows):
                    on_history(jobs[x], history[b], row)
            if on_hand is not None:
                on_hand(int(ended.size))
            start(ended)
    return records


__all__ = ["FIELDS", "COL", "Deal", "Job", "AgentError", "make_deal", "seat_seed", "play_hands", "DEFAULT_TABLES"]
