import sys

from agents._entry import needs_installed

with needs_installed("python -m agents.play.web", "agents.play.web"):
    from . import main

    sys.exit(main())
