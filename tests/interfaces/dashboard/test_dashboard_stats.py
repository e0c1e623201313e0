"""The dashboard's stats (issue 22) in a real Chromium: counts by kind and by experience type, the
strength histogram, and per day memories stored, retrievals and recalls, consolidation and
pruning, drawn from the whole agent (``memory_summary``), not a sample; checked against what the
seeding did and what a Memory on the same file reads.

The seeded agent lives 45 days on the tests' fixed clock, so the pages look the same every run:
``HIPPO_README_SHOTS=1 .venv/bin/python -m pytest tests/interfaces/dashboard/test_dashboard_stats.py`` also
writes the README's two screenshots (docs/images/dashboard-stats.png, dashboard-memory.png).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Iterator

import pytest

import hippo
from hippo.providers.fake import FakeEmbedder, FakeLLM

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from dashboard_site import fact, only_loopback, readme_shot, tab_for  # noqa: E402

from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

PLACES = ["the heron by the pond", "the tomatoes in the garden", "the train to Porto", "the blue kayak",
          "the dentist on Friday", "the book about tides", "the migration project", "the bakery on Rua Augusta"]
EXPERIENCES = [("decision", "We chose the blue kayak for the river trip"), ("insight", "Herons feed at dawn"),
               ("task", "Book the train to Porto"), ("error", "The photo upload failed twice"),
               ("observation", "The user prefers short answers"), ("tool-use", "Searched the tide tables")]


class LivedSite:
    """Forty-five days of one agent: notes every day, recalls every third day, experiences
    consolidated every nine, a fact superseded, one memory reinforced. What it did is kept."""

    def __init__(self, db_path: Path, clock) -> None:
        self.db_path, self.clock = db_path, clock
        llm = FakeLLM(script=[fact("User lives in Berlin"), fact("User lives in Lisbon"),
                              json.dumps({"decisions": [{"pair": 1, "label": "SUPERSEDES"}]})])
        rng = random.Random(22)
        mem = hippo.open(db_path, agent_id="alice", embedder=FakeEmbedder(), llm=llm, clock=clock)
        mem.remember_facts("I live in Berlin.")
        self.retrieved, self.recalls, self.notes = 0, 0, []
        for day in range(45):
            for _ in range(rng.randint(1, 6)):
                place = PLACES[rng.randrange(len(PLACES))]
                self.notes.append(mem.store_memory(f"Day {day}: a note about {place}", {"tags": [place.split()[-1]]},
                                                   intensity=round(rng.uniform(0.15, 0.95), 2)).id)
                clock.advance(minutes=37)
            if day % 3 == 1:
                found = len(mem.recall_memories(f"note about {PLACES[day % len(PLACES)]}", limit=4).hits)
                self.retrieved, self.recalls = self.retrieved + found, self.recalls + (found > 0)
            if day % 9 == 4:
                for kind, text in EXPERIENCES[day % 4:day % 4 + 3]:
                    mem.record_experience(kind, f"{text} (day {day})", importance=0.8)
                mem.consolidate()
            if day == 30:
                mem.remember_facts("I moved to Lisbon.")
            clock.advance(hours=20)
        self.notes = list(dict.fromkeys(self.notes))  # a note written twice in a day is one memory
        self.life = self.notes[5]
        for _ in range(3):
            mem.reinforce_memory(self.life)
        self.key, _ = mem.keys.create(["alice"], label="alice")
        self.admin, _ = mem.keys.create([], admin=True)
        mem.close()

    def memory(self) -> hippo.Memory:
        return hippo.open(self.db_path, agent_id="alice", embedder=FakeEmbedder(), clock=self.clock)


@pytest.fixture
def lived(db_path, clock) -> Iterator[LivedSite]:
    made = LivedSite(db_path, clock)
    with BackgroundServer(made.memory()) as url:
        made.url = url
        yield made


def chart(tab, name: str) -> dict:
    return tab.evaluate(f"() => Chart.getChart('chart-{name}').data")


def series(data: dict) -> dict[str, list[int]]:
    return {d["label"]: d["data"] for d in data["datasets"]}


def wide_tab(browser, lived):
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    tab = context.new_page()
    tab.route("**/*", only_loopback)
    tab.goto(f"{lived.url}/login")
    tab.fill("input[name=key]", lived.key)
    tab.click("button[type=submit]")
    tab.wait_for_url(f"{lived.url}/")
    return tab


def test_stats_count_every_memory_and_draw_each_day(browser, lived):
    tab = wide_tab(browser, lived)
    tab.goto(f"{lived.url}/agents/alice/stats")
    tab.wait_for_function("() => window.Chart && Chart.getChart('chart-pruning')")
    with lived.memory() as mem:
        stats, summary = mem.stats(), mem.memory_summary(days=90)
    kinds = chart(tab, "kinds")
    assert dict(zip(kinds["labels"], kinds["datasets"][0]["data"])) == {
        "facts": 1, "superseded facts": 1, "memories": len(lived.notes), "experiences": stats.experiences,
        "archived": 0, "short-term": 0}
    strength = chart(tab, "strength")["datasets"][0]["data"]
    assert strength == summary.strength and sum(strength) == 1 + len(lived.notes) + stats.experiences
    types = chart(tab, "types")
    assert dict(zip(types["labels"], types["datasets"][0]["data"])) == summary.types
    assert sum(summary.types.values()) == stats.experiences == 15 and summary.types["decision"] > 0
    created = chart(tab, "created")
    assert sum(created["datasets"][0]["data"]) == len(lived.notes) + 2 + stats.experiences  # both facts
    assert created["labels"] == summary.days and summary.days[-1] == lived.clock().date().isoformat()
    assert summary.days[0] == "2025-01-01" and len(summary.days) > 30  # from the first day on
    retrievals = series(chart(tab, "retrievals"))
    assert sum(retrievals["memories retrieved"]) == lived.retrieved > 0
    assert sum(retrievals["recalls"]) == lived.recalls
    assert sum(1 for n in retrievals["recalls"] if n) == lived.recalls  # one recall on each of its days
    pruning = series(chart(tab, "pruning"))
    assert sum(pruning["consolidated"]) == stats.consolidation["consolidated"] == 15
    assert sum(1 for n in pruning["consolidated"] if n) == 5  # days 4, 13, 22, 31, 40
    assert "Retrievals per day" in tab.inner_text("#retrievals-caption")
    assert tab.evaluate("() => Chart.getChart('chart-size')") is None  # a key for one agent: no database size
    readme_shot(tab, "dashboard-stats")


def test_an_admin_sees_the_database_size_against_its_cap(browser, site):
    tab = tab_for(browser, site, site.admin)
    tab.goto(f"{site.url}/agents/alice/stats")
    tab.wait_for_function("() => window.Chart && Chart.getChart('chart-size')")
    size = tab.evaluate("() => Chart.getChart('chart-size').data.datasets[0].data")
    # The file and its WAL as the page read them: opening another store here could checkpoint the
    # WAL (the login wrote its session), so the files are read directly.
    files = [site.db_path, site.db_path.with_name(site.db_path.name + "-wal")]
    assert size == [sum(f.stat().st_size for f in files if f.exists())]  # no cap set: the size alone
    assert "no cap" in tab.inner_text("#size")


def test_a_memorys_life_for_the_readme(browser, lived):
    tab = wide_tab(browser, lived)
    tab.goto(f"{lived.url}/agents/alice/memories/{lived.life}")
    tab.wait_for_function("() => window.Chart && Chart.getChart('chart-life')")
    names = tab.evaluate("() => Chart.getChart('chart-life').data.datasets[1].data.filter(v => v !== null).length")
    assert names >= 3  # created, last access, last reinforcement
    with lived.memory() as mem:
        assert mem.get_memory(lived.life).feedback > 0 and mem.get_memory(lived.life).reinforced_at is not None
    readme_shot(tab, "dashboard-memory", height=1340)  # down to the strength curve and its caption
