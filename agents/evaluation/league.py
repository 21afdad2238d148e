"""A league: every pair of agents plays duplicate on the same seeded deals; a score matrix and a
rating per agent, each with a 95% interval (``evaluate.py --league`` is its CLI).

Play. Each pair ``(i, j)``, ``i < j`` in the order given, is one duplicate evaluation
(:func:`agents.evaluation.run_records`: deals ``0 .. deals - 1`` of ``seed``, each under the six
seatings AAB ABA BAA BBA BAB ABB, bidding and doubling on), so every pair plays the very same
cards and a league cell is exactly what ``evaluate(i, j, deals, seed)`` reports.

Per-deal result. ``x_ij[k]``: agent ``i``'s net score on deal ``k`` against ``j``, averaged
over the deal's six seatings (``stats.per_deal_means``); ``x_ji = -x_ij``.

Score matrix. ``M[i, j] = mean_k x_ij[k]``, ``i``'s score per hand against ``j`` (antisymmetric;
the diagonal is 0: duplicate self-play scores exactly 0). Its 95% interval is ``evaluate``'s:
Student's t over deals, ``mean +- t(deals - 1) sd / sqrt(deals)``.

Rating model: least squares on the duplicate score margins (Massey's ratings; the linear
Thurstone-Mosteller / Bradley-Terry-style model for a margin rather than a win): find ``r``
minimising ``sum_{i<j} (r_i - r_j - M[i, j])^2`` subject to ``sum_i r_i = 0``. The normal
equations give ``n r_i - sum_j r_j = sum_j M[i, j]``, so with every pair played the same number
of deals the fit is ``r_i = mean_j M[i, j]`` (``M[i, i] = 0``): an agent's rating is its score per
hand against the whole field (itself included), in points per hand; higher is stronger, the
ratings sum to 0, and ``r_i - r_j`` is the fitted score of ``i`` against ``j``. A margin model
rather than Bradley-Terry on wins because a duplicate deal's result is a number of points
(stakes from bids, doubles, bombs and springs), not a win or a loss, and many deals net 0 across
their six seatings: the points are what ``evaluate`` reports and what agents are trained for.

Intervals of the ratings: a paired bootstrap over deals. Every pair played the same deals, so a
replicate draws ``deals`` deal indices with replacement once and uses them for every pair (the
luck of a deal moves all the cells it appears in together, as it did in play); the ratings are
refitted on the replicate's matrix, and the 95% interval is the 2.5 and 97.5 percentiles of
``bootstrap`` replicates (seeded by ``seed``: a league is a function of its seed and agents).
The same replicates give each agent's rank interval.

Agents: anything :func:`agents.evaluate` seats (a registered name, a checkpoint path, a run
folder, an agent object), and ``RUN@N``: the kept checkpoints (``checkpoint_<frames>.pt``, a
run trained with ``keep_checkpoints: true``) of run folder ``RUN`` every ``N`` frames: for each
multiple ``k N`` (``k >= 1``) the first kept checkpoint at or past it and before ``(k + 1) N``
(checkpoints land a batch or so past their multiple). Each is labelled by its path.
"""
from __future__ import annotations

import io
import itertools
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ddz_env.files import write_binary
from ddz_env.rules import Rules

from .arena import DEFAULT_TABLES
from .arena import AgentError
from ..runs.stop import Terminated
from .protocols import DUPLICATE_SEATINGS, check_sendable, resolve_agent, run_records
from .stats import summarize, t95

AgentSpec = Any  # a registered name, a checkpoint path, a run folder, RUN@N, or an agent object
KEPT_CHECKPOINT = re.compile(r"checkpoint_(\d+)\.pt")  # agents/dmc/learner/trainer.py: checkpoint_<frames:012d>.pt
_RUN_AT = re.compile(r"(?P<run>.+)@(?P<every>[0-9][0-9_]*)")
BOOTSTRAP_STREAM = 0x1EA6  # the bootstrap's generator: default_rng([seed, BOOTSTRAP_STREAM])
MODEL = ("least squares on per-deal duplicate score margins (Massey): r_i - r_j fits M[i, j], sum r = 0, "
         "r_i = mean_j M[i, j]; 95% intervals: paired bootstrap over deals")


