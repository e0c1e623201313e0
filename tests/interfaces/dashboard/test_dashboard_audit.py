"""The dashboard's audit trail page in a real Chromium (issue 51): the agent's records newest first
with who, the way in, the operation, the ids touched (linked while their memory is there) and
counts, never a memory's text; filters by operation, days and memory id; pages by the cursor; the
chain verified on request, and a tampered record named. Changes made through the dashboard's forms
are recorded as the signed-in key through ``dashboard``; another agent's trail is refused."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
import pytest
from support import sql

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import cookies_of, shot, tab_for  # noqa: E402

TEXTS = ("heron", "tomatoes", "careful assistant", "Berlin", "Lisbon", "vault code")


def key_id(site, token: str) -> str:
    with site.memory() as mem:
        found = mem.keys.verify(token)
    assert found is not None
    return found.id


def seqs(tab) -> list[int]:
    return [int(r.get_attribute("data-seq")) for r in tab.locator("#audit tbody tr[data-seq]").all()]


def no_text(tab) -> None:
    shown = tab.content()
    assert not any(text.lower() in shown.lower() for text in TEXTS), "a memory's text on the audit page"


def test_the_trail_lists_pages_filters_and_links_without_any_text(browser, site):
    start = site.clock()  # the site's first record (Berlin) was made 3 days and 31 notes before now
    with site.memory() as mem:
        assert mem.audit(limit=1).items[0].seq == 34  # 2 facts, 31 notes, the persona block
        gone = site.memories[0]
        mem.delete_memory(gone)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice")
    tab.click("#nav-audit")
    tab.wait_for_url("**/agents/alice/audit")
    assert seqs(tab) == list(range(35, 10, -1))  # newest first, 25 a page
    newest = tab.locator("#audit tbody tr[data-seq='35']")
    assert newest.locator("td.operation").inner_text() == "delete_memory"
    assert newest.locator("td.who").inner_text() == "local" and newest.locator("td.surface").inner_text() == "python"
    assert newest.locator(f"span.id[data-id='{gone}'] a").count() == 0  # deleted: no page to open
    assert newest.locator("td.counts").inner_text() == "removed 1"
    block = tab.locator("#audit tbody tr[data-seq='34'] span.id[data-id='block:persona']")
    assert block.locator("a").get_attribute("href") == "/agents/alice/blocks#block-persona"
    note = tab.locator(f"#audit tbody tr[data-operation='store_memory'] span.id[data-id='{site.garden}']")
    assert note.locator("a").get_attribute("href") == f"/agents/alice/memories/{site.garden}"
    assert re.fullmatch(r"digest [0-9a-f]{64}", note.get_attribute("title"))
    no_text(tab)
    shot(tab, "audit")

    tab.click("#next")
    assert seqs(tab) == list(range(10, 0, -1)) and tab.locator("#next").count() == 0
    first = tab.locator("#audit tbody tr[data-seq='1']")
    assert first.locator("td.operation").inner_text() == "remember_facts"
    assert first.locator(f"span.id[data-id='{site.berlin}'] a").count() == 1  # superseded, still there
    no_text(tab)
    tab.click("#newest")
    assert seqs(tab)[0] == 35

    tab.fill("#audit-filters input[name=operation]", "remember_facts")
    tab.click("#audit-filters button")
    tab.wait_for_url("**operation=remember_facts**")
    assert seqs(tab) == [2, 1]
    tab.fill("#audit-filters input[name=operation]", "")
    day = (start - timedelta(days=3)).date().isoformat()  # the day of Berlin
    tab.fill("#audit-filters input[name=until]", day)
    tab.click("#audit-filters button")
    tab.wait_for_url("**until=**")
    assert seqs(tab) == [1]
    tab.goto(f"{site.url}/agents/alice/audit?since={start.date().isoformat()}")
    assert seqs(tab)[-1] == 11 and tab.locator("#next").count() == 1  # Lisbon onwards: 34 records, two pages
    tab.click("#next")
    assert seqs(tab) == list(range(10, 1, -1))  # the filter kept across pages

    tab.goto(f"{site.url}/agents/alice/memories/{site.lisbon}")
    tab.click("#changes")
    tab.wait_for_url(f"**/audit?id={site.lisbon}")
    assert seqs(tab) == [2] and tab.input_value("#audit-filters input[name=id]") == site.lisbon
    tab.goto(f"{site.url}/agents/alice/audit?id={gone}")
    assert [tab.locator(f"tr[data-seq='{s}'] td.operation").inner_text() for s in seqs(tab)] == \
        ["delete_memory", "store_memory"]


def test_the_chain_is_verified_on_request_and_a_tampered_record_is_named(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/audit?operation=store_memory")
    assert tab.locator("#verified").count() == 0
    tab.click("#verify button")
    tab.wait_for_url("**verify=true**")
    assert "operation=store_memory" in tab.url and seqs(tab)[0] == 33  # the filter stays
    assert "The chain holds: 34 records checked" in tab.inner_text("#verified")
    sql(site.db_path, "UPDATE audit_records SET who = 'mallory' WHERE agent_id = 'alice' AND seq = 5")
    tab.reload()
    assert tab.get_attribute("#verified", "data-seq") == "5"
    assert "broken at record 5" in tab.inner_text("#verified") and "altered" in tab.inner_text("#verified")
    shot(tab, "audit-broken")
    sql(site.db_path, "DELETE FROM audit_records WHERE agent_id = 'alice' AND seq = 20")
    sql(site.db_path, "UPDATE audit_records SET who = 'local' WHERE agent_id = 'alice' AND seq = 5")
    tab.reload()
    assert tab.get_attribute("#verified", "data-seq") == "20" and "removed" in tab.inner_text("#verified")


def test_bad_filters_are_said_and_another_agents_trail_is_refused(browser, site):
    tab = tab_for(browser, site, site.key_a)
    for query, said in (("since=last-march", "since is a date"), ("until=2026-13-01", "until is a date"),
                        ("id=not-an-id", "invalid memory id"), ("cursor=x", "cursor")):
        answer = tab.goto(f"{site.url}/agents/alice/audit?{query}")
        assert answer.status == 400, query
        assert said in tab.inner_text("#audit-error"), query
        assert seqs(tab) == [], query
    cookies = cookies_of(tab)
    refused = httpx.get(f"{site.url}/agents/bob/audit", cookies=cookies)
    assert refused.status_code == 403 and site.bob_secret not in refused.text
    anonymous = httpx.get(f"{site.url}/agents/alice/audit", follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login"
    admin = tab_for(browser, site, site.admin)
    admin.goto(f"{site.url}/agents/bob/audit")
    assert seqs(admin) == [1] and "vault" not in admin.content()


def test_changes_made_through_the_dashboard_are_recorded_as_the_signed_in_key(browser, site):
    me = key_id(site, site.key_a)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.garden}")
    tab.fill("#edit textarea[name=content]", "We planted beans in the garden")
    tab.click("#edit button[type=submit]")
    tab.wait_for_selector("#saved")
    tab.click("#reinforce button")
    tab.wait_for_selector("#feedback-done")
    tab.goto(f"{site.url}/agents/alice/memories/{site.memories[3]}")
    tab.check("#delete input[name=confirm]")
    tab.click("#delete button[type=submit]")
    tab.wait_for_selector("#forgotten")
    with site.memory() as mem:
        made = {r.operation: r for r in mem.audit(limit=3).items}
    assert set(made) == {"update_memory", "reinforce_memory", "delete_memory"}
    assert {(r.who, r.surface) for r in made.values()} == {(me, "dashboard")}
    assert list(made["delete_memory"].touched) == [site.memories[3]]

    tab.goto(f"{site.url}/agents/alice/audit?id={site.garden}")
    rows = tab.locator("#audit tbody tr")
    assert [r.locator("td.operation").inner_text() for r in rows.all()] == \
        ["reinforce_memory", "update_memory", "store_memory"]
    assert [r.locator("td.surface").inner_text() for r in rows.all()] == ["dashboard", "dashboard", "python"]
    assert rows.first.locator("td.who").inner_text() == me

    # the landing page's first-memory form (a page of its own, not an agent's): the same actor
    page = httpx.get(f"{site.url}/", cookies=cookies_of(tab))
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    added = httpx.post(f"{site.url}/memories", cookies=cookies_of(tab), follow_redirects=False,
                       data={"agent_id": "alice", "content": "A note from the empty state's form", "csrf": token})
    assert added.status_code == 303, added.text
    with site.memory() as mem:
        record = mem.audit(limit=1).items[0]
    assert (record.operation, record.who, record.surface) == ("store_memory", me, "dashboard")
