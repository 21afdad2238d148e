"""A search agent: rollouts of the base agent's best moves from deals the seat cannot rule out.

``search:BASE`` (``agents.load("search:pretrained?samples=32&candidates=4")``) plays as BASE, except at
a play decision with more than one legal move, where it

1. draws ``samples`` deals consistent with its observation (``ddz_env.beliefs.sample_hidden``:
   exact, uniform under the deck's prior, R21: the observation alone, never the game);
2. takes BASE's ``candidates`` best moves (by its ``values()``, e.g. the DMC agent's Q-values; for a
   base without values, its choice and other legal moves drawn at random);
3. plays each candidate on every drawn deal in one batched env (``VectorDouDizhu.load_view``), the
   rest of the hand played by ``rollout`` (BASE by default) at all three seats, every rollout of
   every decision stepped together;
4. picks the candidate with the best mean rulebook score (R19) for its seat over the deals (the
   same deals for every candidate: paired, so their difference is measured with less noise), and
   BASE's own choice unless another is better by more than ``margin``.

Bids, doubles and redoubles are BASE's. Each decision draws from its own generator, seeded by the
agent's ``seed`` and the decision's observation and legal set: the same seed gives the same
choices however the decisions are batched.

Cost (``python benchmarks/bench_search.py``): with the shipped DMC agent as BASE and rollout, one
decision costs about ``samples * candidates`` rollouts of the rest of the hand; every rollout step
is one batched DMC forward over all live rollouts of the batch.
"""
from __future__ import annotations

import copy
import time
import zlib
from typing import Any

import numpy as np

from ddz_env.beliefs import sample_hidden
from ddz_env.rules import Phase
from ddz_env.vector import VectorDouDizhu

from ..base import BatchAgent, Decisions, as_batch_agent
from ..runs.config import did_you_mean

