"""Dashboard sessions end when asked (issue 32): a session cookie copied before logout is refused
after it, on the server that logged out and on another server sharing the PostgreSQL database, and
deleting a key ends its sessions at once. Plain HTTP on loopback servers; no browser needed."""

from __future__ import annotations

import re
from typing import Any, Iterator

import httpx
import pytest

import hippo
from hippo.core.ports.audit import unaudited
from hippo.providers.fake import FakeEmbedder

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")
from test_http_scaleout import database, servers  # noqa: E402,F401  (the fixtures the last test asks for)

from hippo.interfaces.http.server import BackgroundServer  # noqa: E402
from hippo.stores.postgres import schema as postgres_schema  # noqa: E402
from hippo.stores.sqlite import schema as sqlite_schema  # noqa: E402

COOKIE = "hippo_session"


def _csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


def logged_in(url: str, key: str) -> httpx.Client:
    """A client logged in with ``key`` through the login form, as a browser would."""
    client = httpx.Client(base_url=url, follow_redirects=False, timeout=30)
    answer = client.post("/login", data={"key": key, "csrf": _csrf(client.get("/login"))})
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text
    assert client.cookies.get(COOKIE)
    return client


def log_out(client: httpx.Client) -> None:
    answer = client.post("/logout", data={"csrf": _csrf(client.get("/"))})
    assert answer.status_code == 303 and answer.headers["location"] == "/login"


def reads(url: str, cookie: str, agent: str = "alice") -> bool:
    """Whether a request carrying only this session cookie reads the agent's memories."""
    with httpx.Client(base_url=url, cookies={COOKIE: cookie}, follow_redirects=False, timeout=30) as copy:
        answer = copy.get(f"/agents/{agent}")
    if answer.status_code == 303:
        assert answer.headers["location"] == "/login"
        return False
    assert answer.status_code == 200, answer.text
    return "A note only the alice key may read" in answer.text


@pytest.fixture
def served(db, clock) -> Iterator[tuple[str, str, hippo.Memory]]:
    """A server on the test's database (both backends), one key for alice, one memory of hers."""
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock) as seed:
        seed.store_memory("A note only the alice key may read")
        key, _ = seed.keys.create(["alice"], label="alice")
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock)
    with BackgroundServer(mem) as url:
        yield url, key, mem
    mem.close()


def test_a_cookie_copied_before_logout_is_refused_after_it(served):
    url, key, _ = served
    client = logged_in(url, key)
    copied = client.cookies[COOKIE]
    other = logged_in(url, key)  # another browser with the same key keeps its own session
    assert reads(url, copied)
    log_out(client)
    assert not reads(url, copied)
    assert reads(url, other.cookies[COOKIE])
    client.close()
    other.close()


def test_deleting_the_key_ends_its_sessions_at_once(served, db):
    url, key, _ = served
    client = logged_in(url, key)
    copied = client.cookies[COOKIE]
    assert reads(url, copied)
    with hippo.open_keys(db) as keys:
        keys.delete(key.split("_")[1])
    assert not reads(url, copied)
    client.close()


def empty_schema(db: str, request: pytest.FixtureRequest) -> Any:
    """The schema module of the test's backend, its database left empty (PostgreSQL's test
    databases come migrated from a template)."""
    if not db.startswith("postgresql"):
        return sqlite_schema
    import psycopg

    name = db.split("?", 1)[0].rsplit("/", 1)[1]
    with psycopg.connect(request.getfixturevalue("postgres").admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_schema


def test_a_database_from_before_sessions_gains_them(db, clock, monkeypatch, request):
    """A database migrated by the hippo before sessions were recorded: its keys log in, and logout holds."""
    schema = empty_schema(db, request)
    cut = next(i for i, (name, _) in enumerate(schema.MIGRATIONS) if name.endswith("_dashboard_sessions"))
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:cut])
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock) as old, unaudited():
        key, _ = old.keys.create(["alice"])  # (today's store writes memories in today's tables only;
        # the hippo of then kept no audit trail)
    monkeypatch.undo()
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder(), clock=clock) as mem, BackgroundServer(mem) as url:
        mem.store_memory("A note only the alice key may read")
        client = logged_in(url, key)
        copied = client.cookies[COOKIE]
        assert reads(url, copied)
        log_out(client)
        assert not reads(url, copied)
        client.close()


def test_logout_on_one_server_is_refused_on_another(request):
    urls, auth = request.getfixturevalue("servers")  # three `hippo serve` processes on one PostgreSQL database
    key = auth["Authorization"].removeprefix("Bearer ")
    assert httpx.post(f"{urls[0]}/v1/agents/alice/memories", headers=auth,
                      json={"content": "A note only the alice key may read"}).status_code == 201
    client = logged_in(urls[0], key)
    copied = client.cookies[COOKIE]
    assert reads(urls[1], copied) and reads(urls[2], copied)  # any server checks a session
    log_out(client)
    assert not reads(urls[0], copied) and not reads(urls[1], copied) and not reads(urls[2], copied)
    client.close()
