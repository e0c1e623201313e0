"""Shared by the dashboard's Chromium tests (issue 22): Debian's chromium driven by Playwright
(``executable_path``, never ``playwright install``), a seeded database served on loopback, and the
steps every test takes (log in with a key, screenshots, the session's cookies to replay requests).
The fixtures ``browser`` and ``site`` over these are in ``conftest.py``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Iterator
from urllib.parse import urlparse

import pytest

import hippo
from hippo.providers.fake import FakeEmbedder, FakeLLM

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

__all__ = ["CHROMIUM", "README_IMAGES", "SHOTS", "Site", "chromium_only", "cookies_of", "fact", "launched",
           "only_loopback", "readme_shot", "served", "shot", "tab_for"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
chromium_only = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/test.sh)")
SHOTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "dashboard"
README_IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
WRITE_README = os.environ.get("HIPPO_README_SHOTS") == "1"  # read at import: the tests run with HIPPO_* cleared


def launched() -> Iterator[object]:
    """Debian's chromium under Playwright, for a module's tests; skipped when it is missing."""
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def served(db_path: Path, clock) -> Iterator[Site]:
    """The seeded database (:class:`Site`) with a loopback server on its own memory."""
    made = Site(db_path, clock)
    made.served = made.memory()  # the server's own memory: its in-process short-term buffer
    with BackgroundServer(made.served) as url:
        made.url = url
        yield made


def fact(text: str) -> str:
    return json.dumps({"facts": [{"fact": text, "intensity": 0.5}]})


class Site:
    """The seeded database, its server and its keys."""

    def __init__(self, db_path: Path, clock) -> None:
        self.db_path, self.clock = db_path, clock
        llm = FakeLLM(script=[fact("User lives in Berlin"), fact("User lives in Lisbon"),
                              json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})])
        seed = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), llm=llm, clock=clock)
        self.berlin = seed.remember_facts("I live in Berlin.").facts[0].id
        clock.advance(days=3)
        self.lisbon = seed.remember_facts("I moved to Lisbon.").facts[0].id
        assert seed.get_memory(self.berlin).superseded_by == self.lisbon
        self.memories = []
        for i in range(30):
            clock.advance(minutes=5)
            self.memories.append(seed.store_memory(f"Note {i:02d} about the heron by the pond", {"tags": ["birds"]}).id)
        clock.advance(minutes=5)
        self.garden = seed.store_memory("We planted tomatoes in the garden").id
        seed.set_memory_block("persona", "A careful assistant", char_limit=200)
        self.bob_secret = seed.for_agent("bob").store_memory("Bob's secret: the vault code is 4711").id
        self.key_a, _ = seed.keys.create(["alice"], label="alice")
        self.admin, _ = seed.keys.create([], admin=True)
        seed.close()

    def memory(self, agent: str = "alice") -> hippo.Memory:
        return hippo.open(self.db_path, agent_id=agent, embedder=FakeEmbedder(), clock=self.clock)


def only_loopback(route):
    if urlparse(route.request.url).hostname in ("127.0.0.1", "localhost"):
        return route.continue_()
    return route.abort()


def tab_for(browser, site, key: str):
    context = browser.new_context()
    tab = context.new_page()
    tab.route("**/*", only_loopback)
    tab.goto(f"{site.url}/")
    assert tab.url.endswith("/login")
    tab.fill("input[name=key]", key)
    tab.click("button[type=submit]")
    tab.wait_for_url(f"{site.url}/")
    return tab


def shot(tab, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def readme_shot(tab, name: str, height: int | None = None) -> None:
    """The test's screenshot (the whole page), and with HIPPO_README_SHOTS=1 the README's copy of
    it: the whole page, or its top ``height`` pixels."""
    shot(tab, name)
    if WRITE_README:
        README_IMAGES.mkdir(parents=True, exist_ok=True)
        if height is None:
            shutil.copyfile(SHOTS / f"{name}.png", README_IMAGES / f"{name}.png")
        else:
            tab.screenshot(path=str(README_IMAGES / f"{name}.png"), full_page=True,
                           clip={"x": 0, "y": 0, "width": tab.viewport_size["width"], "height": height})


def cookies_of(tab) -> dict[str, str]:
    return {c["name"]: c["value"] for c in tab.context.cookies()}
