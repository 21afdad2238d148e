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
   BASE's own choice unless another is better by more than ``margin`` plus ``z`` standard errors of
   the paired difference (`better_than_base`).

With ``endgame=N`` (``search:pretrained?endgame=12``) the known deals are solved exactly once the three
hands hold at most N cards (``ddz_env.endgame``: the landlord against the farmers' team, the R19 score as
the value): at a decision with at most N cards every legal move is a candidate and its score on each
drawn deal is its exact value there; in a rollout that reaches N cards the exact value of the position
replaces the rest of the rollout. Off by default (``endgame=0``).

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

from ddz_env.actions import BID_PASS, NO_DOUBLE, NO_REDOUBLE
from ddz_env.beliefs import sample_hidden
from ddz_env.cards import NUM_RANKS, NUM_SEATS
from ddz_env.endgame import SOLVE_LIMIT, Position, move_values, solve_scores
from ddz_env.info import GAME
from ddz_env.observation import HISTORY
from ddz_env.readers import read_bids, read_cards, read_cards_left, read_doubling, read_history, read_status
from ddz_env.rules import Phase, doubling_order
from ddz_env.vector import VectorDouDizhu

from ..base import BatchAgent, Decisions, as_batch_agent
from ..loader import SchemeSpec, parse_spec
from ..runs.config import did_you_mean
from .weights import DEFAULT_TEMPERATURE, normalise, replay_log_weights

SCHEME = "search:"
#: option -> (type, default, what it is): the one place of the defaults (check_options and SearchAgent take them)
OPTIONS: dict[str, tuple[type, Any, str]] = {
    "samples": (int, 16, "deals drawn per decision"),
    "candidates": (int, 4, "the base agent's best moves searched (1: the base agent itself)"),
    "rollout": (str, "", "the agent that plays the rollouts at every seat (default: the base agent)"),
    "prior": (str, "deck", "the deals' distribution: deck (uniform over the deck's orders) or cards"),
    "margin": (float, 0.0, "points per hand another move must beat the base choice by"),
    "z": (float, 2.0, "another move must beat the base choice by z standard errors of the paired difference"),
    "belief": (str, "", "weigh the deals by how likely this agent was to make the others' moves (weights.py)"),
    "temperature": (float, DEFAULT_TEMPERATURE, "the belief agent's softmax temperature, in its value units"),
    "seed": (int, 0, "seed of the draws"),
    "endgame": (int, 0, "solve the drawn deals exactly once the hands hold at most this many cards (0: off)"),
}
_DEFAULT = {key: default for key, (_, default, _) in OPTIONS.items()}
MAX_ROLLOUTS = 1 << 16  # one decision's samples x candidates: a bound on memory (a table is ~1 kB)
_PLAY = int(Phase.PLAY)
#: a rollout starts at a play decision, so it ends within the longest hand's decisions: past them is a bug
_MAX_STEPS = GAME.max_decisions


def visible_plays(planes: np.ndarray) -> list[tuple[int, int]]:
    """The plays in the planes' history, oldest first, as ``(relative seat, move id)``
    (``readers.read_history``)."""
    return read_history(planes).plays()


def bidding_history(planes: np.ndarray) -> tuple[int, list[tuple[int, int]]]:
    """``(first bidder, the bids, doubles and redouble in order)`` of a play decision's planes, in relative
    seats (R3, R5, R6: all public once the play began)."""
    bids, first = read_bids(planes)
    dbl, redouble = read_doubling(planes)
    first = int(first)
    order = [(first + k) % NUM_SEATS for k in range(NUM_SEATS)]
    out = [(s, BID_PASS + int(bids[s])) for s in order if bids[s] >= 0]
    lord = int(read_status(planes).landlord)
    for s in doubling_order(lord):
        if dbl[int(s)] >= 0:
            out.append((int(s), NO_DOUBLE + int(dbl[int(s)])))
    if redouble >= 0:
        out.append((lord, NO_REDOUBLE + int(redouble)))
    return first, out


