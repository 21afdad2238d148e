"""Test configuration: deterministic hypothesis runs.

The ``ci`` profile (loaded by default) derandomizes hypothesis, so every run
draws the same examples, keeps no example database and has no deadline (the
brute-force references are slow by design).  Choose another profile with
``HYPOTHESIS_PROFILE=dev`` (random, still no deadline) to explore.
"""
import os
import sys
import warnings

import pytest
from hypothesis import HealthCheck, settings

# tests/helpers/ on the path: the test modules (in folders by layer) share its modules (one
# ``bruteforce`` module and its caches; ``common``: the repository's paths; a web server; faulty agents)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "helpers"))

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
