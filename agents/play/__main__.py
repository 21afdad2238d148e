import sys

from agents._entry import needs_installed

with needs_installed("python -m agents.play", "agents.play"):
    from .terminal import main

    sys.exit(main(prog="python -m agents.play"))
