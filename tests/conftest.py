"""Shared fixtures: the real corpora, found through SKLEARN_STRUCTURED_DATA."""

import os
from pathlib import Path

import pytest


def data_home():
    """The corpus folder, or a skip with the reason when it is not configured."""
    path = os.environ.get("SKLEARN_STRUCTURED_DATA")
    if not path:
        pytest.skip("SKLEARN_STRUCTURED_DATA is not set; the real corpora are not available")
    if not Path(path).is_dir():
        pytest.skip(f"SKLEARN_STRUCTURED_DATA={path} is not a directory")
    return Path(path)


@pytest.fixture(scope="session")
def shared_data():
    return data_home()


@pytest.fixture(scope="session")
def ewt_dev(shared_data):
    from sklearn_structured.datasets import load_ud_treebank

    return load_ud_treebank("UD_English-EWT", "dev", data_home=shared_data)
