"""People at the table: one hand between people and agents (:mod:`.match`, which decides what a
seat is shown), played in the terminal (:mod:`.terminal`, ``ddz-play`` / ``python -m agents.play``)
or in the browser (:mod:`.web`, ``ddz-web`` / ``python -m agents.play.web``).

The former module ``agents.play``'s public names are kept here: ``main``, ``render`` and ``play_hand``
(:mod:`.terminal`), ``Match``, ``seat_view`` and ``spaced`` (:mod:`.match`).
"""
from __future__ import annotations

from .._exports import lazy

__getattr__, __dir__ = lazy(__name__, {"main": ".terminal", "render": ".terminal", "play_hand": ".terminal",
                                       "Match": ".match", "seat_view": ".match", "spaced": ".match"})
__all__ = ["main", "render", "play_hand", "Match", "seat_view", "spaced"]
