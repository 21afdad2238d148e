"""A learner's weights shared with its actor processes: a shared-memory copy under a sequence lock.

The learner makes ``version`` (a shared integer) odd, copies its weights into the shared copy
(:func:`write_weights`), and makes it even again; an actor copies them out when the version is even
and unchanged across the copy (:func:`read_weights`). No lock is held across processes, so an actor
killed at any point cannot block the learner (with a shared lock, an actor killed while copying hung
the learner forever). DMC's actor processes and the library learners' collector processes use it.
"""
from __future__ import annotations

from typing import Iterable

import torch


def read_weights(shared_model: torch.nn.Module, version, model: torch.nn.Module) -> int | None:
    """Copy the shared weights into ``model`` unless the learner is writing them: the version it read
    (even), or None (odd: a write in progress, or it changed during the copy; the caller tries later)."""
    v = version.value
    if v % 2:
        return None
    model.load_state_dict(shared_model.state_dict())
    return v if version.value == v else None


def write_weights(shared: Iterable[torch.Tensor], version, weights: Iterable[torch.Tensor]) -> None:
    """The learner's ``weights`` (its state dict's values) into the ``shared`` tensors, in the same order,
    the version odd while they are written."""
    version.value += 1  # odd: readers wait
    with torch.no_grad():
        for dst, src in zip(shared, weights):
            dst.copy_(src)
    version.value += 1


__all__ = ["read_weights", "write_weights"]