# ----------------------------------------------------------------------------------------------- agents
def kept_checkpoints(run: str | os.PathLike) -> list[tuple[int, str]]:
    """``(frames, path)`` of a run folder's kept checkpoints, by frames."""
    run = os.fspath(run)
    out = []
    for name in os.listdir(run):
        m = KEPT_CHECKPOINT.fullmatch(name)
        if m and os.path.isfile(os.path.join(run, name)):
            out.append((int(m.group(1)), os.path.join(run, name)))
    return sorted(out)


def every_n_frames(kept: Sequence[tuple[int, str]], every: int) -> list[tuple[int, str]]:
    """Of ``kept`` (by frames), the first at or past each multiple ``k * every`` (``k >= 1``) and
    before the next multiple."""
    out, seen = [], set()
    for frames, path in sorted(kept):
        k = frames // every
        if k >= 1 and k not in seen:
            seen.add(k)
            out.append((frames, path))
    return out


def expand_specs(specs: Sequence[AgentSpec]) -> tuple[list[str], list[AgentSpec]]:
    """The league's labels and agent specs: ``RUN@N`` becomes its checkpoints (see the module
    docstring), anything else is one agent (labelled by its path or name, an object by its repr).

    Raises ``ValueError`` for fewer than two agents, a label named twice, or a ``RUN@N`` whose
    ``RUN`` is no folder, whose ``N`` is not positive or that matches no kept checkpoint."""
    if isinstance(specs, (str, os.PathLike)) or not isinstance(specs, Sequence):
        raise TypeError(f"a league takes a list of agents, got {type(specs).__name__}: {specs!r}")
    labels: list[str] = []
    out: list[AgentSpec] = []
    for spec in specs:
        text = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else None
        m = _RUN_AT.fullmatch(text) if text is not None and not os.path.exists(text) else None
        if m is None:
            labels.append(text if text is not None else repr(spec))
            out.append(spec)
            continue
        run, every = m.group("run"), int(m.group("every"))
        if not os.path.isdir(run):
            raise ValueError(f"{text!r}: RUN@N names a run folder and a frame interval, and {run!r} is not a folder")
        if every < 1:
            raise ValueError(f"{text!r}: the frame interval N of RUN@N must be positive, got {every}")
        kept = kept_checkpoints(run)
        chosen = every_n_frames(kept, every)
        if not chosen:
            have = ", ".join(f"{f:,}" for f, _ in kept) if kept else "none (train with keep_checkpoints: true)"
            raise ValueError(f"{text!r}: no kept checkpoint (checkpoint_<frames>.pt) of {run!r} at or past a "
                             f"multiple of {every:,} frames; kept checkpoints at frames: {have}")
        for _, path in chosen:
            labels.append(path)
            out.append(path)
    if len(out) < 2:
        raise ValueError(f"a league needs at least two agents, got {len(out)}: {labels}")
    seen: dict[str, str] = {}
    for label, spec in zip(labels, out):
        key = agent_identity(spec)
        if key in seen:
            same = "" if seen[key] == label else f" (as {seen[key]!r}: the same checkpoint)"
            raise ValueError(f"agent {label!r} is named twice in the league{same}; every agent once")
        seen[key] = label
    return labels, out


def agent_identity(spec: AgentSpec) -> str:
    """What makes two specs one agent: a path's checkpoint file, resolved (``RUN``, ``RUN/`` and
    ``RUN/checkpoint.pt`` are one run); a name as it is; an object by its identity."""
    if not isinstance(spec, (str, os.PathLike)):
        return f"object:{id(spec)}"
    text = os.fspath(spec)
    if os.path.isdir(text):
        text = os.path.join(text, "checkpoint.pt")
    return "path:" + os.path.realpath(text) if os.path.exists(text) else "name:" + text


