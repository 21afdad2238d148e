"""Train the DMC agent: ``python train.py --config default`` (the program is ``agents.cli.train``,
installed as ``ddz-train``; ``python train.py --help`` lists the configs and every key)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents._entry import needs_installed  # noqa: E402 (standard library only: says what to run when a package is missing)

with needs_installed("train.py", active=__name__ == "__main__"):
    from agents.cli.train import main, parser

__all__ = ["main", "parser"]

if __name__ == "__main__":
    with needs_installed("train.py"):
        sys.exit(main(prog="train.py"))
