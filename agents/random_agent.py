"""Uniform over the legal actions: the floor any agent must clear."""
from __future__ import annotations

from typing import Any

import numpy as np

from .base import legal_ids


class RandomAgent:
    """Picks a legal action uniformly at random, from its own seeded generator.

    ``reset(seed)`` reseeds it (evaluators do so per hand and seat), so its choices
    depend only on the seed and what it is shown.
    """

    name = "random"

    def __init__(self, seed: int | None = 0):
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], env: Any = None) -> int:
        legal = legal_ids(observation, env)
        if legal.size == 0:
            raise ValueError("RandomAgent.act: no legal action (is this seat on turn?)")
        return int(legal[self.rng.integers(legal.size)])

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed})"