def better_than_base(scores: np.ndarray, weights: np.ndarray, margin: float = 0.0, z: float = 2.0) -> int:
    """The candidate to play instead of the base choice (row 0 of ``scores`` (C, n): each candidate's
    score on the same n deals, ``weights`` (n,) summing to 1), or 0 to keep it: the best weighted mean
    among the candidates whose paired difference to the base beats ``margin`` by ``z`` standard errors.

    Why the test: the best of C noisy means is biased upwards. Measured against the shipped DMC agent as
    base, in duplicate on deals of seed 2026 (``benchmarks/bench_search.py``): 8 deals x 3 candidates
    switching to the best mean (z = 0) lost 0.47 a hand [-0.71, -0.23] (1,000 deals); 16 x 4 on 200
    deals: z = 0 -0.74 [-1.35, -0.13], z = 1 -0.18 [-1.13, +0.78], z = 2 +0.58 [+0.10, +1.06]."""
    diff = scores[1:] - scores[:1]  # (C - 1, n) paired with the base choice
    mean = diff @ weights
    ess = 1.0 / float(np.square(weights).sum())
    var = np.square(diff - mean[:, None]) @ weights * ess / max(ess - 1.0, 1.0)
    se = np.sqrt(var / ess)
    ok = mean - margin > z * se
    if not ok.any():
        return 0
    return int(np.argmax(np.where(ok, mean, -np.inf))) + 1


def check_spec(spec: str | SchemeSpec) -> tuple[str, dict[str, Any]]:
    """``"search:BASE?samples=32&candidates=4"`` -> ``("BASE", {"samples": 32, "candidates": 4})``: the base
    spec and the options typed, from the loader's reading (`agents.loader.parse_spec`: the options follow
    the last ``?``); ``ValueError`` naming an unknown option or a bad value."""
    if isinstance(spec, str) and spec.startswith(SCHEME):
        spec = parse_spec(spec)
    if not isinstance(spec, SchemeSpec) or spec.scheme != SCHEME[:-1]:
        raise ValueError(f"a search agent spec is 'search:BASE[?option=value&...]', got {spec!r}")
    text = spec.text
    if not spec.target:
        raise ValueError(f"{text!r}: no base agent after 'search:' (e.g. search:pretrained)")
    options: dict[str, Any] = {}
    for key, value in spec.options:
        if key not in OPTIONS:
            raise ValueError(f"{text!r}: unknown option {key!r}{did_you_mean(key, OPTIONS)}; the options: "
                             f"{', '.join(OPTIONS)}")
        if not value:
            raise ValueError(f"{text!r}: option {key!r} needs a value ({key}=...)")
        kind = OPTIONS[key][0]
        try:
            options[key] = kind(value)
        except ValueError:
            what = {int: "a whole number", float: "a number"}.get(kind, kind.__name__)
            raise ValueError(f"{text!r}: option {key}={value!r} is not {what}") from None
    return spec.target, options


#: the agents a search runs inside its rollouts, and what running a search there would cost
_INNER = {"base": "each of its decisions is a search of its own, and it plays the rollouts unless rollout= is "
                  "given, so every step of every rollout would search again",
          "rollout": "it plays every step of every rollout, so each step would search again",
          "belief": "it is asked about every move of the hand for every drawn deal, so each would search again"}


def nested_search_problem(role: str, agent: Any) -> str | None:
    """Why ``agent`` (a spec or an object) cannot be the search's ``role`` (base, rollout, belief), or None.

    A search inside a search is refused rather than bounded: one decision of the outer search plays
    ``samples x candidates`` rollouts of tens of steps each, and with a search inside, each of those steps
    runs a whole search of its own (thousands of searches for one decision with the defaults: practically
    a hang). A bound on the total would refuse every useful nesting anyway; the inner search's base plays
    the rollouts without it."""
    if isinstance(agent, str):
        if not agent.startswith(SCHEME):
            return None
        label, inner = agent, agent[len(SCHEME):].partition("?")[0]  # (its base's name up to a "?", for the words)
    elif isinstance(agent, SearchAgent):
        label, inner = agent.name, getattr(agent.base, "name", None)
    else:
        return None
    instead = f" (e.g. {inner!r})" if inner else ""
    return (f"the {role} {label!r} is itself a search, refused: {_INNER[role]} (a search within a search: "
            f"practically a hang); give a {role} that does not search{instead}")


