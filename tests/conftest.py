"""Shared fixtures and the suite's two markers.

``corpus`` marks a test that reads the real corpora from the folder named by
SKLEARN_STRUCTURED_DATA; it is skipped, with the reason, when that is not set.
A test that takes the ``shared_data`` fixture gets the marker by itself.

``slow`` marks a test that trains an estimator on a large slice or reads whole
corpora; it runs only with ``--runslow`` (CI's second stage), so that the
default command stays quick.
"""

import os
from pathlib import Path

import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow")


def _missing_corpora():
    """Why the real corpora cannot be read, or None when they can."""
    path = os.environ.get("SKLEARN_STRUCTURED_DATA")
    if not path:
        return "SKLEARN_STRUCTURED_DATA is not set; the real corpora are not available"
    if not Path(path).is_dir():
        return f"SKLEARN_STRUCTURED_DATA={path} is not a directory"
    return None


def pytest_collection_modifyitems(config, items):
    missing = _missing_corpora()
    run_slow = config.getoption("--runslow")
    for item in items:
        if "shared_data" in item.fixturenames:
            item.add_marker(pytest.mark.corpus)
        if missing and item.get_closest_marker("corpus"):
            item.add_marker(pytest.mark.skip(reason=missing))
        if not run_slow and item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.skip(reason="slow: pass --runslow to run it"))


@pytest.fixture(scope="session")
def shared_data():
    return Path(os.environ["SKLEARN_STRUCTURED_DATA"])


@pytest.fixture(scope="session")
def ewt_dev(shared_data):
    from sklearn_structured.datasets import load_ud_treebank

    return load_ud_treebank("UD_English-EWT", "dev", data_home=shared_data)
