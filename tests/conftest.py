"""Test configuration: deterministic hypothesis runs.

The ``ci`` profile (loaded by default) derandomizes hypothesis, so every run
draws the same examples, keeps no example database and has no deadline (the
brute-force references are slow by design).  Choose another profile with
``HYPOTHESIS_PROFILE=dev`` (random, still no deadline) to explore.
"""
import os
import signal
import sys
import warnings

import pytest
from hypothesis import HealthCheck, settings

# tests/helpers/ on the path: the test modules (in folders by layer) share its modules (one
# ``bruteforce`` module and its caches; ``common``: the repository's paths; a web server; faulty agents)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))

# a suite started in the background (nohup, or `cmd &` in a script) inherits SIGINT ignored, and a program whose
# SIGINT is ignored is rightly not stopped by Ctrl-C (agents/runs/stop.py); the tests of Ctrl-C, here and in the
# programs they start, need the handler a terminal gives (a Python handler is reset to the default at exec)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def quiet_warnings():
    """Every warning ignored during the test (the env, agent and evaluation tests that ask for it); a module
    takes it for all its tests with ``pytestmark = pytest.mark.usefixtures("quiet_warnings")``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
