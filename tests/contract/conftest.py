"""The contract suite: the behaviour of hippo over any store. Every test here runs once per backend
(SQLite and PostgreSQL, ``HIPPO_TEST_BACKENDS`` to narrow a local run), whether or not it asks for
the database: a test that must read one backend's own bytes or plans belongs under ``tests/stores``
and is refused here. A test that builds its memories with ``make_mem`` runs through ``hippo.open``,
``hippo.open_async`` and ``hippo.connect`` (the root conftest), unless it is ``embedded_only``."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _every_backend(backend: str) -> str:
    """Depending on ``backend`` parametrises every test of the suite over the backends (root conftest)."""
    return backend


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    embedded: list[pytest.Item] = []
    for item in items:
        if "tests/contract/" not in str(item.fspath).replace("\\", "/"):
            continue
        if item.get_closest_marker("sqlite_only"):
            raise pytest.UsageError(f"{item.nodeid}: a SQLite-only test has no place in the contract suite "
                                    "(move it under tests/stores)")
        # A test marked embedded_only is never made remote (root conftest); one of its parameters
        # marked so is made with the others, and left out here.
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("api") == "remote" and item.get_closest_marker("embedded_only"):
            embedded.append(item)
    if embedded:
        config.hook.pytest_deselected(items=embedded)
        left_out = set(embedded)
        items[:] = [item for item in items if item not in left_out]
