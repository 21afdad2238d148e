"""Fit the rule agent's win-chance models (``LANDLORD_WEIGHTS``, ``FARMER_WEIGHTS``).

    python -m agents.cli.calibrate --deals 6000 --seed 12345

Plays rule-vs-rule hands with a fixed landlord (bidding and doubling off), and fits
two logistic regressions by Newton's method: the landlord's win from its 17 cards
before the bottom (what it knows when bidding), and the farmers' win from one
farmer's 17 cards (what it knows when doubling). Prints the weights to paste into
``agents/baselines/rule_agent.py``. A seed other than the evaluation seeds keeps the fit
honest.
"""
from __future__ import annotations

import argparse
import warnings

from .._entry import needs_installed, plain

with needs_installed("python -m agents.cli.calibrate", "agents.cli.calibrate", active=__name__ == "__main__"):
    import numpy as np

    from ..evaluation.arena import COL, Job, make_deal, play_hands
    from ..baselines.rule_agent import RuleAgent, features


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iters: int = 50) -> np.ndarray:
    """Weights w of P(y = 1) = sigmoid(x @ w), a ridge-regularized Newton fit (no penalty on column 0)."""
    w = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], l2)
    reg[0] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        grad = x.T @ (p - y) + reg * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def collect(deals: int, seed: int, agent=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    agent = agent or RuleAgent()
    dealt = [make_deal(seed, i) for i in range(deals)]
    rows = play_hands([agent], [Job(i, 0, d, (0, 0, 0)) for i, d in enumerate(dealt)], seed, rules="douzero")
    xl, yl, xf, yf = [], [], [], []
    for d, row in zip(dealt, rows):
        lord = int(row[COL["landlord"]])
        lord_won = int(row[COL["winner"]] == lord)
        xl.append(features(d.hands[lord]))
        yl.append(lord_won)
        for s in range(3):
            if s != lord:
                xf.append(features(d.hands[s]))
                yf.append(1 - lord_won)
    return np.array(xl), np.array(yl, float), np.array(xf), np.array(yf, float)


def main() -> None:
    p = argparse.ArgumentParser(description=plain(__doc__.splitlines()[0]))
    p.add_argument("--deals", type=int, default=6000)
    p.add_argument("--seed", type=int, default=12345)
    a = p.parse_args()
    warnings.simplefilter("ignore")
    xl, yl, xf, yf = collect(a.deals, a.seed)
    wl, wf = fit_logistic(xl, yl), fit_logistic(xf, yf)
    print(f"landlord win rate {yl.mean():.3f} over {len(yl)} hands")
    print("LANDLORD_WEIGHTS = (" + ", ".join(f"{v:.3g}" for v in wl) + ")")
    print("FARMER_WEIGHTS = (" + ", ".join(f"{v:.3g}" for v in wf) + ")")


if __name__ == "__main__":
    with needs_installed("python -m agents.cli.calibrate", "agents.cli.calibrate"):
        main()
