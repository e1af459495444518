"""Fixtures for the engine tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_support import CORPUS


@pytest.fixture
def corpus() -> Path:
    if not (CORPUS / "labels.json").is_file():
        pytest.skip("../shared/reference/graphmode is not available")
    return CORPUS