def check_options(samples: Any = _DEFAULT["samples"], candidates: Any = _DEFAULT["candidates"],
                  prior: Any = _DEFAULT["prior"], margin: Any = _DEFAULT["margin"], z: Any = _DEFAULT["z"],
                  seed: Any = _DEFAULT["seed"], temperature: Any = _DEFAULT["temperature"],
                  endgame: Any = _DEFAULT["endgame"], where: str = "search") -> None:
    """``ValueError`` naming the first option whose value cannot work; run before any agent loads, so a
    bad spec fails at once, not at its first searched decision (a negative seed did, in the draws)."""
    def whole(value: Any) -> bool:
        return not isinstance(value, bool) and isinstance(value, (int, np.integer))

    def real(value: Any) -> bool:
        return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
            and bool(np.isfinite(value))

    for key, value, low in (("samples", samples, 1), ("candidates", candidates, 1)):
        if not whole(value) or value < low:
            raise ValueError(f"{where}: {key} must be a whole number of at least {low}, got {value!r}")
    if samples * candidates > MAX_ROLLOUTS:
        raise ValueError(f"{where}: samples x candidates = {samples * candidates:,} rollouts per decision, "
                         f"more than {MAX_ROLLOUTS:,}")
    if prior not in ("deck", "cards"):
        raise ValueError(f"{where}: prior must be 'deck' or 'cards', got {prior!r}")
    if not real(margin) or margin < 0:
        raise ValueError(f"{where}: margin must be a finite number >= 0, got {margin!r}")
    if not real(z) or z < 0:
        raise ValueError(f"{where}: z must be a finite number >= 0, got {z!r}")
    if not whole(seed) or seed < 0:  # (numpy's generators take no negative seed)
        raise ValueError(f"{where}: seed must be a whole number >= 0, got {seed!r}")
    if not real(temperature) or temperature <= 0:
        raise ValueError(f"{where}: temperature must be a positive number, got {temperature!r}")
    if not whole(endgame) or not 0 <= endgame <= SOLVE_LIMIT:
        raise ValueError(f"{where}: endgame must be a whole number of cards from 0 (off) to {SOLVE_LIMIT}, "
                         f"got {endgame!r}")


