"""Shared helpers of the Python package's tests: where the committed fixtures are."""
import os

import pytest

DATA = os.environ.get('COHORT_TEST_DATA_DIR',
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data'))


@pytest.fixture
def data_dir():
    return DATA