# ------------------------------------------------------------------------------------------- the model
def pairs_of(n: int) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, in play order."""
    return list(itertools.combinations(range(n), 2))


def matrix_of(pair_means: np.ndarray, n: int) -> np.ndarray:
    """(..., n, n) antisymmetric score matrices from (..., pairs) means of the row agent of each pair."""
    pair_means = np.asarray(pair_means, float)
    i, j = np.array(pairs_of(n), np.int64).reshape(-1, 2).T
    m = np.zeros(pair_means.shape[:-1] + (n, n))
    m[..., i, j] = pair_means
    m[..., j, i] = -pair_means
    return m


def fit_ratings(matrix: np.ndarray) -> np.ndarray:
    """Least-squares ratings (sum 0) of complete antisymmetric score matrices (..., n, n): the row means
    (the normal equations' solution when every pair is played; see the module docstring)."""
    matrix = np.asarray(matrix, float)
    return matrix.mean(axis=-1)


def bootstrap_ratings(per_deal: np.ndarray, n: int, replicates: int, rng: np.random.Generator,
                      chunk: int = 250) -> np.ndarray:
    """(replicates, n) ratings refitted on paired bootstrap resamples of the deals: ``per_deal``
    (pairs, deals) holds each pair's per-deal results on the same deals, and one draw of deal
    indices serves every pair."""
    per_deal = np.asarray(per_deal, float)
    k = per_deal.shape[1]
    out = np.empty((replicates, n))
    for s in range(0, replicates, chunk):
        b = min(chunk, replicates - s)
        draw = rng.integers(0, k, size=(b, k))
        counts = np.bincount((draw + k * np.arange(b)[:, None]).ravel(), minlength=b * k).reshape(b, k)
        means = counts @ per_deal.T / k  # (b, pairs)
        out[s:s + b] = fit_ratings(matrix_of(means, n))
    return out


def ranks_of(ratings: np.ndarray) -> np.ndarray:
    """Rank 1 (strongest) .. n of each agent for (..., n) ratings (ties: by the order given)."""
    order = np.argsort(-np.asarray(ratings), axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, order.shape[-1] + 1), axis=-1)
    return ranks


@dataclass(frozen=True)
class LeagueResult:
    """A league's figures. ``per_deal[p, k]``: the row agent's per-deal duplicate result of pair
    ``pairs[p]`` on deal ``k``; ``matrix[i, j]``: ``i``'s score per hand against ``j`` and
    ``matrix_lo`` / ``matrix_hi`` its 95% interval; ``ratings`` with ``ratings_lo`` / ``ratings_hi``
    (bootstrap 95%) and the bootstrap's rank interval ``rank_lo`` / ``rank_hi``."""

    labels: tuple[str, ...]
    pairs: tuple[tuple[int, int], ...]
    per_deal: np.ndarray
    matrix: np.ndarray
    matrix_lo: np.ndarray
    matrix_hi: np.ndarray
    ratings: np.ndarray
    ratings_lo: np.ndarray
    ratings_hi: np.ndarray
    rank_lo: np.ndarray
    rank_hi: np.ndarray
    seed: int
    bootstrap: int
    rules: str = "rulebook"

    @property
    def deals(self) -> int:
        return int(self.per_deal.shape[1])

    @property
    def order(self) -> list[int]:
        """The agents' indices, strongest first (ties: in the order given)."""
        return [int(i) for i in np.argsort(-self.ratings, kind="stable")]

    def to_json(self) -> dict:
        """The league as JSON-ready data (see docs/agents.md: agents, ratings, order, matrix, pairs, config)."""
        n, labels = len(self.labels), list(self.labels)
        ranks = ranks_of(self.ratings)

        def ci(i, j):  # (None on the diagonal, and with one deal: no spread to measure)
            lo, hi = float(self.matrix_lo[i, j]), float(self.matrix_hi[i, j])
            return None if i == j or math.isnan(lo) else [lo, hi]

        return {
            "agents": labels,
            "ratings": {labels[i]: {"rating": float(self.ratings[i]),
                                    "ci95": [float(self.ratings_lo[i]), float(self.ratings_hi[i])],
                                    "rank": int(ranks[i]), "rank_ci95": [int(self.rank_lo[i]), int(self.rank_hi[i])]}
                        for i in range(n)},
            "order": [labels[i] for i in self.order],
            "matrix": [[float(x) for x in row] for row in self.matrix],
            "matrix_ci95": [[ci(i, j) for j in range(n)] for i in range(n)],
            "pairs": [{"a": labels[i], "b": labels[j], "mean_score_a": float(self.matrix[i, j]),
                       "score_ci95_a": ci(i, j), "deals": self.deals, "hands": self.deals * len(DUPLICATE_SEATINGS)}
                      for i, j in self.pairs],
            "config": {"deals": self.deals, "seed": self.seed, "mode": "duplicate", "rules": self.rules,
                       "seatings": list(DUPLICATE_SEATINGS), "bootstrap": self.bootstrap, "model": MODEL},
        }