SCHEME = "search:"
#: option -> (type, default, what it is)
OPTIONS: dict[str, tuple[type, Any, str]] = {
    "samples": (int, 16, "deals drawn per decision"),
    "candidates": (int, 4, "the base agent's best moves searched (1: the base agent itself)"),
    "rollout": (str, "", "the agent that plays the rollouts at every seat (default: the base agent)"),
    "prior": (str, "deck", "the deals' distribution: deck (uniform over the deck's orders) or cards"),
    "margin": (float, 0.0, "points per hand another move must beat the base choice by"),
    "seed": (int, 0, "seed of the draws"),
}
MAX_ROLLOUTS = 1 << 16  # one decision's samples x candidates: a bound on memory (a table is ~1 kB)
_PLAY = int(Phase.PLAY)
_MAX_PLAYS = 200  # a hand ends within 54 plays and 2 passes each: a rollout past this is a bug


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"search:BASE?samples=32&candidates=4"`` -> ``("BASE", {"samples": 32, "candidates": 4})``.
    The options follow the last ``?``; ``ValueError`` naming an unknown option or a bad value."""
    if not isinstance(spec, str) or not spec.startswith(SCHEME):
        raise ValueError(f"a search agent spec is 'search:BASE[?option=value&...]', got {spec!r}")
    body = spec[len(SCHEME):]
    base, sep, query = body.rpartition("?") if "?" in body else (body, "", "")
    if not base:
        raise ValueError(f"{spec!r}: no base agent after 'search:' (e.g. search:pretrained)")
    options: dict[str, Any] = {}
    for part in query.split("&") if sep else []:
        key, eq, value = part.partition("=")
        if key not in OPTIONS:
            raise ValueError(f"{spec!r}: unknown option {key!r}{did_you_mean(key, OPTIONS)}; the options: "
                             f"{', '.join(OPTIONS)}")
        if not eq or not value:
            raise ValueError(f"{spec!r}: option {key!r} needs a value ({key}=...)")
        kind = OPTIONS[key][0]
        try:
            options[key] = kind(value)
        except ValueError:
            what = {int: "a whole number", float: "a number"}.get(kind, kind.__name__)
            raise ValueError(f"{spec!r}: option {key}={value!r} is not {what}") from None
    return base, options


class SearchAgent(BatchAgent):
    """BASE, searching its best moves at play decisions (see the module doc)."""

    def __init__(self, base: Any, *, samples: int = 16, candidates: int = 4, rollout: Any = None,
                 prior: str = "deck", margin: float = 0.0, seed: int = 0, name: str | None = None):
        for key, value, low in (("samples", samples, 1), ("candidates", candidates, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"search: {key} must be a whole number of at least {low}, got {value!r}")
        if samples * candidates > MAX_ROLLOUTS:
            raise ValueError(f"search: samples x candidates = {samples * candidates:,} rollouts per decision, "
                             f"more than {MAX_ROLLOUTS:,}")
        if prior not in ("deck", "cards"):
            raise ValueError(f"search: prior must be 'deck' or 'cards', got {prior!r}")
        if not np.isfinite(margin) or margin < 0:
            raise ValueError(f"search: margin must be a finite number >= 0, got {margin!r}")
        self.base = as_batch_agent(base)
        self.rollout = self.base if rollout is None else as_batch_agent(rollout)
        self.samples, self.candidates = int(samples), int(candidates)
        self.prior, self.margin, self.seed = prior, float(margin), int(seed)
        self.name = name or f"search:{getattr(base, 'name', type(base).__name__)}"
        #: what the searches cost: decisions searched, rollouts played, rollout steps, wall and CPU seconds
        self.stats = {"searched": 0, "rollouts": 0, "steps": 0, "wall_seconds": 0.0, "cpu_seconds": 0.0}

    # ------------------------------------------------------------------ the agent interface
    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        for agent in {id(self.base): self.base, id(self.rollout): self.rollout}.values():
            agent.begin_hands(streams, seeds)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = int(seed)

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        actions = np.asarray(self.base.act_batch(decisions), dtype=np.int64).copy()
        counts = np.diff(decisions.legal_starts)
        idx = np.flatnonzero((decisions.phase == _PLAY) & (counts > 1))
        if idx.size and self.candidates > 1:
            actions[idx] = self.search(decisions.take(idx), actions[idx])
        return actions

    # ------------------------------------------------------------------ the search
    def candidate_moves(self, decisions: Decisions, chosen: np.ndarray) -> list[np.ndarray]:
        """Each decision's candidates, the base choice first: the base's best ``candidates`` by its
        ``values()``, else its choice and legal moves drawn by the decision's generator."""
        values = self.base.values(decisions) if hasattr(self.base, "values") else None
        out = []
        for i in range(len(decisions)):
            legal = decisions.legal(i)
            if values is not None and len(values[i]) == legal.size:
                order = legal[np.argsort(-np.asarray(values[i]), kind="stable")]
            else:
                order = self._rng(decisions, i, 1).permutation(legal)
            rest = order[order != chosen[i]][: self.candidates - 1]
            out.append(np.concatenate([[chosen[i]], rest]).astype(np.int64))
        return out

    def _rng(self, decisions: Decisions, i: int, salt: int) -> np.random.Generator:
        key = zlib.crc32(np.ascontiguousarray(decisions.observation[i]).tobytes())
        key = zlib.crc32(decisions.legal(i).tobytes(), key)
        return np.random.default_rng([self.seed, key, salt])

    def mean_scores(self, decisions: Decisions, cands: list[np.ndarray]) -> list[np.ndarray]:
        """Each candidate's mean score for the seat on turn over the decision's drawn deals."""
        wall0, cpu0 = time.perf_counter(), time.process_time()
        n = self.samples
        sizes = np.array([c.size * n for c in cands])
        total = int(sizes.sum())
        env = VectorDouDizhu(total, seed=None)
        first = np.empty(total, np.int64)
        offset = 0
        for i, c in enumerate(cands):
            seed = int(self._rng(decisions, i, 2).integers(2**63))
            hands, bottoms = sample_hidden(decisions.observation[i], n, seed=seed, prior=self.prior)
            for k, move in enumerate(c):  # the same deals for every candidate
                slots = np.arange(offset + k * n, offset + (k + 1) * n)
                env.load_view(slots, decisions.observation[i], hands, bottoms)
                first[slots] = move
            offset += c.size * n
        score = np.zeros(total, np.float64)
        done = np.zeros(total, bool)
        actions = first
        steps = 0
        for _ in range(_MAX_PLAYS):
            _, _, ended, info = env.step(actions, observe=False)
            new = ended & ~done
            score[new] = info["final_scores"][new, 0]  # the searching seat is seat 0 of every table
            done |= new
            if done.all():
                break
            live = np.flatnonzero(~done)
            actions = env.default_actions()
            rows, ids, starts = env.legal_sets()
            obs = env.observe()
            d = Decisions.of_tables(live, obs, ids, starts, env.phase.astype(np.int64), env.roles(),
                                    env.current_player)
            actions[live] = self.rollout.act_batch(d)
            steps += 1
        else:
            raise RuntimeError(f"search: {int((~done).sum())} rollouts did not end in {_MAX_PLAYS} plays")
        self.stats["rollouts"] += total
        self.stats["steps"] += steps
        self.stats["wall_seconds"] += time.perf_counter() - wall0
        self.stats["cpu_seconds"] += time.process_time() - cpu0
        bounds = np.concatenate([[0], sizes.cumsum()])
        return [score[bounds[i]:bounds[i + 1]].reshape(c.size, n).mean(axis=1) for i, c in enumerate(cands)]

    def search(self, decisions: Decisions, chosen: np.ndarray) -> np.ndarray:
        """The searched move of each (play, several legal moves) decision; ``chosen``: the base's."""
        cands = self.candidate_moves(decisions, chosen)
        means = self.mean_scores(decisions, cands)
        self.stats["searched"] += len(decisions)
        out = chosen.copy()
        for i, (c, m) in enumerate(zip(cands, means)):
            best = int(np.argmax(m))  # (the first of equals: the base choice is candidate 0)
            if m[best] > m[0] + self.margin:
                out[i] = c[best]
        return out

    def __deepcopy__(self, memo: dict) -> "SearchAgent":
        """A deep copy that reports into the same ``stats`` (an evaluator plays with copies of its agents)."""
        new = copy.copy(self)
        memo[id(self)] = new
        for k, v in vars(self).items():
            if k != "stats":
                setattr(new, k, copy.deepcopy(v, memo))
        return new

    def cost(self) -> dict[str, float]:
        """Per searched decision: rollouts, wall and CPU seconds (of the searches so far)."""
        k = max(self.stats["searched"], 1)
        return {"decisions": self.stats["searched"], "rollouts_per_decision": self.stats["rollouts"] / k,
                "wall_seconds_per_decision": self.stats["wall_seconds"] / k,
                "cpu_seconds_per_decision": self.stats["cpu_seconds"] / k}

    def __repr__(self) -> str:
        return (f"SearchAgent({self.name}, samples={self.samples}, candidates={self.candidates}, "
                f"prior={self.prior!r})")


def from_spec(spec: str, **kwargs: Any) -> SearchAgent:
    """The loader's entry point for ``search:BASE[?options]`` (``kwargs`` go to the constructor)."""
    from ..loader import load

    base_spec, options = parse_spec(spec)
    rollout = options.pop("rollout", "") or None
    base = load(base_spec)
    return SearchAgent(base, rollout=None if rollout is None else load(rollout), name=spec, **{**options, **kwargs})


__all__ = ["SearchAgent", "OPTIONS", "parse_spec", "from_spec"]
