"""The dashboard (issue 22) in a real Chromium on a loopback server: log in with a key, browse,
search, edit, forget with a preview, a fact's history, blocks, stats; after each step the database
is read through a Memory on the same file. Then the refusals: another agent's pages, no CSRF token."""

from __future__ import annotations

import httpx
import pytest

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import cookies_of, shot, tab_for  # noqa: E402

from hippo.interfaces.dashboard.pages import strength_of  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

# -- login, browse, search ------------------------------------------------------------------------


def agents_listed(tab) -> list[str]:
    return [row.get_attribute("data-agent") for row in tab.locator("#agents tbody tr").all()]


def test_login_browse_and_search(browser, site):
    tab = tab_for(browser, site, site.key_a)
    session = next(c for c in tab.context.cookies() if c["name"] == "hippo_session")
    assert session["httpOnly"] and session["sameSite"] == "Strict" and site.key_a not in session["value"]
    assert agents_listed(tab) == ["alice"]  # not bob
    shot(tab, "agents")

    tab.click("#agents td.name >> text=alice")
    rows = tab.locator("#memories tbody tr")
    assert rows.count() == 25
    assert rows.first.get_attribute("data-id") == site.garden  # newest first
    shot(tab, "browse")
    tab.click("#next")
    older = tab.locator("#memories tbody tr")
    assert older.count() == 8 and older.last.get_attribute("data-id") == site.berlin
    assert "superseded" in (older.last.get_attribute("class") or "")
    tab.goto(f"{site.url}/agents/alice?kind=fact")
    assert [r.get_attribute("data-id") for r in tab.locator("#memories tbody tr").all()] == [site.lisbon, site.berlin]

    with site.memory() as mem:
        accesses = {c.id: c.access_count for c in mem.list_memories(limit=100).items}
    tab.goto(f"{site.url}/agents/alice/search")
    tab.fill("input[name=q]", "tomatoes garden")
    tab.click("form.filters button")
    tab.wait_for_selector("#hits")
    first = tab.locator("#hits tbody tr").first
    assert first.get_attribute("data-id") == site.garden
    parts = first.locator("td.num").all_inner_texts()
    assert len(parts) == 5 and float(parts[0]) > 0 and parts[4].startswith("×")
    shot(tab, "search")
    with site.memory() as mem:  # a look, not a retrieval
        assert {c.id: c.access_count for c in mem.list_memories(limit=100).items} == accesses


def test_browse_sorts_filters_and_shows_the_archive_on_request(browser, site):
    with site.memory() as mem:
        mem.reinforce_memory(site.memories[3])
        mem.store.archive_chunks("alice", [site.memories[5]], site.clock())
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice")
    tab.select_option("select[name=sort]", "feedback")
    tab.fill("input[name=tag]", "birds")
    tab.click("#browse-filters button")
    rows = tab.locator("#memories tbody tr")
    assert rows.first.get_attribute("data-id") == site.memories[3]
    assert rows.count() == 25 and site.memories[5] not in [r.get_attribute("data-id") for r in rows.all()]
    tab.click("#next")
    assert tab.locator("#memories tbody tr").count() == 4  # 29 live notes tagged birds
    tab.goto(f"{site.url}/agents/alice?sort=strength&kind=fact&current_only=true")
    assert [r.get_attribute("data-id") for r in tab.locator("#memories tbody tr").all()] == [site.lisbon]
    tab.goto(f"{site.url}/agents/alice?archived=heron&tag=birds&sort=last_access")
    archived = tab.locator("#memories tbody tr.archived")
    assert [r.get_attribute("data-id") for r in archived.all()] == [site.memories[5]]
    assert "archived" in archived.first.inner_text()
    shot(tab, "browse-sorted")
    with site.memory() as mem:  # browsing changed nothing
        assert mem.stats().archived == 1 and mem.get_memory(site.memories[3]).access_count == 0


def test_a_facts_page_shows_its_history_and_provenance(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.berlin}")
    assert "Superseded by" in tab.inner_text("main")
    history = tab.locator("#history li")
    assert history.count() == 2 and "Lisbon" in history.nth(1).inner_text()
    history.nth(1).locator("a").click()
    tab.wait_for_url(f"**/memories/{site.lisbon}")
    assert "supersedes" in tab.inner_text("#links")
    shot(tab, "memory")
    with site.memory() as mem:
        assert [v.id for v in mem.fact_history(site.berlin).versions] == [site.berlin, site.lisbon]


def test_a_memorys_page_draws_its_strength_over_time(browser, site):
    site.clock.advance(days=10)
    with site.memory() as mem:
        mem.reinforce_memory(site.memories[0])
    site.clock.advance(days=20)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.memories[0]}")
    tab.wait_for_function("() => window.Chart && Chart.getChart('chart-life')")
    data = tab.evaluate("() => Chart.getChart('chart-life').data.datasets.map((d) => d.data)")
    with site.memory() as mem:
        chunk = mem.get_memory(site.memories[0])
        now = strength_of(mem, chunk)
    assert data[0][0] == pytest.approx(chunk.running_intensity, abs=1e-3)
    assert data[0][-1] == pytest.approx(now, abs=1e-3) and now < chunk.running_intensity
    assert sum(v is not None for v in data[1]) == 2  # created (its last access too) and the reinforcement
    assert "Computed from the stored state" in tab.inner_text("#life-note")
    shot(tab, "memory-life")


