"""Head-to-head evaluation: ``python evaluate.py --a rule --b random`` (the program is
``agents.cli.evaluate``, installed as ``ddz-evaluate``; ``--help`` lists the options)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents._entry import needs_installed  # noqa: E402 (standard library only: says what to run when a package is missing)

with needs_installed("evaluate.py", active=__name__ == "__main__"):
    from agents.cli.evaluate import format_table, main

__all__ = ["main", "format_table"]

if __name__ == "__main__":
    with needs_installed("evaluate.py"):
        sys.exit(main(prog="evaluate.py"))
