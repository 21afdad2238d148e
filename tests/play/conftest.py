"""The browser tests' fixtures: one headless Chromium per test module (``browser``) and the folder their
screenshots go to (``shots``: $DDZ_SCREENSHOTS, default a temp folder). Built on tests/helpers/webpage.py."""
import os

import pytest

import webpage


@pytest.fixture(scope="module")
def browser():
    if webpage.MISSING:
        pytest.skip(webpage.MISSING)
    driver = webpage.chrome()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    d = os.environ.get("DDZ_SCREENSHOTS") or str(tmp_path_factory.mktemp("shots"))
    os.makedirs(d, exist_ok=True)
    return d
