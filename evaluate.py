"""Head-to-head evaluation: ``python evaluate.py --a rule --b random`` (the program is
``agents.cli.evaluate``, installed as ``ddz-evaluate``; ``--help`` lists the options)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents.cli.evaluate import format_table, main  # noqa: E402

__all__ = ["main", "format_table"]

if __name__ == "__main__":
    sys.exit(main(prog="python evaluate.py"))
