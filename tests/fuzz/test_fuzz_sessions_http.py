"""The fuzz of ``test_fuzz_sessions`` over HTTP, against a real ``hippo serve`` on loopback: 2,000
generated requests each for observe, surface, compact and the experience routes. Every answer is
below 500 and in the one error envelope when refused, and a refused request leaves the database as
it was. Bodies are sent as JSON text written here, so lone surrogates, 400-digit numbers and
3,000 levels of nesting reach the server as a client could send them."""

from __future__ import annotations

import json
from typing import Any, Callable
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nasty import fingerprint
from test_fuzz_sessions import CONFIG, CONTEXT, MESSAGES, SESSION, SMALL, TAGS, TYPES

import hippo
from hippo.providers.fake import FakeEmbedder

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

CALLS = 2_000
BASE = "/v1/agents/alice"
TEXT = st.one_of(st.sampled_from(["Deployed the billing fix", "billing"]), st.text(max_size=30))


def body_text(value: Any) -> str:
    """JSON text of a generated value: what JSON cannot hold is sent as its repr, a value too deep
    for the encoder as the same depth written out by hand."""
    try:
        return json.dumps(value, default=repr)
    except (RecursionError, ValueError):
        return '{"k":' * 3_000 + "1" + "}" * 3_000


def _session(value: Any) -> str:
    """A session id for the path, percent-encoded byte by byte (a lone surrogate as its bytes)."""
    return quote((value if isinstance(value, str) and value else "s1").encode("utf-8", "surrogatepass"), safe="")


Request = tuple[str, str, dict[str, Any] | None, str | None]
ROUTES: dict[str, dict[str, tuple[Callable[..., Request], tuple[st.SearchStrategy, ...]]]] = {
    "observe": {
        "observe": (lambda m, s: ("POST", f"{BASE}/sessions/{_session(s)}/messages", None,
                                  f'{{"messages": {body_text(m)}}}'), (MESSAGES, SESSION)),
        "process": (lambda: ("POST", f"{BASE}/process", None, None), ()),
    },
    "surface": {
        "surface": (lambda m, s, n: ("POST", f"{BASE}/sessions/{_session(s)}/surface", None,
                                     f'{{"messages": {body_text(m)}, "max_tokens": {body_text(n)}}}'),
                    (MESSAGES, SESSION, SMALL)),
    },
    "compact": {
        "compact": (lambda m, s, c, p: ("POST", f"{BASE}/compact", None, body_text(
            {"messages": m, "session_id": s, "config": c, "previous_summary": p})),
                    (MESSAGES, st.one_of(st.none(), SESSION), CONFIG, st.one_of(st.none(), TEXT))),
    },
    "experiences": {
        "record": (lambda t, c, x, i, g: ("POST", f"{BASE}/experiences", None, body_text(
            {"type": t, "content": c, "context": x, "importance": i, "tags": g})),
                   (TYPES, TEXT, CONTEXT, st.one_of(st.none(), SMALL), TAGS)),
        "recall": (lambda t, g, q, n: ("GET", f"{BASE}/experiences", {"type": t, "tag": g, "q": q, "limit": n}, None),
                   (st.lists(TEXT, max_size=2), st.lists(TEXT, max_size=2), st.one_of(st.none(), TEXT),
                    st.integers(-2, 200))),
        "related": (lambda u, r, n: ("GET", f"{BASE}/experiences/related", {"user_id": u, "room_id": r, "limit": n},
                                     None), (st.one_of(st.none(), TEXT), st.one_of(st.none(), TEXT),
                                             st.integers(-2, 200))),
        "consolidate": (lambda: ("POST", f"{BASE}/consolidate", None, None), ()),
        "short_term": (lambda: ("GET", f"{BASE}/experiences/short-term", None, None), ()),
    },
}


@pytest.mark.parametrize("group", sorted(ROUTES))
def test_generated_requests_get_no_server_error_and_refusals_change_nothing(tmp_path, monkeypatch, group):
    from hippo.interfaces.http.server import BackgroundServer

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "fuzz.db"
    mem = hippo.open(db, agent_id="default", embedder=FakeEmbedder())
    alice = mem.for_agent("alice")
    alice.store_memories(["We decided to ship the billing fix on Friday", "Kris lives in Lisbon"])
    alice.record_experience("task", "Deployed the billing fix", context={"userId": "u1"})
    routes, sent = ROUTES[group], []
    with BackgroundServer(mem) as url, httpx.Client(base_url=url, timeout=60) as client:

        @settings(max_examples=CALLS, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data(), name=st.sampled_from(sorted(routes)))
        def call(data: st.DataObject, name: str) -> None:
            build, strategies = routes[name]
            method, path, params, text = build(*[data.draw(s) for s in strategies])
            before = fingerprint(db)
            response = client.request(method, path, params={k: v for k, v in (params or {}).items() if v is not None},
                                      content=None if text is None else text.encode("utf-8", "surrogatepass"),
                                      headers={"content-type": "application/json"})
            assert response.status_code < 500, (name, text and text[:300], response.text[:300])
            if response.status_code >= 400:
                assert set(response.json()) == {"error"}, response.text[:300]
                assert fingerprint(db) == before, f"{name} was refused ({response.status_code}) but wrote"
            sent.append(response.status_code)

        call()
    assert len(sent) >= CALLS and any(status < 300 for status in sent)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("fuzz.db")) == []
    mem.close()
