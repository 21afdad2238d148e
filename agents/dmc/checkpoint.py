"""DMC checkpoints: one small module that the learner writes with and the agent reads with.

A checkpoint is a dict of plain containers and tensors (``torch.load(weights_only=True)``):
``agent`` ("dmc"), ``format_version``, ``config``, ``model_kwargs``, ``net_names``, ``model``
(the state dict), ``optimizer``, ``frames``, ``updates``, ``elapsed``, ``torch_rng`` and, for an
inline run, ``collector`` (its tables, so ``--resume`` continues exactly).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from ddz_env.files import input_file

from ..loader import check_tensor_bytes
from ..runs.folder import CHECKPOINT, CheckpointWriteError, write_checkpoint
from .config import NET_NAMES, TrainConfig
from .model import DMCModel

FORMAT_VERSION = 1


def checkpoint_dict(cfg: TrainConfig, model: DMCModel, optimizer, frames: int, updates: int, elapsed: float,
                    collector: Any | None) -> dict[str, Any]:
    """A self-describing checkpoint of plain containers and tensors (``torch.load(weights_only=True)``)."""
    return {
        "agent": "dmc",
        "format_version": FORMAT_VERSION,
        "config": cfg.to_dict(),
        "model_kwargs": model.kwargs,
        "net_names": list(NET_NAMES),
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "optimizer": optimizer.state_dict(),
        "frames": int(frames),
        "updates": int(updates),
        "elapsed": float(elapsed),
        "torch_rng": torch.get_rng_state(),
        "collector": collector.state_dict() if collector is not None else None,
    }


def save_checkpoint(ck: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``ck`` to ``path`` whole or not at all; :class:`~agents.runs.folder.CheckpointWriteError`
    (the previous checkpoint intact, how to continue) if it cannot be written."""
    write_checkpoint(ck, path)


def load_checkpoint(path: str | os.PathLike, map_location: str = "cpu") -> dict[str, Any]:
    """A DMC checkpoint (a file, or a run folder's ``checkpoint.pt``); FileNotFoundError / ValueError."""
    p = Path(path)
    if p.is_dir():
        p = p / CHECKPOINT
    if not p.exists():
        raise FileNotFoundError(f"no checkpoint at {p}")
    input_file(p, "checkpoint")  # a regular file of bounded size: no FIFO, device or 10 GB file
    try:
        ck = torch.load(p, map_location=map_location, weights_only=True)
    except Exception as e:  # noqa: BLE001 (corrupt file, not a torch file, unsafe pickle)
        raise ValueError(f"{p}: not a readable ddz-env checkpoint ({type(e).__name__}: {e})") from None
    check_tensor_bytes(ck, str(p))  # (stride-0 views: a few-KB file of tensors of any shape)
    return check_checkpoint(ck, str(p))


def check_checkpoint(ck: Any, where: str = "checkpoint") -> dict[str, Any]:
    """``ck`` if it is a DMC checkpoint of the format this code reads, else ``ValueError`` naming
    ``where`` (a file) and what is wrong. ``--resume`` and ``agents.load`` both check with it."""
    if not isinstance(ck, dict) or ck.get("agent") != "dmc":
        raise ValueError(f"{where}: not a DMC checkpoint (no 'agent': 'dmc' entry)")
    if ck.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{where}: unsupported DMC checkpoint format {ck.get('format_version')!r} (this version "
                         f"of ddz-env reads format {FORMAT_VERSION})")
    for key in ("config", "model", "model_kwargs"):
        if key not in ck:
            raise ValueError(f"{where}: DMC checkpoint without {key!r}")
    return ck


__all__ = ["FORMAT_VERSION", "CheckpointWriteError", "checkpoint_dict", "save_checkpoint", "load_checkpoint", "check_checkpoint"]