def league_from_per_deal(labels: Sequence[str], per_deal: np.ndarray, seed: int = 0, bootstrap: int = 1000,
                         rules: str = "rulebook") -> LeagueResult:
    """The figures of a league from its per-deal results: ``per_deal`` (pairs, deals), the pairs in
    :func:`pairs_of` order, every pair on the same deals."""
    labels = tuple(labels)
    n = len(labels)
    pairs = tuple(pairs_of(n))
    per_deal = np.asarray(per_deal, float)
    if n < 2 or per_deal.ndim != 2 or per_deal.shape[0] != len(pairs) or per_deal.shape[1] < 1:
        raise ValueError(f"per_deal must be (pairs, deals) with {len(pairs)} pairs for {n} agents, "
                         f"got shape {per_deal.shape}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 1:
        raise ValueError(f"bootstrap must be a positive integer, got {bootstrap!r}")
    k = per_deal.shape[1]
    means = per_deal.mean(axis=1)
    half = t95(k) * per_deal.std(axis=1, ddof=1) / np.sqrt(k) if k > 1 else np.full(len(pairs), np.nan)
    matrix = matrix_of(means, n)
    lo, hi = matrix_of(means - half, n), matrix_of(means + half, n)
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)  # (below the diagonal the interval is negated)
    boot = bootstrap_ratings(per_deal, n, int(bootstrap), np.random.default_rng([int(seed), BOOTSTRAP_STREAM]))
    r_lo, r_hi = np.percentile(boot, [2.5, 97.5], axis=0)
    ranks = ranks_of(boot)
    k_lo, k_hi = np.percentile(ranks, [2.5, 97.5], axis=0, method="nearest")
    return LeagueResult(labels, pairs, per_deal, matrix, lo, hi, fit_ratings(matrix), r_lo, r_hi,
                        k_lo.astype(int), k_hi.astype(int), int(seed), int(bootstrap), rules)


class LeagueStopped(Exception):
    """A league that stopped before its last pair (Ctrl-C, a dead worker process, an agent that failed):
    ``labels``, ``pairs`` (the pairs finished, in play order) and ``per_deal`` (their rows) are what was
    played; :meth:`to_json` gives them, marked partial, with each finished pair's score and interval (no
    ratings: they need every pair). ``reason`` says why, in one line; ``interrupted``: a Ctrl-C or a
    ``SIGTERM``, ``terminated``: the latter."""

    def __init__(self, reason: str, labels: Sequence[str], pairs: Sequence[tuple[int, int]], per_deal: np.ndarray,
                 total_pairs: int, seed: int, rules: str, interrupted: bool = False, terminated: bool = False):
        super().__init__(reason)
        self.reason, self.labels, self.pairs = reason, tuple(labels), tuple(pairs)
        self.per_deal, self.total_pairs, self.seed, self.rules = per_deal, total_pairs, seed, rules
        self.interrupted, self.terminated = interrupted or terminated, terminated

    def to_json(self) -> dict:
        k = self.per_deal.shape[1] if self.per_deal.ndim == 2 else 0
        pairs = []
        for (i, j), row in zip(self.pairs, self.per_deal):
            half = float(t95(k) * row.std(ddof=1) / np.sqrt(k)) if k > 1 else None
            m = float(row.mean())
            pairs.append({"a": self.labels[i], "b": self.labels[j], "mean_score_a": m,
                          "score_ci95_a": None if half is None else [m - half, m + half], "deals": k,
                          "hands": k * len(DUPLICATE_SEATINGS)})
        return {"partial": True, "reason": self.reason, "agents": list(self.labels), "pairs_played": len(self.pairs),
                "pairs_total": self.total_pairs, "pairs": pairs,
                "config": {"deals": k, "seed": self.seed, "mode": "duplicate", "rules": self.rules,
                           "seatings": list(DUPLICATE_SEATINGS)}}


