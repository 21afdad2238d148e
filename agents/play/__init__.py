"""People at the table: one hand between people and agents (:mod:`.match`, which decides what a
seat is shown), played in the terminal (:mod:`.terminal`, ``ddz-play`` / ``python -m agents.play``)
or in the browser (:mod:`.web`, ``ddz-web`` / ``python -m agents.play.web``).

``main`` (the former module ``agents.play``'s) is :func:`agents.play.terminal.main`.
"""
from __future__ import annotations

from .._exports import lazy

__getattr__, __dir__ = lazy(__name__, {"main": ".terminal", "render": ".terminal", "Match": ".match",
                                       "seat_view": ".match"})
__all__ = ["main", "render", "Match", "seat_view"]
