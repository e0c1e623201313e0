"""The dashboard as a place to work (issue 36) in a real Chromium: the landing page with each
agent's counts and last activity, the empty state that shows how to add a first memory, the add
form on an agent's page, reinforce and demote on a memory's page (titled by its text), and the
browse filters on one line at 1280 px. After each step the database is read through a Memory on
the same file; the pages that only show leave every table as it was.

``HIPPO_README_SHOTS=1 .venv/bin/python -m pytest tests/interfaces/dashboard/test_dashboard_work.py`` also
writes the guide's screenshots of the landing page and the empty state (docs/images/).
"""

from __future__ import annotations

import shlex
from datetime import datetime
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from support import sql

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import cookies_of, only_loopback, readme_shot, shot, tab_for  # noqa: E402

from hippo.interfaces.dashboard.render import ago, headline  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

WIDE = {"width": 1280, "height": 800}


def fingerprint(db_path: Path) -> dict[str, list[str]]:
    """Every row of every table but the login sessions': what a page that only shows must leave."""
    tables = [r[0] for r in sql(db_path, "SELECT name FROM sqlite_master WHERE type = 'table' "
                                         "AND name NOT LIKE 'sqlite_%' AND name != 'dashboard_sessions'")]
    return {t: sorted(repr(row) for row in sql(db_path, f'SELECT * FROM "{t}"')) for t in tables}


def keyless_tab(browser, url: str):
    tab = browser.new_context(viewport=WIDE).new_page()
    tab.route("**/*", only_loopback)
    tab.goto(f"{url}/")
    return tab


def no_design_names(text: str) -> None:
    assert "seed 0" not in text.lower() and "hippocampus.md" not in text.lower()


# -- the landing page ---------------------------------------------------------------------------


class Team:
    """Three agents on the tests' fixed clock, each last active in a different way, served keyless
    (no key id in the header: the page looks the same every run)."""

    def __init__(self, db_path: Path, clock) -> None:
        self.db_path, self.clock = db_path, clock
        with hippo.open(db_path, agent_id="assistant", embedder=FakeEmbedder(), clock=clock) as mem:
            mem.remember_facts("I live in Lisbon. I prefer short answers.")
            for text in ("We chose SQLite for the first release", "The demo is on Friday",
                         "Ana reviews the pull requests"):
                mem.store_memory(text, {"tags": ["project"]})
            mem.set_memory_block("persona", "A careful, brief assistant")
            researcher = mem.for_agent("researcher")
            researcher.store_memory("Herons feed at dawn")
            researcher.record_experience("insight", "Tides turn every six hours", importance=0.9)
            clock.advance(hours=2)
            self.recalled = clock()
            assert mem.recall_memories("SQLite release", 2).hits  # its last access: now
            clock.advance(hours=1)
            self.written = clock()
            researcher.set_memory_block("notes", "Check the tide tables first")
        clock.advance(hours=1)
        self.served = hippo.open(db_path, agent_id="assistant", embedder=FakeEmbedder(), clock=clock)
        self.recorded = clock()  # in short-term memory only (this process's buffer), nothing else
        self.served.for_agent("scout").record_experience("chat", "Said hello to the new user", importance=0.1)
        clock.advance(hours=2)
        self.url = ""


@pytest.fixture
def team(db_path, clock) -> Iterator[Team]:
    made = Team(db_path, clock)
    with BackgroundServer(made.served) as url:
        made.url = url
        yield made


def test_the_landing_page_shows_each_agents_counts_and_last_activity(browser, team):
    before = fingerprint(team.db_path)
    tab = keyless_tab(browser, team.url)
    rows = {r.get_attribute("data-agent"): r for r in tab.locator("#agents tbody tr").all()}
    assert list(rows) == ["assistant", "researcher", "scout"]  # scout holds a short-term experience only
    for agent, row in rows.items():
        stats = team.served.for_agent(agent).stats()
        shown = {c.get_attribute("data-count"): c.inner_text().split()[0]
                 for c in row.locator("td[data-count]").all()}
        assert shown == {"facts": str(stats.facts), "memories": str(stats.memories - stats.experiences),
                         "experiences": str(stats.experiences), "blocks": str(stats.blocks),
                         "short_term": str(stats.short_term), "archived": str(stats.archived)}, agent
    assert rows["assistant"].locator("td[data-count=facts]").inner_text() == "2"
    assert rows["researcher"].locator("td[data-count=experiences]").inner_text() == "1"
    assert rows["scout"].locator("td[data-count=short_term]").inner_text() == "1"
    last = {agent: (datetime.fromisoformat(row.locator("td.last time").get_attribute("datetime")),
                    row.locator("td.last").inner_text()) for agent, row in rows.items()}
    assert last["assistant"][0] == team.recalled and last["assistant"][1] == "4 hours ago: accessed"
    assert last["researcher"][0] == team.written and last["researcher"][1] == "3 hours ago: block notes written"
    assert last["scout"][0] == team.recorded and last["scout"][1] == "2 hours ago: experience recorded"
    no_design_names(tab.inner_text("body"))
    readme_shot(tab, "dashboard-agents")
    tab.click("#agents td.name >> text=researcher")
    tab.wait_for_url("**/agents/researcher")
    assert fingerprint(team.db_path) == before  # looking changed nothing: no access counted, no row written


