"""The command-line programs (console scripts of the package, and ``python -m`` modules).

* ``ddz-train`` / ``python -m agents.cli.train``: train the DMC agent (``train.py`` in a clone);
* ``ddz-evaluate`` / ``python -m agents.cli.evaluate``: head-to-head evaluation (``evaluate.py``),
  ``--league`` (``league.py``);
* ``ddz-compare`` / ``python -m agents.cli.compare``: two or more runs' curves in one PNG;
* ``python -m agents.cli.calibrate``: fit the rule agent's win-chance weights.

They live here rather than as ``agents.evaluate`` or ``agents.dmc.train``, names that are
already the functions ``agents.evaluate`` and ``agents.dmc.train``.
"""
