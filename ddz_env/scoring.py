"""The rulebook score (R18, R19) as pure functions; scalars or arrays alike.

| function | ruling |
|---|---|
| `multiplier_exponents` | R19: each farmer's exponent n_i |
| `spring_flags` | R18: spring and anti-spring |
| `hand_scores` | R19: every seat's signed score |
| `finish_hand` | R17-R19: a hand that ended, finished: the spring flags, then the scores (`Game._finish` and `VectorDouDizhu.step` both call it) |
"""
from __future__ import annotations

import numpy as np

from .cards import NUM_SEATS


def multiplier_exponents(doubled, redoubled, bombs, rockets, spring, anti_spring) -> np.ndarray:
    """Per-seat exponent n_i of R19: bombs + rockets + spring + anti_spring + d_i + d_i * r.

    ``doubled`` is (..., 3) bool (False for the landlord's seat); the others broadcast over the
    leading axes. The landlord's entry has no meaning and is returned as the common part only.
    """
    d = np.asarray(doubled, dtype=np.int64)
    r = np.asarray(redoubled, dtype=np.int64)[..., None]
    common = (np.asarray(bombs, dtype=np.int64) + np.asarray(rockets, dtype=np.int64)
              + np.asarray(spring, dtype=np.int64) + np.asarray(anti_spring, dtype=np.int64))[..., None]
    return common + d + d * r


def spring_flags(farmers_won, landlord_moves, farmer_moves) -> tuple[np.ndarray, np.ndarray]:
    """R18: spring (the landlord won and the farmers made no play at all) and anti-spring
    (the farmers won and the landlord made only its opening play). Moves exclude passes."""
    farmers_won = np.asarray(farmers_won, dtype=bool)
    spring = ~farmers_won & (np.asarray(farmer_moves) == 0)
    anti = farmers_won & (np.asarray(landlord_moves) == 1)
    return spring, anti


def hand_scores(bid, landlord, doubled, redoubled, bombs, rockets, spring, anti_spring, farmers_won) -> np.ndarray:
    """Signed score of each seat, shape (..., 3) int64 (R19).

    Farmer i scores ``bid * s * 2 ** n_i`` (s = +1 if the farmers won, else -1); the landlord
    scores minus the farmers' sum, so a hand always sums to zero. A void hand (bid 0) scores 0.
    """
    landlord = np.asarray(landlord, dtype=np.int64)
    n = multiplier_exponents(doubled, redoubled, bombs, rockets, spring, anti_spring)
    s = np.where(np.asarray(farmers_won), 1, -1)[..., None]
    farmer = np.asarray(bid, dtype=np.int64)[..., None] * s * (np.int64(1) << n)
    is_landlord = np.arange(NUM_SEATS) == landlord[..., None]
    farmer = np.where(is_landlord, 0, farmer)
    landlord_score = -farmer.sum(axis=-1, keepdims=True)
    return np.where(is_landlord, landlord_score, farmer)


def finish_hand(winner, landlord, moves_made, bid, doubled, redoubled, bombs, rockets):
    """R17-R19: the hand ended when ``winner`` played its last card: ``(farmers_won, spring,
    anti_spring, scores (..., 3) int64)``.

    ``moves_made`` (..., 3) counts each seat's plays (passes excluded); ``doubled`` (..., 3) bool
    (False for the landlord); the others broadcast over the leading axes. R17: a farmer going out
    wins for both farmers; R18: the spring flags from the plays (`spring_flags`); R19: the
    scores (`hand_scores`). The one place a hand is finished: ``Game._finish`` and
    ``VectorDouDizhu.step`` both call it."""
    landlord = np.asarray(landlord, dtype=np.int64)
    moves_made = np.asarray(moves_made, dtype=np.int64)
    farmers_won = np.asarray(winner) != landlord
    lord_moves = np.choose(landlord, (moves_made[..., 0], moves_made[..., 1], moves_made[..., 2]))
    spring, anti = spring_flags(farmers_won, lord_moves, moves_made.sum(axis=-1) - lord_moves)
    scores = hand_scores(bid, landlord, doubled, redoubled, bombs, rockets, spring, anti, farmers_won)
    return farmers_won, spring, anti, scores


__all__ = ["multiplier_exponents", "spring_flags", "hand_scores", "finish_hand"]
