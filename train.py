"""Train the DMC agent: ``python train.py --config default`` (the program is ``agents.cli.train``,
installed as ``ddz-train``; ``python train.py --help`` lists the configs and every key)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents.cli.train import main, parser  # noqa: E402

__all__ = ["main", "parser"]

if __name__ == "__main__":
    sys.exit(main(prog="train.py"))
