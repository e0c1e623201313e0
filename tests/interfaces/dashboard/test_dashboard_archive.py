"""The dashboard's archive, experience types and metadata editing (issue 22) in a real Chromium:
archived memories listed without words and marked, an archived memory's own page with a Restore
button, browse filtered by seed 001's experience type, metadata edited in place as a JSON object
with hippo's own keys kept. After each step the database is read through a Memory on the same
file. Then the refusals: another agent's archive by replayed requests, and no CSRF token."""

from __future__ import annotations

import json

import httpx
import pytest

import hippo

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import cookies_of, shot, tab_for  # noqa: E402


@pytest.fixture
def shelved(site):
    """Two of alice's notes archived a day apart (notes 5 then 6), and one of bob's."""
    with site.memory() as mem:
        mem.store.archive_chunks("alice", [site.memories[5]], site.clock())
        site.clock.advance(days=1)
        mem.store.archive_chunks("alice", [site.memories[6]], site.clock())
    with site.memory("bob") as bob:
        site.bob_archived = bob.store_memory("Bob's archived note: the safe code is 9090").id
        bob.store.archive_chunks("bob", [site.bob_archived], site.clock())
    return site


def accesses(site) -> dict[str, int]:
    with site.memory() as mem:
        return {c.id: c.access_count for c in mem.list_memories(limit=100).items}


def test_archived_memories_are_listed_without_words_opened_and_restored(browser, shelved):
    site = shelved
    before = accesses(site)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice")
    assert tab.locator("#memories tbody tr.archived").count() == 0
    tab.check("input[name=show_archived]")
    tab.click("#browse-filters button")
    tab.wait_for_url("**show_archived=true**")
    archived = tab.locator("#memories tbody tr.archived")
    assert [r.get_attribute("data-id") for r in archived.all()] == [site.memories[6]]  # newest first: 6 on page 1
    assert "archived" in archived.first.inner_text() and "9090" not in tab.inner_text("main")  # not bob's
    assert "33 match" in tab.inner_text("#browse-note")  # 31 live and 2 archived
    shot(tab, "browse-archived")
    tab.click("#next")
    assert [r.get_attribute("data-id") for r in tab.locator("#memories tbody tr.archived").all()] == [site.memories[5]]
    assert accesses(site) == before  # a look, not a retrieval
    tab.go_back()

    archived.filter(has=tab.locator(f"a[href$='{site.memories[6]}']")).locator("a").first.click()
    tab.wait_for_url(f"**/memories/{site.memories[6]}")
    with site.memory() as mem:
        gone = mem.get_archived(site.memories[6])
    assert f"Archived since {gone.archived_at:%Y-%m-%d %H:%M} UTC" in tab.inner_text("#archived")
    assert tab.inner_text("#content") == "Note 06 about the heron by the pond"
    shot(tab, "memory-archived")

    tab.click("#restore button[type=submit]")
    tab.wait_for_selector("#restored")
    assert tab.url.endswith(f"/memories/{site.memories[6]}?restored=1")
    assert tab.inner_text("#content") == "Note 06 about the heron by the pond"
    with site.memory() as mem:
        live = mem.get_memory(site.memories[6])
        assert live.content == "Note 06 about the heron by the pond" and live.access_count == 1  # asked back: a use
        with pytest.raises(hippo.NotFound):
            mem.get_archived(site.memories[6])
        assert mem.stats().archived == 1 and mem.get_archived(site.memories[5])
        assert site.memories[6] in {h.id for h in mem.recall_memories("Note 06 heron pond", 5, touch=False)}


def test_browse_filters_by_experience_type_and_shows_each_type(browser, site):
    with site.memory() as mem:
        error = mem.record_experience("error", "The deploy failed: the vault key was missing", importance=0.9).id
        insight = mem.record_experience("insight", "Keys belong in the vault, not the repo", importance=0.9).id
        mem.consolidate()
        assert mem.short_term() == []
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice")
    badges = {r.get_attribute("data-id"): r.locator(".badge.type").all_inner_texts()
              for r in tab.locator("#memories tbody tr").all()}
    assert badges[error] == ["error"] and badges[insight] == ["insight"] and badges[site.garden] == []
    tab.select_option("select[name=type]", "error")
    tab.click("#browse-filters button")
    tab.wait_for_url("**type=error**")
    assert [r.get_attribute("data-id") for r in tab.locator("#memories tbody tr").all()] == [error]
    shot(tab, "browse-types")
    with site.memory() as mem:  # the page shows what the database holds of that type
        assert [c.id for c in mem.browse_memories(types="error").items] == [error]
        assert mem.get_memory(error).access_count == 0
    tab.goto(f"{site.url}/agents/alice?type=dream")
    assert "unknown experience type" in tab.inner_text("#error")


