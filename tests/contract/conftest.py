"""The contract suite: the behaviour of hippo over any store. Every test here runs once per backend
(SQLite and PostgreSQL, ``HIPPO_TEST_BACKENDS`` to narrow a local run), whether or not it asks for
the database: a test that must read one backend's own bytes or plans belongs under ``tests/stores``
and is refused here. A test that builds its memories with ``make_mem`` runs through ``hippo.open``,
``hippo.open_async`` and ``hippo.connect`` (``api``), unless it is ``embedded_only``."""

from __future__ import annotations

import pytest
from support import BACKENDS

APIS = ("sync", "async", "remote")


def _apis(definition: pytest.Function) -> list[str]:
    embedded = definition.get_closest_marker("embedded_only")
    if embedded is None:
        return list(APIS)
    if not embedded.args or not isinstance(embedded.args[0], str):
        raise pytest.UsageError(f"{definition.nodeid}: embedded_only needs its reason")
    return ["sync", "async"]


@pytest.hookimpl(tryfirst=True)  # before the fixtures plugin parametrises api with its own two
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The api and the backend of a test that uses ``make_mem``, together: the sync API on every
    backend, the async one and remote on SQLite only (both run the sync implementation, in worker
    threads or behind HTTP, so the backends are told apart by the sync run; the suite's time is
    counted). The root conftest parametrises the backend of the others."""
    if "make_mem" not in metafunc.fixturenames:
        return
    combos = [(api, backend) for api in _apis(metafunc.definition) for backend in BACKENDS
              if api == "sync" or backend == "sqlite"]
    metafunc.parametrize(["api", "backend"], combos, ids=[f"{a}-{b}" for a, b in combos], scope="function")


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
        # A test marked embedded_only is never made remote (pytest_generate_tests); one of its
        # parameters marked so is made with the others, and left out here.
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("api") == "remote" and item.get_closest_marker("embedded_only"):
            embedded.append(item)
    if embedded:
        config.hook.pytest_deselected(items=embedded)
        left_out = set(embedded)
        items[:] = [item for item in items if item not in left_out]
