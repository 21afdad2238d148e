"""Uniform over the legal actions: the floor any agent must clear."""
from __future__ import annotations

import numpy as np

from ..base import BatchAgent, Decisions
from ..loader import config_of


class RandomAgent(BatchAgent):
    """Picks a legal action uniformly at random, one seeded generator per stream.

    ``begin_hands(streams, seeds)`` (evaluators call it per hand and seat) and
    ``reset(seed)`` (stream 0, the stream of ``act``) reseed, so its choices depend only on
    the seed and what it is shown, never on the batch a decision came in. A stream that
    was never seeded starts from ``(seed, stream)``.
    """

    name = "random"

    def __init__(self, seed: int | None = 0):
        self.seed = seed
        self.rng = np.random.default_rng(seed)  # stream 0
        self._rngs: dict[int, np.random.Generator] = {0: self.rng}

    def begin_hands(self, streams: np.ndarray, seeds: np.ndarray) -> None:
        for s, seed in zip(np.asarray(streams).tolist(), np.asarray(seeds).tolist()):
            self._rngs[s] = np.random.default_rng(int(seed))
            if s == 0:
                self.rng = self._rngs[0]

    def _rng(self, stream: int) -> np.random.Generator:
        rng = self._rngs.get(stream)
        if rng is None:
            rng = self._rngs[stream] = np.random.default_rng(None if self.seed is None else [self.seed, stream])
        return rng

    def act_batch(self, decisions: Decisions) -> np.ndarray:
        starts = decisions.legal_starts
        counts = np.diff(starts)
        if (counts == 0).any():
            raise ValueError("RandomAgent: a decision without a legal action (is this seat on turn?)")
        out = np.empty(len(decisions), np.int64)
        for i, (s, n) in enumerate(zip(decisions.stream.tolist(), counts.tolist())):
            out[i] = decisions.legal_ids[starts[i] + self._rng(s).integers(n)]
        return out

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed})"


def from_checkpoint(checkpoint: dict) -> RandomAgent:
    """The factory of ``agents.load("random", **kwargs)`` (and of checkpoints of this kind): kwargs in ``"config"``."""
    return RandomAgent(**config_of(checkpoint))
