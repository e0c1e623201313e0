"""The dashboard's Chromium tests: a browser for the module (Debian's chromium through Playwright)
and a dashboard served on loopback; the helpers are in ``dashboard_site.py``."""

from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from dashboard_site import launched

    yield from launched()


@pytest.fixture
def site(db_path, clock) -> Iterator[object]:
    from dashboard_site import served

    yield from served(db_path, clock)
