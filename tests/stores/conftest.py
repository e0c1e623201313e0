"""Fixtures of the store tests."""

from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture
def database(postgres: Any) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for one test, dropped after it."""
    url = postgres.new_database()
    yield url
    postgres.drop(url)