def test_metadata_is_edited_in_place_and_hippos_own_keys_stay(browser, site):
    with site.memory() as mem:
        noted = mem.store_memory("The heron nests by the old mill",
                                 {"project": "birds", "tags": ["heron"], "_source_ids": ["m1", "m2"]}).id
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{noted}")
    box = tab.locator("#edit textarea[name=metadata]")
    assert json.loads(box.input_value()) == {"project": "birds"}  # not hippo's keys, not the tags
    assert "_source_ids" in tab.inner_text("#hippo-metadata")
    box.fill('{"project": "birds", "priority": 2, "seen": {"by": ["ann", "bo"], "at": "dawn"}}')
    tab.click("#edit button[type=submit]")
    tab.wait_for_selector("#saved")
    shot(tab, "memory-metadata")
    wanted = {"project": "birds", "priority": 2, "seen": {"by": ["ann", "bo"], "at": "dawn"}, "tags": ["heron"],
              "_source_ids": ["m1", "m2"]}
    with site.memory() as mem:
        chunk = mem.get_memory(noted)
        assert chunk.metadata == wanted and chunk.content == "The heron nests by the old mill"

    for typed, said in (('{"project": "birds", ', "not valid JSON"), ("[1, 2]", "must be a JSON object"),
                        ('"birds"', "must be a JSON object"), ('{"_source_ids": ["forged"]}', "hippo's own"),
                        ('{"tags": ["x"]}', "own field"), ('{"bad key!": 1}', "invalid metadata key")):
        tab.goto(f"{site.url}/agents/alice/memories/{noted}")
        tab.fill("#edit textarea[name=content]", "A changed text that must not be saved")
        tab.fill("#edit textarea[name=metadata]", typed)
        tab.click("#edit button[type=submit]")
        tab.wait_for_selector("#edit-error")
        assert said in tab.inner_text("#edit-error"), typed
        assert tab.locator("#edit textarea[name=metadata]").input_value() == typed  # what was typed stays
        if said == "not valid JSON":
            shot(tab, "memory-metadata-error")
        with site.memory() as mem:  # nothing changed
            chunk = mem.get_memory(noted)
            assert chunk.metadata == wanted and chunk.content == "The heron nests by the old mill", typed

    tab.goto(f"{site.url}/agents/alice/memories/{noted}")
    tab.fill("#edit textarea[name=metadata]", "")
    tab.click("#edit button[type=submit]")
    tab.wait_for_selector("#saved")
    with site.memory() as mem:  # emptied: the person's keys go; hippo's and the tags stay
        assert mem.get_memory(noted).metadata == {"tags": ["heron"], "_source_ids": ["m1", "m2"]}


def test_a_key_for_one_agent_cannot_see_or_restore_anothers_archive(browser, shelved):
    site = shelved
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.memories[5]}")
    csrf = tab.locator("#restore input[name=csrf]").input_value()
    secret = site.bob_archived
    with httpx.Client(base_url=site.url, cookies=cookies_of(tab), follow_redirects=False) as replay:
        for path in ("/agents/bob?show_archived=true", "/agents/bob?archived=safe", f"/agents/bob/memories/{secret}",
                     "/agents/bob?type=error"):
            answer = replay.get(path)
            assert answer.status_code == 403 and "9090" not in answer.text, path
        for path in (f"/agents/alice/memories/{secret}", "/agents/alice?show_archived=true&archived=safe+code"):
            answer = replay.get(path)
            assert answer.status_code in (200, 404) and "9090" not in answer.text, path
        assert replay.get(f"/agents/alice/memories/{secret}").status_code == 404
        assert replay.post(f"/agents/bob/memories/{secret}/restore", data={"csrf": csrf}).status_code == 403
        assert replay.post(f"/agents/alice/memories/{secret}/restore", data={"csrf": csrf}).status_code == 404
        assert replay.post(f"/agents/bob/memories/{secret}/edit",
                           data={"content": "taken", "metadata": "{}", "csrf": csrf}).status_code == 403
    with site.memory("bob") as bob:  # still archived, untouched
        assert bob.get_archived(secret).chunk.content == "Bob's archived note: the safe code is 9090"
        with pytest.raises(hippo.NotFound):
            bob.get_memory(secret)


def test_the_new_changes_refuse_a_missing_or_wrong_csrf_token(browser, shelved):
    site = shelved
    tab = tab_for(browser, site, site.key_a)
    with httpx.Client(base_url=site.url, cookies=cookies_of(tab), follow_redirects=False) as replay:
        for token in ({}, {"csrf": "guess"}):
            assert replay.post(f"/agents/alice/memories/{site.memories[5]}/restore", data=token).status_code == 403
            edit = {"content": "Note 00 about the heron by the pond", "tags": "birds", "metadata": '{"owner": "x"}'}
            assert replay.post(f"/agents/alice/memories/{site.memories[0]}/edit",
                               data={**edit, **token}).status_code == 403
    with site.memory() as mem:
        assert mem.get_archived(site.memories[5]) and mem.get_memory(site.memories[0]).metadata == {"tags": ["birds"]}
