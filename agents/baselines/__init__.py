"""The baseline agents: :class:`RandomAgent` (uniform over the legal actions, seeded) and
:class:`RuleAgent` (a deterministic heuristic player), with the rule agent's hand planner
(:mod:`.planner`: a hand split into moves, and what each split costs) and the features it reads from
the public planes (:mod:`.features`). They need numpy only. (Their win-chance weights are fitted by
``python -m agents.cli.calibrate``.)
"""
from __future__ import annotations

from .._exports import lazy

__getattr__, __dir__ = lazy(__name__, {"RandomAgent": ".random_agent", "RuleAgent": ".rule_agent"})
__all__ = ["RandomAgent", "RuleAgent"]
