"""A run folder, for any trainer: its name, its checkpoint written whole or not at all, and what is
left to continue from when a run stops.

A run folder ``runs/<name>-<YYYYmmdd-HHMMSS>/`` holds ``config.yaml``, ``checkpoint.pt`` (what
``--resume`` and ``agents.load`` read) and the trainer's logs. The checkpoint's content is the
algorithm's (``agents.dmc.checkpoint`` for DMC); writing it safely is here.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ddz_env.files import write_binary, write_failure

#: the checkpoint a run folder holds (``agents.load(run_dir)`` and ``--resume run_dir`` read it)
CHECKPOINT = "checkpoint.pt"


def new_run_dir(name: str, root: str | os.PathLike = "runs") -> Path:
    """``root/<name>-<YYYYmmdd-HHMMSS>`` (not created)."""
    return Path(root) / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"


#: the files that make a folder a run of train.py (a learner's checkpoint or policy, its logs)
RUN_MARKS = ("checkpoint.pt", "policy.pt", "log.csv", "eval.csv")


def held_run(run_dir: str | os.PathLike) -> str | None:
    """Why a new run may not start in ``run_dir`` (it holds a run: its checkpoint, policy or logs would be
    mixed with the new run's), else None."""
    marks = [m for m in RUN_MARKS if (Path(run_dir) / m).exists()]
    if not marks:
        return None
    return (f"run folder {run_dir} already holds a run ({', '.join(marks)}): continue it with --resume {run_dir}, "
            f"or give a new --run-dir (or remove the folder)")


class CheckpointWriteError(OSError):
    """A checkpoint could not be written (a full disk, a read-only folder). Nothing was replaced:
    the file at its path, if any, is the previous checkpoint, intact; the message says how to resume."""

    def __str__(self) -> str:
        return str(self.args[0])


def write_checkpoint(ck: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``ck`` with ``torch.save`` to ``path`` whole or not at all (a temporary file beside it,
    then ``os.replace``).

    On failure the temporary file is removed and :class:`CheckpointWriteError` says why (the
    disk's own words: ``write_binary`` keeps the ``OSError`` that ``torch.save`` reports as
    ``[enforce fail at inline_container.cc] unexpected pos``), that the previous checkpoint is
    intact and how to continue."""
    import torch

    path = Path(path)
    existed = path.is_file()
    try:
        write_binary(path, lambda f: torch.save(ck, f))
    except (OSError, RuntimeError) as e:
        kept = (f"{path} still holds the previous checkpoint, intact" if existed
                else f"no file was left at {path}")
        if (path.parent / CHECKPOINT).is_file():
            how = f"free space (or make the folder writable), then continue with --resume {path.parent}"
        else:
            how = "no checkpoint of this run was written yet: free space (or make the folder writable) and start again"
        raise CheckpointWriteError(f"could not write checkpoint {path} ({write_failure(e)}): {kept}; {how}") from None


def resume_hint(run_dir: Path) -> str:
    """What is left to continue from, in the words of an error line."""
    if (run_dir / CHECKPOINT).is_file():
        return f"the last checkpoint {run_dir / CHECKPOINT} is intact: continue with --resume {run_dir}"
    return "no checkpoint was written yet: start the run again"


__all__ = ["CHECKPOINT", "RUN_MARKS", "held_run", "new_run_dir", "CheckpointWriteError", "write_checkpoint", "resume_hint"]
