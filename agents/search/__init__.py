"""Agents that search at decision time over the batched env: ``search:BASE`` (:mod:`.agent`)."""
from __future__ import annotations

from .._exports import lazy

__getattr__, __dir__ = lazy(__name__, {"SearchAgent": ".agent", "check_spec": ".agent", "from_spec": ".agent"})
__all__ = ["SearchAgent", "check_spec", "from_spec"]
