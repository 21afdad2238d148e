"""The learning target of a seat's hand: the one function every learner reads, DMC's experience, our PPO,
TorchRL's regrouping, RLlib's tables and SB3's buffer alike. Pure: scalars or arrays alike.

=============  ==============================  =====================================
``target``     a play decision's target        a bid's (bid, double, redouble)
=============  ==============================  =====================================
``"scale"``    score / ``score_scale``         score / ``score_scale``
``"sign"``     sign(score): a win or a loss    sign(score)
``"none"``     score                           score
``"sign_play"`` sign(score)                    score / ``score_scale``
=============  ==============================  =====================================

``score`` is the seat's R19 score of the hand (or the score already scaled by a library's reward scale, with
``score_scale`` 1). Why ``"sign_play"`` (agents/dmc/README.md, Ablations): at 6M frames the sign target lifted
DMC's play against ``rule`` in fixed-landlord deals from -0.41 to -0.05 per hand, but with it the bid,
double and redouble choices, whose only effect is the stake, learned to double 82% of the time (-1.97 per
hand in full-game duplicate deals). Stakes matter to those choices only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

TARGETS = ("scale", "sign", "none", "sign_play")


def hand_target(score: Any, bidding: Any = None, target: str = "sign_play", score_scale: float = 8.0) -> Any:
    """The target of decisions whose seat's hand ended in ``score``: ``bidding`` (bool, per decision or one
    for all) says which are bids, doubles and redoubles (needed by ``"sign_play"`` only). float32 arrays for
    arrays, a float for scalars; ``ValueError`` for an unknown ``target`` or ``"sign_play"`` without ``bidding``."""
    s = np.asarray(score, np.float32)
    scaled = s / np.float32(score_scale)
    if target == "sign_play":
        if bidding is None:
            raise ValueError("target 'sign_play' needs to know which decisions are bids (bidding=...)")
        out = np.where(np.asarray(bidding, bool), scaled, np.sign(s))
    elif target == "scale":
        out = scaled
    elif target == "sign":
        out = np.sign(s)
    elif target == "none":
        out = s
    else:
        raise ValueError(f"unknown target {target!r}: one of {', '.join(TARGETS)}")
    out = np.asarray(out, np.float32)
    return float(out) if out.ndim == 0 else out


__all__ = ["TARGETS", "hand_target"]