def test_the_landing_page_lists_agents_a_page_at_a_time(browser, team, monkeypatch):
    from hippo.interfaces.dashboard import landing

    monkeypatch.setattr(landing, "AGENTS_PER_PAGE", 2)  # each row reads the agent's counts
    tab = keyless_tab(browser, team.url)
    assert [r.get_attribute("data-agent") for r in tab.locator("#agents tbody tr").all()] == ["assistant", "researcher"]
    tab.click("#more-agents")
    tab.wait_for_url("**/?after=researcher")
    assert [r.get_attribute("data-agent") for r in tab.locator("#agents tbody tr").all()] == ["scout"]
    assert tab.locator("#more-agents").count() == 0 and tab.locator("#empty").count() == 0


def test_a_key_sees_its_agents_and_the_ones_it_names_that_hold_nothing_yet(browser, site):
    with site.memory() as mem:
        key, _ = mem.keys.create(["alice", "carol"], label="two")
    tab = tab_for(browser, site, key)
    rows = tab.locator("#agents tbody tr")
    assert [r.get_attribute("data-agent") for r in rows.all()] == ["alice", "carol"]  # not bob
    assert "Nothing stored yet" in rows.nth(1).inner_text()
    assert tab.locator("#agents td[data-count=memories]").inner_text() == "31"
    shot(tab, "agents-for-a-key")


# -- the empty state and adding a first memory ---------------------------------------------------


def test_the_empty_state_shows_how_to_add_a_first_memory(browser, tmp_path, monkeypatch, clock):
    monkeypatch.chdir(tmp_path)  # served as `hippo --db memory.db serve` would be
    db_path = tmp_path / "memory.db"
    hippo.open("memory.db", agent_id="default", embedder=FakeEmbedder(), clock=clock).close()
    before = fingerprint(db_path)
    with BackgroundServer(hippo.open("memory.db", agent_id="default", embedder=FakeEmbedder(), clock=clock)) as url:
        tab = keyless_tab(browser, url)
        assert tab.locator("#agents").count() == 0 and tab.locator("#empty #add-memory").count() == 1
        assert tab.locator("#add-memory input[name=agent_id]").input_value() == "default"
        lines = dict(zip(tab.locator("#first-lines dt").all_inner_texts(),
                         tab.locator("#first-lines dd").all_inner_texts()))
        assert list(lines) == ["Python", "Command line", "HTTP"]
        assert 'hippo.open("memory.db", agent_id="default").store_memory(' in lines["Python"]
        assert shlex.split(lines["Command line"])[:6] == ["hippo", "--db", "memory.db", "--agent", "default", "store"]
        assert lines["HTTP"].startswith(f"curl -s {url}/v1/agents/default/memories ")
        no_design_names(tab.inner_text("body"))
        readme_shot(tab, "dashboard-empty")
        assert fingerprint(db_path) == before

        tab.fill("#add-memory input[name=agent_id]", "alice")
        tab.fill("#add-memory textarea[name=content]", "We chose SQLite for the first release")
        tab.fill("#add-memory input[name=tags]", "decisions, storage")
        tab.click("#add-memory button[type=submit]")
        tab.wait_for_selector("#added")
        assert tab.inner_text("#title") == "We chose SQLite for the first release"
        shot(tab, "first-memory-added")
        memory_id = tab.url.split("/memories/")[1].split("?")[0]
        tab.goto(f"{url}/")
        assert [r.get_attribute("data-agent") for r in tab.locator("#agents tbody tr").all()] == ["alice"]
        assert tab.locator("#agents td.last").inner_text() == "just now: stored"
        shot(tab, "agents-after-the-first-memory")
    with hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), clock=clock) as mem:
        chunk = mem.get_memory(memory_id)
        assert (chunk.content, chunk.metadata, chunk.source) == (
            "We chose SQLite for the first release", {"tags": ["decisions", "storage"]}, "dashboard")
        assert chunk.has_vector and mem.recall_memories("SQLite", 1, touch=False).hits[0].chunk.id == memory_id

    # The lines the page showed do what it says (the embedder the server ran with, from the environment).
    monkeypatch.setenv("HIPPO_EMBEDDER", "fake")
    exec(lines["Python"], {})
    from typer.testing import CliRunner

    from hippo.interfaces.cli import app

    said = CliRunner().invoke(app, shlex.split(lines["Command line"])[1:])
    assert said.exit_code == 0, said.output
    with hippo.open("memory.db", agent_id="default", embedder=FakeEmbedder(), clock=clock) as mem:
        [chunk] = mem.list_memories().items
        assert (chunk.content, chunk.metadata, chunk.encounter_count) == (
            "We chose SQLite for the first release", {"tags": ["decisions"]}, 2)  # stored, then strengthened