# ------------------------------------------------------------------------------------------------- play
def _positive(name: str, x, minimum: int = 1) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative"
        raise ValueError(f"{name} must be {kind} integer, got {x!r}")
    return int(x)


#: hands a second one worker plays in a league, to say beforehand how long one takes: measured on a 2-core
#: machine with a training run beside it (``evaluate.py --league random rule pretrained
#: benchmarks/results/marl/sb3.pt --deals 200``: 344 hands/s; issue 47's 72,000 hands with a run folder's
#: network took about 7 minutes, 170/s): a round, cautious 200
HANDS_PER_SECOND = 200


def league_plan(labels: Sequence[str], deals: int, workers: int = 1) -> str:
    """One line: what a league of ``labels`` plays (agents, pairs, hands) and about how long it takes at
    :data:`HANDS_PER_SECOND` a worker (search agents: far longer, said so)."""
    n = len(labels)
    pairs = n * (n - 1) // 2
    hands = pairs * deals * len(DUPLICATE_SEATINGS)
    seconds = hands / (HANDS_PER_SECOND * workers)
    took = ("under a second" if seconds < 1 else f"about {seconds:.0f} s" if seconds < 90
            else f"about {seconds / 60:.0f} min" if seconds < 5400 else f"about {seconds / 3600:.1f} h")
    slow = ("; search agents play far slower than that" if any(str(x).startswith("search:") for x in labels)
            else "")
    return (f"league: {n} agents, {pairs} pair{'s' * (pairs != 1)}, {deals} deals each in duplicate: "
            f"{hands:,} hands, {took} "
            f"with {workers} worker(s) (about {HANDS_PER_SECOND} hands/s a worker on a 2-core machine{slow}; "
            f"fewer --deals for less)")


