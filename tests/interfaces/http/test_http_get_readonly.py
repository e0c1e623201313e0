"""No GET changes anything: every GET route of the real app (the API, its docs and the dashboard),
called on a live loopback server over a real SQLite file holding an agent with memories, facts,
blocks, experiences in both tiers, an archived memory, a captured session and a dashboard session,
leaves every table, the file's bytes and SQLite's data version as they were. The same comparison
sees the change a POST makes, so it is not a comparison that cannot fail."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from support import internal_names, sql

import hippo
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from starlette.routing import Mount  # noqa: E402

from hippo.interfaces.dashboard.sessions import SESSION_COOKIE, new_session  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402

AGENT = "alice"


class Snapshot:
    """Everything a GET could change in the database: each table's rows (FTS shadow tables and
    SQLite's own included), the schema version, and the bytes of every file but the shared-memory
    index (a reader's marks change it by design)."""

    def __init__(self, db_path: Path, reader: sqlite3.Connection) -> None:
        tables = [name for (name,) in reader.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        self.rows = {t: sorted(map(repr, reader.execute(f'SELECT * FROM "{t}"'))) for t in tables}
        self.rows["sqlite_master"] = sorted(map(repr, reader.execute("SELECT * FROM sqlite_master")))
        self.user_version = reader.execute("PRAGMA user_version").fetchone()[0]
        self.data_version = reader.execute("PRAGMA data_version").fetchone()[0]  # moves on another's commit
        self.files = {f.name: hashlib.sha256(f.read_bytes()).hexdigest()
                      for f in sorted(db_path.parent.iterdir()) if f.is_file() and not f.name.endswith("-shm")}

    def changes(self, later: "Snapshot") -> list[str]:
        found = [f"table {t}" for t in sorted(set(self.rows) | set(later.rows))
                 if self.rows.get(t) != later.rows.get(t)]
        found += [f"file {f}" for f in sorted(set(self.files) | set(later.files))
                  if self.files.get(f) != later.files.get(f)]
        if self.data_version != later.data_version:
            found.append("data_version (a commit)")
        if self.user_version != later.user_version:
            found.append("user_version")
        return found


class Seeded:
    """The ids the routes' path parameters are filled with."""

    memory = fact = old_fact = archived = ""


def _seed(db_path: Path, clock: Any) -> tuple["hippo.Memory", Seeded]:
    made = Seeded()
    capped = hippo.open(db_path, agent_id=AGENT, embedder=FakeEmbedder(), clock=clock, max_db_bytes=1)
    made.archived = capped.store_memory("An old note about the heron by the pond").id
    assert capped.maintain().archived == 1
    capped.close()
    clock.advance(days=1)
    mem = hippo.open(db_path, agent_id=AGENT, embedder=FakeEmbedder(), clock=clock, short_term_durable=True,
                     retrieval_delay=0)
    made.memory = mem.store_memory("We chose SQLite for the billing service", {"tags": ["db"]},
                                   source="migration", session_id="s-1").id
    mem.store_memory("The billing service deploys on Fridays", {"tags": ["db"], "status": "open"})
    made.old_fact = mem.remember_facts("I live in Berlin.").facts[0].id
    clock.advance(days=1)
    made.fact = mem.remember_facts("I live in Lisbon.").facts[0].id
    mem.recall_memories("billing service", 5)  # co-recall links for the related routes
    mem.recall_memories("billing service", 5)
    mem.set_memory_block("persona", "A careful assistant")
    mem.append_memory_block("human", "Name: Kris")
    mem.record_experience("error", "Kafka broker 3 ran out of disk", context={"userId": "u-1", "taskId": "t-9"})
    mem.record_experience("observation", "The ops channel is quiet", context={"userId": "u-1"})
    session = [{"role": "user", "content": "Remember that the staging database lives on port 5433.", "id": "m1"},
               {"role": "assistant", "content": "Noted: staging is on port 5433.", "id": "m2"}]
    mem.observe(session, session_id="s-1")
    mem.process_pending()
    mem.observe([{"role": "user", "content": "The release train leaves on Thursdays.", "id": "m3"}],
                session_id="s-1")  # left pending: the inbox holds it
    mem.compact(session, session_id="s-1")
    hippo.create_messages_table(db_path)
    sql(db_path, f"INSERT INTO messages (agent_id, role, content) VALUES ('{AGENT}', 'user', 'the OAuth redirect')")
    return mem, made


# Query strings per path (a path not named here is called once without one): each route with the
# parameters that make it do its real work (a search, a filter, a preview), not just answer.
QUERIES: dict[str, list[dict[str, Any]]] = {
    "/v1/agents/{agent_id}/memories": [
        {}, {"q": "billing service"},
        {"q": "billing heron", "include_archived": "true", "expand": "true", "tag": "db", "limit": 5},
        {"q": "billing", "metadata": '{"status": "open"}'}, {"q": "staging", "session_id": "s-1"}],
    "/v1/agents/{agent_id}/archive": [{"q": "heron"}],
    "/v1/agents/{agent_id}/conversation": [{"q": "OAuth redirect"}],
    "/v1/agents/{agent_id}/experiences": [{}, {"q": "Kafka disk"}, {"type": "observation", "min_importance": 0.1}],
    "/v1/agents/{agent_id}/experiences/related": [{"user_id": "u-1"}],
    "/agents/{agent_id}": [{}, {"sort": "strength", "show_archived": "true", "archived": "heron"},
                           {"type": "error"}, {"session": "s-1", "source": "migration"}],
    "/agents/{agent_id}/search": [{}, {"q": "billing service"}],
    "/agents/{agent_id}/forget": [{}, {"description": "billing service"}],
}


def _paths(template: str, made: Seeded) -> list[str]:
    """``template`` with its parameters filled from the seeded data; a memory page also for a
    fact and for an archived memory."""
    ids = [made.memory]
    if template.endswith("/facts/{memory_id}/history"):
        ids = [made.fact]
    elif template == "/agents/{agent_id}/memories/{memory_id}":
        ids = [made.memory, made.fact, made.old_fact, made.archived]
    values = {"agent_id": AGENT, "key": "persona"}
    paths = []
    for memory_id in ids:
        path = template.replace("{memory_id}", memory_id)
        for name, value in values.items():
            path = path.replace(f"{{{name}}}", value)
        assert "{" not in path, f"GET {template}: give its path parameters a value from the seeded data"
        paths.append(path)
    return paths


def _routes(routes: list[Any]) -> Iterator[Any]:
    """Every route of the app, through the routers it includes."""
    for route in routes:
        inner = getattr(route, "original_router", None)  # FastAPI's included router
        if inner is not None:
            assert route.include_context.prefix == ""
            yield from _routes(inner.routes)
        else:
            yield route


def get_requests(app: Any, made: Seeded) -> list[tuple[str, dict[str, Any]]]:
    """Every GET route of ``app`` as requests with real parameters; a file of each static mount."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for route in _routes(app.routes):
        if isinstance(route, Mount):
            first = min(p.name for p in Path(route.app.directory).iterdir() if p.is_file())
            calls.append((f"{route.path}/{first}", {}))
        elif "GET" in (getattr(route, "methods", None) or ()):
            for path in _paths(route.path, made):
                calls += [(path, params) for params in QUERIES.get(route.path, [{}])]
    return calls


@pytest.fixture
def live(db_path, clock) -> Iterator[tuple[Any, str, Seeded, httpx.Client, Path]]:
    mem, made = _seed(db_path, clock)
    token, key = mem.keys.create([], admin=True)
    cookie = new_session(mem.keys, key)
    server = BackgroundServer(mem)
    with server as url, httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {token}"},
                                     cookies={SESSION_COOKIE: cookie}) as client:
        yield server.app, url, made, client, db_path


def test_no_get_route_changes_the_database(live):
    app, url, made, client, db_path = live
    calls = get_requests(app, made)
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as reader:
        first = last = Snapshot(db_path, reader)
        answered, changed, named = {}, {}, {}
        for path, params in calls:
            response = client.get(path, params=params)
            answered[(path, str(params))] = response.status_code
            if internal_names(response.text):  # what a user reads names no internal design document
                named[path] = internal_names(response.text)
            now = Snapshot(db_path, reader)
            if last.changes(now):
                changed[(path, str(params))] = last.changes(now)
            last = now
    assert {k: v for k, v in answered.items() if v != 200} == {}  # each did its work: none an error
    assert changed == {}  # which GET changed what
    assert named == {}
    assert first.changes(last) == []
    templates = {r.path for r in _routes(app.routes) if "GET" in (getattr(r, "methods", None) or ())}
    assert len(templates) >= 25 and len(calls) > len(templates)  # API, docs and dashboard pages alike


def test_the_comparison_sees_a_posts_change(live):
    app, url, made, client, db_path = live
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as reader:
        before = Snapshot(db_path, reader)
        assert client.get(f"/v1/agents/{AGENT}/memories", params={"q": "billing service"}).status_code == 200
        assert before.changes(Snapshot(db_path, reader)) == []
        recalled = client.post(f"/v1/agents/{AGENT}/memories/recall", json={"query": "billing service"})
        assert recalled.status_code == 200 and recalled.json()["hits"]
        changed = before.changes(Snapshot(db_path, reader))
    assert "table chunks" in changed and "table agent_daily" in changed, changed  # counts, strength; the day's
    assert "data_version (a commit)" in changed and "file hippo.db-wal" in changed