class SearchAgent(BatchAgent):
    """BASE, searching its best moves at play decisions (see the module doc)."""

    def __init__(self, base: Any, *, samples: int = _DEFAULT["samples"], candidates: int = _DEFAULT["candidates"],
                 rollout: Any = None, prior: str = _DEFAULT["prior"], margin: float = _DEFAULT["margin"],
                 z: float = _DEFAULT["z"], seed: int = _DEFAULT["seed"], belief: Any = None,
                 temperature: float = _DEFAULT["temperature"], endgame: int = _DEFAULT["endgame"],
                 name: str | None = None):
        check_options(samples, candidates, prior, margin, z, seed, temperature, endgame)
        self.endgame = int(endgame)
        for role, agent in (("base", base), ("rollout", rollout), ("belief", belief)):
            problem = nested_search_problem(role, agent)
            if problem is not None:
                raise ValueError(f"search: {problem}")
        self.belief = None if belief is None else as_batch_agent(belief)
        self.temperature = float(temperature)
        #: stream -> the play phase's public history as its decisions saw it, and the stream's last play
        self._plays: dict[int, list[tuple[int, int]]] = {}
        self._last: dict[int, int] = {}
        self.base = as_batch_agent(base)
        self.rollout = self.base if rollout is None else as_batch_agent(rollout)
        self.samples, self.candidates = int(samples), int(candidates)
        self.prior, self.margin, self.z, self.seed = prior, float(margin), float(z), int(seed)
        self.name = name or f"search:{getattr(base, 'name', type(base).__name__)}"
        #: what the searches cost: decisions searched, rollouts played, rollout steps, wall and CPU seconds
        self.stats = {"searched": 0, "rollouts": 0, "steps": 0, "wall_seconds": 0.0, "cpu_seconds": 0.0,
                      "weighted": 0, "unweighted": 0, "ess": 0.0, "exact_decisions": 0, "exact_rollouts": 0}

    # ------------------------------------------------------------------ the agent interface
    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        for agent in {id(self.base): self.base, id(self.rollout): self.rollout}.values():
            agent.begin_hands(streams, seeds)
        for st in np.asarray(streams).tolist():
            self._plays.pop(st, None)
            self._last.pop(st, None)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.seed = int(seed)

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        actions = np.asarray(self.base.act_batch(decisions), dtype=np.int64).copy()
        counts = np.diff(decisions.legal_starts)
        play = decisions.phase == _PLAY
        if self.belief is not None:
            for i in np.flatnonzero(play):
                self._remember(int(decisions.stream[i]), decisions.observation[i])
        idx = np.flatnonzero(play & (counts > 1))
        if idx.size and self.candidates > 1:
            actions[idx] = self.search(decisions.take(idx), actions[idx])
        if self.belief is not None:
            for i in np.flatnonzero(play):
                self._last[int(decisions.stream[i])] = int(actions[i])
        return actions

    def _remember(self, stream: int, planes: np.ndarray) -> None:
        """The stream's public history of the play so far: the planes' history while it holds every play
        (fewer than ``HISTORY``), else the remembered one and the three plays since this seat's last
        (its own, as it chose it, then the two others'); unknown (None) when they do not fit."""
        seen = visible_plays(planes)
        if len(seen) < HISTORY:
            self._plays[stream] = seen
            return
        known, last = self._plays.get(stream), self._last.get(stream)
        if known is not None and last is not None and seen[-3] == (0, last):
            self._plays[stream] = known + seen[-3:]
        else:
            self._plays[stream] = None

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
            # solved exactly: every legal move is a candidate (its values cost no rollout)
            wide = self._exact_decision(decisions, i)
            rest = order[order != chosen[i]][: None if wide else self.candidates - 1]
            out.append(np.concatenate([[chosen[i]], rest]).astype(np.int64))
        return out

    def _exact_decision(self, decisions: Decisions, i: int) -> bool:
        """Whether decision i is solved exactly on each drawn deal (``endgame``): its hands hold at most
        ``endgame`` cards (R21: the counts are public)."""
        if not self.endgame:
            return False
        left = read_cards_left(decisions.observation[i])
        return int(np.sum(left)) <= self.endgame

    def _rng(self, decisions: Decisions, i: int, salt: int) -> np.random.Generator:
        key = zlib.crc32(np.ascontiguousarray(decisions.observation[i]).tobytes())
        key = zlib.crc32(decisions.legal(i).tobytes(), key)
        return np.random.default_rng([self.seed, key, salt])

    def rollout_scores(self, decisions: Decisions, cands: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each decision ``(scores (C, n), weights (n,))``: each of its C candidates' score for the seat on
        turn on each of the n deals drawn (the same deals for every candidate), and the deals' weights
        (summing to 1; uniform without a belief agent). A candidate's mean is ``scores @ weights``."""
        wall0, cpu0 = time.perf_counter(), time.process_time()
        n = self.samples
        sizes = np.array([c.size * n for c in cands])
        total = int(sizes.sum())
        env = VectorDouDizhu(total, seed=None)
        first = np.empty(total, np.int64)
        weights = np.full((len(cands), n), 1.0 / n)
        score = np.zeros(total, np.float64)
        done = np.zeros(total, bool)
        offset = 0
        for i, c in enumerate(cands):
            seed = int(self._rng(decisions, i, 2).integers(2**63))
            hands, bottoms = sample_hidden(decisions.observation[i], n, seed=seed, prior=self.prior)
            if self.belief is not None:
                weights[i] = self._weights(decisions, i, hands, bottoms)
            for k, move in enumerate(c):  # the same deals for every candidate
                slots = np.arange(offset + k * n, offset + (k + 1) * n)
                env.load_view(slots, decisions.observation[i], hands, bottoms)
                first[slots] = move
            if self._exact_decision(decisions, i):  # each candidate's exact value on each deal
                for k in range(n):
                    values = move_values(Position.of_batch(env.state, offset + k), c, seat=0)
                    score[offset + k: offset + c.size * n: n] = [values[int(m)] for m in c]
                done[offset: offset + c.size * n] = True
                self.stats["exact_decisions"] += 1
            offset += c.size * n
        actions = first
        steps = 0
        for _ in range(_MAX_STEPS):
            if done.all():
                break
            _, _, ended, info = env.step(actions, observe=False, active=~done if self.endgame else None)
            new = ended & ~done
            score[new] = info["final_scores"][new, 0]  # the searching seat is seat 0 of every table
            done |= new
            if self.endgame:
                self._solve_rollouts(env, score, done)
            if done.all():
                break
            live = np.flatnonzero(~done)
            actions = env.default_actions()
            actions[live] = self.rollout.act_batch(Decisions.of_env(env, live))
            steps += 1
        else:
            raise RuntimeError(f"search: {int((~done).sum())} rollouts did not end in {_MAX_STEPS} steps")
        self.stats["rollouts"] += total
        self.stats["steps"] += steps
        self.stats["wall_seconds"] += time.perf_counter() - wall0
        self.stats["cpu_seconds"] += time.process_time() - cpu0
        bounds = np.concatenate([[0], sizes.cumsum()])
        return [(score[bounds[i]:bounds[i + 1]].reshape(c.size, n), weights[i]) for i, c in enumerate(cands)]

    def _solve_rollouts(self, env: VectorDouDizhu, score: np.ndarray, done: np.ndarray) -> None:
        """The live rollouts whose hands hold at most ``endgame`` cards end here: their score is the exact
        value of the position for seat 0 (``ddz_env.endgame.solve_scores``)."""
        st = env.state
        small = ~done & (st.phase == _PLAY) & (st.n_cards.sum(axis=1) <= self.endgame)
        for b in np.flatnonzero(small).tolist():
            score[b] = solve_scores(Position.of_batch(st, b))[0]
            done[b] = True
            self.stats["exact_rollouts"] += 1

    def _weights(self, decisions: Decisions, i: int, hands: np.ndarray, bottoms: np.ndarray) -> np.ndarray:
        """Belief weights of decision i's drawn deals (agents/search/weights.py), uniform when the
        stream's history is not known (the agent did not see every decision of the hand)."""
        n = hands.shape[0]
        plays = self._plays.get(int(decisions.stream[i]))
        if plays is None:
            self.stats["unweighted"] += 1
            return np.full(n, 1.0 / n)
        planes = decisions.observation[i]
        first, history = bidding_history(planes)
        lord = int(read_status(planes).landlord)
        played = read_cards(planes, "played").astype(np.int8)  # (3, 15) relative seats
        dealt = np.concatenate([np.broadcast_to(read_cards(planes, "hand"), (n, 1, NUM_RANKS)), hands], axis=1) + played
        dealt[:, lord] -= bottoms
        logw = replay_log_weights(dealt, bottoms, first, history + plays, 0, self.belief, self.temperature)
        w, ess = normalise(logw)
        self.stats["weighted"] += 1
        self.stats["ess"] += ess
        return w

    def search(self, decisions: Decisions, chosen: np.ndarray) -> np.ndarray:
        """The searched move of each (play, several legal moves) decision; ``chosen``: the base's."""
        cands = self.candidate_moves(decisions, chosen)
        scored = self.rollout_scores(decisions, cands)
        self.stats["searched"] += len(decisions)
        out = chosen.copy()
        for i, (c, (scores, w)) in enumerate(zip(cands, scored)):
            j = better_than_base(scores, w, self.margin, self.z)
            if j:
                out[i] = c[j]
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
                "cpu_seconds_per_decision": self.stats["cpu_seconds"] / k,
                "weighted": self.stats["weighted"], "unweighted": self.stats["unweighted"],
                "mean_ess": self.stats["ess"] / max(self.stats["weighted"], 1)}

    def __repr__(self) -> str:
        return (f"SearchAgent({self.name}, samples={self.samples}, candidates={self.candidates}, "
                f"prior={self.prior!r})")


