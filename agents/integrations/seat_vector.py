"""One learning seat at each of N tables, the other seats played by opponents in batch: the single-seat env
(`agents.integrations.seat_env.DouDizhuSeatEnv`) for a collector that scores hundreds of tables in one
forward pass (Tianshou's and SB3's PPO at one seat).

It is `ddz_env.vector.VectorDouDizhu` with a learning seat drawn per hand at each table. After every
`VectorSeatEnv.step` each table waits at its learning seat's turn: the opponents' moves between two of the
learner's decisions are played in batch (one `act_batch` per opponent and step over all tables where it is on
turn; tables already waiting are held with `VectorDouDizhu.step(active=...)`). What one table gives:

| Item | Value |
|---|---|
| Observation | the learning seat's planes (N, 29, 4, 15) int8; its legal moves as compact sets (`legal_sets()`: `(starts (N + 1,), ids)`), `padded_legal(width)` (N, width) with `-1` after them, or a dense mask on demand (`action_masks()`) |
| Reward | 0 until the learner's hand ends, then its R19 score times `reward_scale` |
| Episode | one hand, from the learning seat's first decision to the end of the hand; the table then holds the next hand at its learning seat's first decision (auto-reset: `step` returns that observation, its `terminal` says which tables ended) |
| Skipped hands | a hand that ends without a decision of the learning seat (e.g. bidding off and a landlord playing out before the seat's turn) is no episode: played on, counted in `skipped` |
| Void hand | an episode with reward 0 (all three passed, R4), as the single-seat env |
| Opponents | agent specs (`agents.load` names, paths) or batch agents; table b's two other seats are played by `opponents[b % len(opponents)]` |

Seeding: `seed` seeds the deals (one generator per table, as `VectorDouDizhu`), the learning seats and the
opponents' streams; the same seed and the same actions give the same hands.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ddz_env.rules import deal_hand
from ddz_env.vector import VectorDouDizhu

from ..base import Decisions

#: the largest number of hands in a row a table may end without a decision of its learning seat
MAX_SKIPPED_HANDS = 1000


def _opponent(spec: Any) -> Any:
    if isinstance(spec, (str, os.PathLike)):
        from ..loader import load

        return load(spec)
    if not callable(getattr(spec, "act_batch", None)):
        raise TypeError(f"an opponent is an agents.load spec or a batch agent (act_batch(decisions)), got {spec!r}")
    return spec


class VectorSeatEnv:
    """``num_envs`` tables, a learning seat at each (drawn per hand), the others played by ``opponents`` (a spec,
    or a sequence of them: table b plays against ``opponents[b % len]`` at both other seats)."""

    def __init__(self, num_envs: int, opponents: Any = "random", *, seed: int | None = 0, reward_scale: float = 1.0,
                 rules: Any = None):
        specs: Sequence[Any] = [opponents] if isinstance(opponents, (str, os.PathLike)) or hasattr(
            opponents, "act_batch") else list(opponents)
        if not specs:
            raise ValueError("opponents: at least one agent spec")
        self.specs = [os.fspath(s) if isinstance(s, os.PathLike) else s for s in specs]
        self.opponents = [_opponent(s) for s in specs]
        self.env = VectorDouDizhu(num_envs, seed=seed, rules=rules)
        self.num_envs = N = self.env.num_envs
        self.reward_scale = float(reward_scale)
        self.table_opponent = np.arange(N) % len(self.opponents)
        self._seed(seed)
        self.skipped = 0  # hands that ended without a decision of their learning seat
        self.hands = 0  # the learner's episodes that ended

    # ------------------------------------------------------------------ seats and hands
    def _seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(None if seed is None else [int(seed), 1])
        N = self.num_envs
        self.seat = np.zeros(N, np.int64)
        self.acted = np.zeros(N, bool)  # the learning seat has acted in the table's current hand
        self._new_hands(np.arange(N))

    def _new_hands(self, tables: np.ndarray) -> None:
        """Hands just dealt at ``tables``: a learning seat for each, the opponents' streams seeded."""
        if tables.size == 0:
            return
        self.seat[tables] = self.rng.integers(3, size=tables.size)
        self.acted[tables] = False
        seeds = self.rng.integers(2**63, size=(tables.size, 3), dtype=np.uint64)
        for k, agent in enumerate(self.opponents):
            mine = self.table_opponent[tables] == k
            if not mine.any() or not hasattr(agent, "begin_hands"):
                continue
            t = tables[mine]
            seats = (self.seat[t, None] + np.array([1, 2])) % 3  # the two opponent seats
            agent.begin_hands((t[:, None] * 3 + seats).reshape(-1), seeds[mine][:, :2].reshape(-1))

    def _advance(self, reward: np.ndarray, terminal: np.ndarray, scores: np.ndarray) -> None:
        """Opponents act, in batch, until every table waits at its learning seat; hands that end on the way are
        the learner's episodes' ends (``reward``, ``terminal``, ``scores`` filled in) or skipped hands."""
        env = self.env
        skipped_row = np.zeros(self.num_envs, np.int64)
        while True:
            move = env.current_player != self.seat
            if not move.any():
                return
            obs = env.observe()
            legal = env.legal_sets()
            actions = np.zeros(self.num_envs, np.int64)
            for k, agent in enumerate(self.opponents):
                idx = np.flatnonzero(move & (self.table_opponent == k))
                if idx.size:
                    actions[idx] = agent.act_batch(Decisions.of_env(env, idx, observation=obs, legal_sets=legal))
            _, _, done, info = env.step(actions, observe=False, active=move)
            self._ended(np.flatnonzero(done), info, reward, terminal, scores, skipped_row)

    def _ended(self, ended: np.ndarray, info: dict, reward: np.ndarray, terminal: np.ndarray, scores: np.ndarray,
               skipped_row: np.ndarray | None = None) -> None:
        if ended.size == 0:
            return
        lost = ended[~self.acted[ended]]  # no decision of the learning seat: no episode
        if lost.size:
            self.skipped += int(lost.size)
            if skipped_row is not None:
                skipped_row[lost] += 1
                if int(skipped_row.max()) >= MAX_SKIPPED_HANDS:
                    raise RuntimeError(f"{MAX_SKIPPED_HANDS} hands in a row without a decision of the learning seat")
        mine = ended[self.acted[ended]]
        if mine.size:
            s = info["final_scores"][mine]
            scores[mine] = s
            reward[mine] = s[np.arange(mine.size), self.seat[mine]] * self.reward_scale
            terminal[mine] = True
            self.hands += int(mine.size)
        self._new_hands(ended)

    # ------------------------------------------------------------------ the learner's view
    def observe(self) -> np.ndarray:
        """(N, 29, 4, 15) int8: each table's learning seat's planes (every table waits at its turn)."""
        return self.env.observe()

    def legal_sets(self) -> tuple[np.ndarray, np.ndarray]:
        """``(starts (N + 1,), ids)``: table b's learning seat may play ``ids[starts[b]:starts[b + 1]]`` (read-only)."""
        _, ids, starts = self.env.legal_sets()
        return starts, ids

    def padded_legal(self, width: int, dtype: Any = np.int16) -> np.ndarray:
        """(N, ``width``) the legal ids of each table first, ``-1`` after them; ``ValueError`` if a set is wider."""
        starts, ids = self.legal_sets()
        counts = np.diff(starts)
        if counts.size and int(counts.max()) > width:
            raise ValueError(f"a legal set of {int(counts.max())} moves is wider than {width}")
        out = np.full((self.num_envs, width), -1, dtype)
        out[np.repeat(np.arange(self.num_envs), counts), np.arange(ids.size) - np.repeat(starts[:-1], counts)] = ids
        return out

    def action_masks(self) -> np.ndarray:
        """Dense bool (N, 24648): each table's legal moves (on demand: the compact sets are what is kept)."""
        return self.env.action_masks().view(bool)

    # ------------------------------------------------------------------ the API
    def reset(self, seed: int | None = None, tables: Any = None) -> np.ndarray:
        """New hands (all tables, or ``tables``), each at its learning seat's first decision; their planes
        (N, 29, 4, 15) of every table. ``seed`` (all tables only) reseeds deals, seats and opponents. A table
        whose learner has not acted in its hand yet (just dealt, or auto-reset after an episode) keeps it."""
        N = self.num_envs
        reward, terminal, scores = np.zeros(N, np.float32), np.zeros(N, bool), np.zeros((N, 3), np.int64)
        if seed is not None:
            if tables is not None:
                raise ValueError("reset: a seed reseeds every table; give seed or tables, not both")
            self.env.reset(seed=seed)
            self._seed(seed)
        else:
            t = np.arange(N) if tables is None else np.unique(np.asarray(tables, np.int64).reshape(-1))
            if t.size and (t.min() < 0 or t.max() >= N):
                raise ValueError(f"reset: tables are 0..{N - 1}, got {tables!r}")
            t = t[self.acted[t]]  # abandon the hands the learner has played in; deal afresh
            if t.size:
                self.env.load_deals(t, [deal_hand(self.rng) for _ in range(t.size)])
                self._new_hands(t)
        self._advance(reward, terminal, scores)  # (a fresh deal cannot end an episode: the learner has not acted)
        return self.observe()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """The learning seats' ``actions`` (N,) ids, one per table; then the opponents until every table waits
        at its learning seat again. Returns ``(planes (N, 29, 4, 15), reward (N,) float32, terminal (N,) bool,
        info)``: ``info["scores"]`` (N, 3) the raw R19 scores of the hands that ended (zeros elsewhere) and
        ``info["seat"]`` their learning seats. An illegal action raises ``ValueError`` (nothing changes)."""
        N = self.num_envs
        reward, terminal, scores = np.zeros(N, np.float32), np.zeros(N, bool), np.zeros((N, 3), np.int64)
        a = np.asarray(actions)
        if a.shape != (N,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions: {N} integer action ids, one per table, got {a.dtype} of shape {a.shape}")
        seat = self.seat.copy()
        _, _, done, info = self.env.step(a.astype(np.int64, copy=False), observe=False)  # ValueError: unchanged
        self.acted[:] = True
        self._ended(np.flatnonzero(done), info, reward, terminal, scores)
        self._advance(reward, terminal, scores)
        return self.observe(), reward, terminal, {"scores": scores, "seat": seat}

    def __repr__(self) -> str:
        return f"VectorSeatEnv({self.num_envs} tables, opponents={self.specs!r})"


__all__ = ["VectorSeatEnv", "MAX_SKIPPED_HANDS"]