def play_league(specs: Sequence[AgentSpec], deals: int = 200, seed: int = 0, workers: int = 1,
                rules: Rules | str | None = None, bootstrap: int = 1000, progress: bool = False,
                tables: int = DEFAULT_TABLES, announce: Callable[[str], None] | None = None) -> LeagueResult:
    """Play every pair of ``specs`` (``RUN@N`` expanded: :func:`expand_specs`) in duplicate on deals
    ``0 .. deals - 1`` of ``seed`` and return the league's figures (module docstring).

    Every agent is loaded before the first hand, so an unknown name or a bad checkpoint fails at
    once (``ValueError`` / ``FileNotFoundError``). ``workers``, ``rules`` and ``tables`` are
    :func:`agents.evaluate`'s; ``progress`` shows a tqdm bar over all the league's hands; ``announce``
    gets :func:`league_plan`'s line once every agent is loaded, before the first hand."""
    deals, seed, workers = _positive("deals", deals), _positive("seed", seed, 0), _positive("workers", workers)
    tables, bootstrap = _positive("tables", tables), _positive("bootstrap", bootstrap)
    rules = Rules.of(rules)
    labels, specs = expand_specs(specs)
    agents = [resolve_agent(s) for s in specs]  # fail fast; one worker plays (copies of) these objects
    seat = agents if workers == 1 else specs  # several workers load the specs themselves
    if workers > 1:  # an object the workers cannot be sent fails here, not in the pair it first plays
        check_sendable(specs, workers)
    pairs = pairs_of(len(labels))
    per_seating = len(DUPLICATE_SEATINGS)
    if announce is not None:
        announce(league_plan(labels, deals, workers))
    bar = None
    if progress:
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm comes with the 'train' extra: no bar without it
            tqdm = None
        if tqdm is not None:
            bar = tqdm(total=len(pairs) * deals * per_seating, unit="hand", desc="league", leave=False)
    per_deal = np.empty((len(pairs), deals))
    p = 0
    try:
        for p, (i, j) in enumerate(pairs):
            if bar is not None:
                bar.set_description(f"league {p + 1}/{len(pairs)}")
            records = run_records(seat[i], seat[j], deals, seed, "duplicate", workers, rules,
                                  bar.update if bar is not None else None, tables)
            per_deal[p] = summarize(records, DUPLICATE_SEATINGS)["per_deal_score_a"]
    except (KeyboardInterrupt, RuntimeError, AgentError) as e:  # keep every pair that finished
        i, j = pairs[p]
        why = ("stopped by SIGTERM" if isinstance(e, Terminated) else "interrupted (Ctrl-C)"
               if isinstance(e, KeyboardInterrupt) else f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        raise LeagueStopped(f"the league stopped in pair {p + 1} of {len(pairs)} ({labels[i]} vs {labels[j]}): {why}",
                            labels, pairs[:p], per_deal[:p], len(pairs), seed, rules.name,
                            isinstance(e, KeyboardInterrupt), isinstance(e, Terminated)) from e
    finally:
        if bar is not None:
            bar.close()
    return league_from_per_deal(labels, per_deal, seed, bootstrap, rules.name)


# ------------------------------------------------------------------------------------------------- plot
def short_label(label: str, width: int = 32) -> str:
    """A label for a plot: a kept checkpoint as ``<run folder name>@<frames>``, anything longer than
    ``width`` cut from the left (the end of a path is what tells them apart)."""
    m = KEPT_CHECKPOINT.fullmatch(os.path.basename(label))
    if m:
        label = f"{os.path.basename(os.path.dirname(os.path.abspath(label)))}@{int(m.group(1)):,}"
    return label if len(label) <= width else "..." + label[-(width - 3):]


def save_heatmap(result: LeagueResult, path: str | os.PathLike) -> bool:
    """A PNG heatmap of the score matrix (rows and columns strongest first); False if matplotlib
    is missing (the 'train' extra). Drawn in memory, then written whole or not at all, in place into a
    stream, a link followed (``ddz_env.files.write_binary``)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return False
    order = result.order
    m = result.matrix[np.ix_(order, order)]
    n = len(order)
    names = [f"{k + 1}. {short_label(result.labels[i])}" for k, i in enumerate(order)]
    size = 2.5 + 0.8 * n
    fig = Figure(figsize=(size + 3.0, size))
    ax = fig.add_subplot()
    vmax = float(np.abs(m).max()) or 1.0
    im = ax.imshow(m, cmap="RdBu", vmin=-vmax, vmax=vmax)
    ax.set_xticks(range(n), [short_label(result.labels[i], 18) for i in order], rotation=35, ha="right",
                  rotation_mode="anchor")
    ax.set_yticks(range(n), names)
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("agent (row), strongest first")
    if n <= 16:
        for r in range(n):
            for c in range(n):
                if r != c:
                    ax.text(c, r, f"{m[r, c]:+.2f}", ha="center", va="center", fontsize=8,
                            color="white" if abs(m[r, c]) > 0.6 * vmax else "black")
    fig.colorbar(im, ax=ax, label="row agent's score per hand vs column")
    ax.set_title(f"league: {result.deals:,} deals, seed {result.seed}, duplicate")
    fig.tight_layout()
    buf = io.BytesIO()  # (PIL opens a named file "w+b": a FIFO could not take it)
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    write_binary(path, lambda f: f.write(buf.getvalue()))
    return True


__all__ = ["play_league", "league_plan", "HANDS_PER_SECOND", "league_from_per_deal", "LeagueResult", "LeagueStopped", "agent_identity", "expand_specs", "kept_checkpoints",
           "every_n_frames", "pairs_of", "matrix_of", "fit_ratings", "bootstrap_ratings", "ranks_of",
           "save_heatmap", "MODEL"]
