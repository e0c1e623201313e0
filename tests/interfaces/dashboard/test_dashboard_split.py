"""The dashboard's memory page shows a fact's merged wordings and splits one back (Chromium)."""

from __future__ import annotations

import json

import httpx
import pytest

import hippo
from hippo.providers.fake import FakeEmbedder, FakeLLM

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import cookies_of, fact, shot, tab_for  # noqa: E402

MERGED = "User has a daughter named Mia, called Mimi"


def merged_fact(site) -> str:
    """A fact with one wording merged into it (the LLM judged it a duplicate)."""
    llm = FakeLLM(script=[fact("User has a daughter named Mia"), fact(MERGED),
                          json.dumps({"decisions": [{"pair": 1, "label": "DUPLICATE"}]})])
    with hippo.open(site.db_path, agent_id="alice", embedder=FakeEmbedder(), llm=llm, clock=site.clock) as mem:
        first = mem.remember_facts("My daughter is Mia.").facts[0]
        again = mem.remember_facts("At school they call her Mimi.").facts[0]
        assert again.action == "duplicate" and again.id == first.id
        return first.id


def test_merged_wordings_are_shown_and_split_through_the_form(browser, site):
    fact_id = merged_fact(site)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{fact_id}")
    assert MERGED in tab.inner_text("#merged")
    shot(tab, "memory-merged")

    tab.click("#merged form.split button")
    tab.wait_for_selector("#split")
    assert tab.inner_text("#content") == MERGED
    new_id = tab.url.split("/memories/")[1].split("?")[0]
    with site.memory() as mem:
        assert mem.get_memory(new_id).kind == "fact"
        assert mem.fact_history(fact_id).merged == []
    tab.goto(f"{site.url}/agents/alice/memories/{fact_id}")
    assert tab.locator("#merged").count() == 0


def test_the_split_form_checks_its_token_and_its_wording(browser, site):
    fact_id = merged_fact(site)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{fact_id}")
    csrf = tab.locator("#merged input[name=csrf]").input_value()
    with httpx.Client(base_url=site.url, cookies=cookies_of(tab), follow_redirects=False) as replay:
        path = f"/agents/alice/memories/{fact_id}/split"
        assert replay.post(path, data={"wording": MERGED, "csrf": "guess"}).status_code == 403
        never = replay.post(path, data={"wording": "User has a son", "csrf": csrf})
        assert never.status_code == 400 and "was not merged" in never.text
        bob = replay.post(f"/agents/bob/memories/{fact_id}/split", data={"wording": MERGED, "csrf": csrf})
        assert bob.status_code == 403
    with site.memory() as mem:
        assert [m.content for m in mem.fact_history(fact_id).merged] == [MERGED]
