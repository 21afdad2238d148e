"""Head-to-head evaluation: agents play seeded deals, and the figures come with their intervals.

* :mod:`.arena`: the batched arena, which only schedules hands and dispatches decisions to agents
  (one ``VectorDouDizhu`` per seating; the env reports each hand's summary);
* :mod:`.protocols`: the two protocols, duplicate and fixed-landlord (:func:`evaluate`; ``evaluate.py``
  is the command line), replays;
* :mod:`.stats`: means, t intervals, the per-role summaries;
* :mod:`.league`: many agents, every pair in duplicate, ratings with bootstrap intervals.

The names of the former module ``agents.evaluation`` (``evaluate``, ``run_records``, ...) are
exported here.
"""
from __future__ import annotations

from .._exports import lazy

_WHERE = {name: ".protocols" for name in ("evaluate", "run_records", "ReplayWriter", "ReplayWriteError", "jobs_for",
                                         "complete_deals", "DUPLICATE_SEATINGS", "MODES", "file_label", "replay_name")}
_WHERE.update({"AgentError": ".arena", "play_league": ".league"})
__getattr__, __dir__ = lazy(__name__, _WHERE)
__all__ = sorted(_WHERE)