# -- changes ----------------------------------------------------------------------------------


def holding(site, text: bytes) -> list[str]:
    """The files beside the database (the database, its WAL, any index hippo keeps) holding ``text``."""
    files = [f for f in site.db_path.parent.iterdir() if f.is_file()]
    assert site.db_path in files
    return [f.name for f in files if text in f.read_bytes()]


def test_edit_a_memory_in_place(browser, site):
    assert holding(site, b"We planted tomatoes in the garden")  # what the edit must remove
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.garden}")
    tab.fill("#edit textarea[name=content]", "We planted tomatoes and basil in the garden")
    tab.fill("#edit input[name=tags]", "garden, plants")
    tab.click("#edit button[type=submit]")
    tab.wait_for_selector("#saved")
    assert tab.inner_text("#content") == "We planted tomatoes and basil in the garden"
    shot(tab, "memory-edited")
    with site.memory() as mem:
        chunk = mem.get_memory(site.garden)
        assert chunk.content == "We planted tomatoes and basil in the garden"
        assert chunk.metadata["tags"] == ["garden", "plants"]
    assert not holding(site, b"We planted tomatoes in the garden")


def test_forget_with_a_preview_and_a_confirmation(browser, site):
    assert holding(site, b"We planted tomatoes")
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/forget")
    tab.fill("input[name=description]", "tomatoes garden")
    tab.click("form.filters button")
    tab.wait_for_selector("#preview")
    assert [li.get_attribute("data-id") for li in tab.locator("#preview li").all()] == [site.garden]
    shot(tab, "forget-preview")
    with site.memory() as mem:  # the preview deleted nothing
        assert mem.get_memory(site.garden).content == "We planted tomatoes in the garden"
    tab.click("#confirm button[type=submit]")
    tab.wait_for_selector("#forgotten")
    assert tab.locator("#forgotten li").first.get_attribute("data-id") == site.garden
    shot(tab, "forget-done")
    with site.memory() as mem:
        with pytest.raises(hippo.NotFound):
            mem.get_memory(site.garden)
    assert not holding(site, b"We planted tomatoes")

    tab.goto(f"{site.url}/agents/alice/memories/{site.memories[0]}")
    tab.check("#delete input[name=confirm]")
    tab.click("#delete button[type=submit]")
    tab.wait_for_selector("#forgotten")
    with site.memory() as mem:
        with pytest.raises(hippo.NotFound):
            mem.get_memory(site.memories[0])


