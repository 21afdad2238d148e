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

from ddz_env.files import write_binary, write_failure

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


class CheckpointWriteError(OSError):
    """A checkpoint could not be written (a full disk, a read-only folder). Nothing was replaced:
    the file at its path, if any, is the previous checkpoint, intact; the message says how to resume."""

    def __str__(self) -> str:
        return str(self.args[0])


def save_checkpoint(ck: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``ck`` to ``path`` whole or not at all (a temporary file beside it, then ``os.replace``).

    On failure the temporary file is removed and :class:`CheckpointWriteError` says why (the
    disk's own words: ``write_binary`` keeps the ``OSError`` that ``torch.save`` reports as
    ``[enforce fail at inline_container.cc] unexpected pos``), that the previous checkpoint is
    intact and how to continue."""
    path = Path(path)
    existed = path.is_file()
    try:
        write_binary(path, lambda f: torch.save(ck, f))
    except (OSError, RuntimeError) as e:
        kept = (f"{path} still holds the previous checkpoint, intact" if existed
                else f"no file was left at {path}")
        if (path.parent / "checkpoint.pt").is_file():
            how = f"free space (or make the folder writable), then continue with --resume {path.parent}"
        else:
            how = "no checkpoint of this run was written yet: free space (or make the folder writable) and start again"
        raise CheckpointWriteError(f"could not write checkpoint {path} ({write_failure(e)}): {kept}; {how}") from None


def load_checkpoint(path: str | os.PathLike, map_location: str = "cpu") -> dict[str, Any]:
    """A DMC checkpoint (a file, or a run folder's ``checkpoint.pt``); FileNotFoundError / ValueError."""
    p = Path(path)
    if p.is_dir():
        p = p / "checkpoint.pt"
    if not p.is_file():
        raise FileNotFoundError(f"no checkpoint at {p}")
    try:
        ck = torch.load(p, map_location=map_location, weights_only=True)
    except Exception as e:  # noqa: BLE001 (corrupt file, not a torch file, unsafe pickle)
        raise ValueError(f"{p}: not a readable ddz-env checkpoint ({type(e).__name__}: {e})") from None
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
