"""The dashboard's memory page shows which version of a fact was current at a chosen date (Chromium)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

import hippo
from hippo.providers.fake import FakeEmbedder, FakeLLM

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import fact, tab_for  # noqa: E402

BLUE, GREEN = "User's favourite colour is blue", "User's favourite colour is green"


def test_a_date_shows_the_version_current_then(browser, site):
    start = site.clock()
    llm = FakeLLM(script=[fact(BLUE), fact(GREEN), json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})])
    with hippo.open(site.db_path, agent_id="alice", embedder=FakeEmbedder(), llm=llm, clock=site.clock) as mem:
        blue = mem.remember_facts("blue").facts[0].id
        site.clock.set(start + timedelta(days=10))
        green = mem.remember_facts("green").facts[0].id
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{green}")
    assert "until" in tab.inner_text(f"#history li[data-id='{blue}']")

    for day, expected in ((3, blue), (12, green)):
        tab.fill("#as-of input[name=as_of]", (start + timedelta(days=day)).date().isoformat())
        with tab.expect_navigation():
            tab.click("#as-of button")
        assert tab.get_attribute("#as-of-version", "data-id") == expected, day
    tab.fill("#as-of input[name=as_of]", (start - timedelta(days=1)).date().isoformat())
    with tab.expect_navigation():
        tab.click("#as-of button")
    assert "not stored yet" in tab.inner_text("#as-of-answer")
    tab.goto(f"{site.url}/agents/alice/memories/{green}?as_of=last-march")
    assert "not a date" in tab.inner_text("#as-of-error")