def test_a_forget_whose_matches_changed_is_shown_again(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/forget?description=tomatoes")
    with site.memory() as mem:
        also = mem.store_memory("More tomatoes for the soup").id
    tab.click("#confirm button[type=submit]")
    tab.wait_for_selector("#changed")
    assert {li.get_attribute("data-id") for li in tab.locator("#preview li").all()} == {site.garden, also}
    with site.memory() as mem:
        assert mem.get_memory(site.garden) and mem.get_memory(also)


def test_edit_a_block_within_its_limit(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/blocks")
    block = tab.locator("#block-persona")
    assert "19 / 200 characters" in block.inner_text()
    block.locator("textarea").fill("A careful, brief assistant")
    block.locator("button").click()
    tab.wait_for_selector("#saved")
    shot(tab, "blocks")
    with site.memory() as mem:
        persona = mem.memory_block("persona")
        assert persona is not None and (persona.value, persona.char_limit) == ("A careful, brief assistant", 200)
    tab.fill("#new-block input[name=key]", "human")
    tab.fill("#new-block textarea", "Lives in Lisbon")
    tab.click("#new-block button")
    tab.wait_for_selector("#block-human")
    with site.memory() as mem:
        assert mem.recall_memory_block("human") == "Lives in Lisbon"
    too_long = tab.locator("#block-persona")
    too_long.locator("textarea").evaluate("(t) => { t.removeAttribute('maxlength'); t.value = 'x'.repeat(300); }")
    too_long.locator("button").click()
    assert "200" in tab.inner_text("#error")
    with site.memory() as mem:
        assert mem.recall_memory_block("persona") == "A careful, brief assistant"


def test_short_term_memory_and_consolidate_now(browser, site):
    served = site.served
    served.record_experience("decision", "We chose the blue kayak", importance=0.65)  # kept, but not at once
    served.record_experience("chat", "Said hello", importance=0.1)
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/short-term")
    assert tab.locator("#short-term tbody tr").count() == 2
    assert tab.locator("#counters dd[data-name=recorded]").inner_text() == "2"
    shot(tab, "short-term")
    tab.click("#consolidate button")
    tab.wait_for_selector("#consolidated")
    assert "Consolidated 1 of 2" in tab.inner_text("#consolidated")
    assert tab.locator("#counters dd[data-name=consolidated]").inner_text() == "1"
    assert [e.content for e in served.short_term()] == ["Said hello"]
    assert served.stats().consolidation["consolidated"] == 1
    with site.memory() as mem:  # on disk, long-term
        assert [e.content for e in mem.recall(types="decision")] == ["We chose the blue kayak"]
    with httpx.Client(base_url=site.url, cookies=cookies_of(tab), follow_redirects=False) as replay:
        assert replay.post("/agents/alice/consolidate", data={}).status_code == 403
        assert replay.get("/agents/bob/short-term").status_code == 403


def test_a_change_without_the_csrf_token_is_refused(browser, site):
    tab = tab_for(browser, site, site.key_a)
    jar = cookies_of(tab)
    with httpx.Client(base_url=site.url, cookies=jar, follow_redirects=False) as replay:
        no_token = replay.post(f"/agents/alice/memories/{site.garden}/edit", data={"content": "hijacked"})
        wrong = replay.post("/agents/alice/blocks/persona", data={"value": "hijacked", "csrf": "guess"})
        other_site = replay.post("/logout", data={"csrf": tab.locator("form.logout input[name=csrf]").input_value()},
                                 headers={"Origin": "https://evil.example"})
    assert no_token.status_code == wrong.status_code == other_site.status_code == 403
    with site.memory() as mem:
        assert mem.get_memory(site.garden).content == "We planted tomatoes in the garden"
        assert mem.recall_memory_block("persona") == "A careful assistant"


# -- who may see what ----------------------------------------------------------------------------


def test_a_key_for_one_agent_cannot_reach_another(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.garden}")
    csrf = tab.locator("#edit input[name=csrf]").input_value()
    jar = cookies_of(tab)
    with httpx.Client(base_url=site.url, cookies=jar, follow_redirects=False) as replay:
        for path in ("/agents/bob", "/agents/bob/search?q=vault", f"/agents/bob/memories/{site.bob_secret}",
                     "/agents/bob/blocks", "/agents/bob/stats", "/agents/bob/forget?description=vault"):
            answer = replay.get(path)
            assert answer.status_code == 403 and "4711" not in answer.text, path
        for path, form in ((f"/agents/bob/memories/{site.bob_secret}/edit", {"content": "changed", "tags": ""}),
                           (f"/agents/bob/memories/{site.bob_secret}/delete", {"confirm": "yes"}),
                           ("/agents/bob/forget", {"description": "vault", "ids": site.bob_secret}),
                           ("/agents/bob/blocks/persona", {"value": "taken over", "char_limit": ""})):
            assert replay.post(path, data={**form, "csrf": csrf}).status_code == 403, path
        assert replay.post("/agents/bob/consolidate", data={"csrf": csrf}).status_code == 403
        # B's memory by id under A's own pages: not found for A, nothing of it shown or changed
        answer = replay.get(f"/agents/alice/memories/{site.bob_secret}")
        assert answer.status_code == 404 and "4711" not in answer.text
        for action, form in (("edit", {"content": "changed", "tags": ""}), ("delete", {"confirm": "yes"}),
                             ("restore", {})):
            answer = replay.post(f"/agents/alice/memories/{site.bob_secret}/{action}", data={**form, "csrf": csrf})
            assert answer.status_code == 404 and "4711" not in answer.text, action
        assert replay.get("/agents/alice").status_code == 200
    with site.memory("bob") as bob:
        assert bob.get_memory(site.bob_secret).content == "Bob's secret: the vault code is 4711"
        assert bob.memory_block("persona") is None

    admin = tab_for(browser, site, site.admin)
    assert agents_listed(admin) == ["alice", "bob"]


def test_no_session_means_the_login_page_and_a_bad_key_is_refused(browser, site):
    with httpx.Client(base_url=site.url, follow_redirects=False) as anonymous:
        answer = anonymous.get("/agents/alice")
        assert answer.status_code == 303 and answer.headers["location"] == "/login"
    forged_cookie = {"hippo_session": "abc.9999999999.x.y"}
    with httpx.Client(base_url=site.url, follow_redirects=False, cookies=forged_cookie) as forged:
        assert forged.get("/agents/alice").status_code == 303
    tab = browser.new_context().new_page()
    tab.goto(f"{site.url}/login")
    shot(tab, "login")
    tab.fill("input[name=key]", "hippo_000000000000_" + "x" * 43)
    tab.click("button[type=submit]")
    assert "not a valid API key" in tab.inner_text("#error")
    shot(tab, "login-refused")


def test_a_keyless_loopback_server_needs_no_login(browser, db_path):
    hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder()).store_memory("A keyless note")
    with BackgroundServer(hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder())) as url:
        tab = browser.new_context().new_page()
        tab.goto(f"{url}/")
        assert agents_listed(tab) == ["alice"]
        tab.click("#agents td.name >> text=alice")
        assert "A keyless note" in tab.inner_text("#memories")