def from_spec(spec: str | SchemeSpec, **kwargs: Any) -> SearchAgent:
    """The loader's entry point for ``search:BASE[?options]`` (``kwargs`` go to the constructor)."""
    from ..loader import load

    base_spec, options = check_spec(spec)
    spec = spec.text if isinstance(spec, SchemeSpec) else spec
    rollout = options.pop("rollout", "") or None
    belief = options.pop("belief", "") or None
    # every value and every inner agent checked before any agent loads (a checkpoint may take seconds)
    for role, inner in (("base", base_spec), ("rollout", rollout), ("belief", belief)):
        problem = nested_search_problem(role, inner)
        if problem is not None:
            raise ValueError(f"{spec!r}: {problem}")
    check_options(**{k: v for k, v in {**options, **kwargs}.items() if k in _CHECKED}, where=repr(spec))
    base = load(base_spec)
    return SearchAgent(base, rollout=None if rollout is None else load(rollout),
                       belief=None if belief is None else load(belief), name=spec, **{**options, **kwargs})


#: the options check_options takes (rollout and belief are agents, loaded)
_CHECKED = ("samples", "candidates", "prior", "margin", "z", "seed", "temperature", "endgame")

__all__ = ["SearchAgent", "OPTIONS", "check_spec", "from_spec", "check_options", "better_than_base",
           "visible_plays"]
