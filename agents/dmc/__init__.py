"""DouZero-style Deep Monte-Carlo agent and trainer (``ddz-train``: ``agents.cli.train``;
the shipped configs: ``configs/``).

Needs the ``train`` extra (torch, pyyaml). The names below are imported on first use, so that
``agents.dmc.config`` (the config keys, ``ddz-train --help``) loads without torch.
"""
from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"DMCAgent": ".agent", "DMCModel": ".model", "TrainConfig": ".config", "load_config": ".config",
          "load_checkpoint": ".checkpoint", "train": ".learner.trainer"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = ["DMCAgent", "DMCModel", "TrainConfig", "load_config", "load_checkpoint", "train"]
