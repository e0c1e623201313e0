"""The contract suite: the behaviour of hippo over any store. Every test here runs once per backend
(SQLite and PostgreSQL, ``HIPPO_TEST_BACKENDS`` to narrow a local run), whether or not it asks for
the database: a test that must read one backend's own bytes or plans belongs under ``tests/stores``
and is refused here."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _every_backend(backend: str) -> str:
    """Depending on ``backend`` parametrises every test of the suite over the backends (root conftest)."""
    return backend


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/contract/" in str(item.fspath).replace("\\", "/") and item.get_closest_marker("sqlite_only"):
            raise pytest.UsageError(f"{item.nodeid}: a SQLite-only test has no place in the contract suite "
                                    "(move it under tests/stores)")