def test_the_empty_states_form_refuses_what_the_api_refuses(browser, db_path, clock):
    with BackgroundServer(hippo.open(db_path, agent_id="default", embedder=FakeEmbedder(), clock=clock)) as url:
        tab = keyless_tab(browser, url)
        tab.fill("#add-memory input[name=agent_id]", "not an agent!")
        tab.fill("#add-memory textarea[name=content]", "Something")
        tab.click("#add-memory button[type=submit]")
        tab.wait_for_selector("#add-error")
        assert "invalid agent id" in tab.inner_text("#add-error")
        assert tab.locator("#add-memory textarea[name=content]").input_value() == "Something"  # kept
        with httpx.Client(base_url=url, cookies=cookies_of(tab), follow_redirects=False) as replay:
            refused = replay.post("/memories", data={"agent_id": "alice", "content": "forged"})  # no token
            assert refused.status_code == 403
    with hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder()) as mem:
        assert mem.agent_ids() == []  # nothing stored for anyone


# -- adding on an agent's page, feedback, a memory's title ----------------------------------------


def test_add_a_memory_on_the_agents_page(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice")
    tab.click("#add > summary")
    tab.fill("#add-memory textarea[name=content]", "The kayak club meets on Thursdays at the river")
    tab.fill("#add-memory input[name=tags]", "kayak, weekly")
    tab.click("#add-memory details summary")
    tab.fill("#add-memory textarea[name=metadata]", '{"place": "river", "day": 4}')
    tab.fill("#add-memory input[name=intensity]", "0.8")
    tab.click("#add-memory button[type=submit]")
    tab.wait_for_selector("#added")
    assert tab.inner_text("#added") == "Added."
    assert tab.title().startswith("The kayak club meets on Thursdays at the river")
    shot(tab, "memory-added")
    memory_id = tab.url.split("/memories/")[1].split("?")[0]
    with site.memory() as mem:
        chunk = mem.get_memory(memory_id)
        assert chunk.metadata == {"place": "river", "day": 4, "tags": ["kayak", "weekly"]}
        assert (chunk.running_intensity, chunk.source, chunk.encounter_count) == (0.8, "dashboard", 1)
        held = mem.stats().memories

    tab.goto(f"{site.url}/agents/alice")  # the same text again: the memory holding it is strengthened
    tab.click("#add > summary")
    tab.fill("#add-memory textarea[name=content]", "The kayak club meets on Thursdays at the river")
    tab.click("#add-memory button[type=submit]")
    tab.wait_for_selector("#added")
    assert "strengthened" in tab.inner_text("#added") and memory_id in tab.url
    tab.goto(f"{site.url}/agents/alice")
    tab.click("#add > summary")
    tab.fill("#add-memory textarea[name=content]", "Metadata that is not an object")
    tab.click("#add-memory details summary")
    tab.fill("#add-memory textarea[name=metadata]", '["a", "list"]')
    tab.click("#add-memory button[type=submit]")
    tab.wait_for_selector("#add-error")
    assert "must be a JSON object" in tab.inner_text("#add-error")
    assert tab.locator("#add-memory textarea[name=metadata]").input_value() == '["a", "list"]'  # kept to fix
    shot(tab, "memory-add-refused")
    with site.memory() as mem:
        assert mem.stats().memories == held and mem.get_memory(memory_id).encounter_count == 2

    csrf = tab.locator("#add-memory input[name=csrf]").input_value()
    with httpx.Client(base_url=site.url, cookies=cookies_of(tab), follow_redirects=False) as replay:
        assert replay.post("/agents/alice/memories", data={"content": "no token"}).status_code == 403
        for path, form in (("/agents/bob/memories", {"content": "into bob"}),
                           ("/memories", {"agent_id": "bob", "content": "into bob"})):
            answer = replay.post(path, data={**form, "csrf": csrf})
            assert answer.status_code == 403, path
    with site.memory("bob") as bob, site.memory() as mem:
        assert bob.stats().memories == 1 and mem.stats().memories == held


def test_reinforce_and_demote_a_memory(browser, site):
    from playwright.sync_api import expect

    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{site.garden}")
    assert tab.inner_text("#title") == "We planted tomatoes in the garden" and site.garden not in tab.title()
    site.clock.advance(hours=5)
    tab.click("#reinforce button")
    tab.wait_for_selector("#feedback-done")
    with site.memory() as mem:
        chunk, weight = mem.get_memory(site.garden), mem.settings.reinforce_weight
    assert (chunk.feedback, chunk.reinforced_at) == (weight, site.clock())  # the core's reinforce_memory
    assert tab.inner_text("#feedback-done") == f"Reinforced: feedback is +{weight} now."
    assert tab.inner_text("#feedback") == str(weight)
    shot(tab, "memory-reinforced")
    for value in range(weight - 1, -2, -1):
        tab.click("#demote button")
        expect(tab.locator("#feedback")).to_have_text(str(value))
    assert tab.inner_text("#feedback-done") == "Demoted: feedback is -1 now."
    shot(tab, "memory-demoted")
    with site.memory() as mem:
        chunk = mem.get_memory(site.garden)
        assert chunk.feedback == -1 and chunk.content == "We planted tomatoes in the garden"  # nothing deleted
        assert chunk.access_count == 0  # feedback is not a retrieval

    with httpx.Client(base_url=site.url, cookies=cookies_of(tab), follow_redirects=False) as replay:
        csrf = tab.locator("#reinforce input[name=csrf]").input_value()
        assert replay.post(f"/agents/alice/memories/{site.garden}/reinforce", data={}).status_code == 403
        assert replay.post(f"/agents/bob/memories/{site.bob_secret}/demote", data={"csrf": csrf}).status_code == 403
        answer = replay.post(f"/agents/alice/memories/{site.bob_secret}/reinforce", data={"csrf": csrf})
        assert answer.status_code == 404 and "4711" not in answer.text
    with site.memory() as mem, site.memory("bob") as bob:
        assert mem.get_memory(site.garden).feedback == -1 and bob.get_memory(site.bob_secret).feedback == 0


def test_a_long_memorys_page_is_titled_by_the_start_of_its_text(browser, site):
    text = ("The migration plan: first copy the archive to the new cluster overnight, then switch the readers, "
            "and only then the writers, once the replicas have caught up.")
    with site.memory() as mem:
        memory_id = mem.store_memory(text).id
    tab = tab_for(browser, site, site.key_a)
    tab.goto(f"{site.url}/agents/alice/memories/{memory_id}")
    title = tab.inner_text("#title")
    assert title == headline(text) and title.endswith("…") and text.startswith(title[:-1])
    assert memory_id not in title and memory_id not in tab.title() and memory_id in tab.inner_text("#identity")
    assert tab.inner_text("#content") == text  # the whole text below the title


def test_headline_and_ago():
    assert headline("  short\n text ") == "short text"
    assert headline("word " * 30, 20) == "word word word word…"
    assert headline("word " * 30, 22) == "word word word word…"  # not "word word word word w…"
    assert headline("x" * 100, 20) == "x" * 19 + "…"  # one long word: cut inside it
    assert headline("First part, second part and more words here", 24) == "First part, second part…"
    now = datetime(2025, 1, 1, 12, 0).astimezone()
    assert [ago(now.replace(hour=h), now) for h in (12, 11, 9)] == ["just now", "1 hour ago", "3 hours ago"]
    assert ago(now.replace(day=1, hour=11, minute=58), now) == "2 minutes ago" and ago(None, now) == ""


# -- the browse filters at 1280 px ---------------------------------------------------------------


def test_the_browse_filters_sit_on_one_line_at_1280_px(browser, site):
    tab = tab_for(browser, site, site.key_a)
    tab.set_viewport_size(WIDE)
    tab.goto(f"{site.url}/agents/alice")
    boxes = tab.evaluate("""() => [...document.querySelectorAll('#browse-filters > *')].map((e) => {
        const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, right: r.right}; })""")
    assert len(boxes) == 11  # sort, kind, type, tag, source, session, since, until, the checkboxes, archived, show
    assert max(b["top"] for b in boxes) < min(b["bottom"] for b in boxes)  # one row: every box overlaps every other
    main = tab.evaluate("() => document.querySelector('main').getBoundingClientRect().right")
    assert max(b["right"] for b in boxes) <= min(main, WIDE["width"])
    shot(tab, "browse-at-1280")
