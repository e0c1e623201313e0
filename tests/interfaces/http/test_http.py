"""The HTTP API on a real uvicorn server on loopback, driven with httpx: routes, errors, auth, concurrency."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import httpx
import pytest
from support import sql

import hippo
from hippo.errors import ProviderError
from hippo.providers.fake import FakeEmbedder, FakeLLM

pytest.importorskip("fastapi")
from hippo.core.keys import create_key  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer, check_bind  # noqa: E402

NOW = datetime(2026, 11, 23, tzinfo=timezone.utc)
A = "/v1/agents/alice"


@pytest.fixture
def base(db_path, clock):
    return hippo.open(db_path, agent_id="default", embedder=FakeEmbedder(), clock=clock)


@pytest.fixture
def api(base):
    with BackgroundServer(base) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def error(response, status, code=None):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    if code:
        assert body["error"]["code"] == code
    return body["error"]


# -- every route ----------------------------------------------------------------------------------


def test_health_and_openapi(api):
    assert api.get("/healthz").json() == {"status": "ok", "version": hippo.__version__, "auth": False}
    paths = api.get("/openapi.json").json()["paths"]
    assert {f"{A.replace('alice', '{agent_id}')}{p}" for p in (
        "/memories", "/memories/recall", "/memories/{memory_id}", "/facts", "/forget", "/blocks", "/blocks/{key}",
        "/conversation", "/tools/{name}", "/stats")} <= set(paths)
    assert set(paths[f"{A.replace('alice', '{agent_id}')}/memories/recall"]) == {"post"}


def test_memories_routes(api, db_path):
    created = api.post(f"{A}/memories", json={"content": "We chose SQLite", "metadata": {"tags": ["db"]}})
    assert created.status_code == 201 and created.json()["action"] == "inserted"
    memory_id = created.json()["id"]
    again = api.post(f"{A}/memories", json={"content": "We chose SQLite"})
    assert again.status_code == 200 and again.json()["action"] == "strengthened"

    hits = api.get(f"{A}/memories", params={"q": "SQLite", "tag": "db"}).json()
    assert [h["chunk"]["id"] for h in hits["hits"]] == [memory_id] and hits["mode"] == "hybrid"
    assert api.get(f"{A}/memories/{memory_id}").json()["content"] == "We chose SQLite"

    patched = api.patch(f"{A}/memories/{memory_id}", json={"metadata": {"tags": ["database"]}})
    assert patched.json()["metadata"] == {"tags": ["database"]}

    facts = api.post(f"{A}/facts", json={"text": "I live in Berlin."}).json()
    assert facts["summary"].startswith("Learned 1 fact") and facts["facts"][0]["action"] == "new"

    preview = api.post(f"{A}/forget", json={"description": "SQLite", "preview": True}).json()
    assert preview["preview"] is True and [d["id"] for d in preview["deleted"]] == [memory_id]
    assert api.delete(f"{A}/memories/{memory_id}").json()["id"] == memory_id
    error(api.get(f"{A}/memories/{memory_id}"), 404, "not_found")
    assert sql(db_path, "SELECT count(*) FROM chunks WHERE content = 'We chose SQLite'") == [(0,)]

    stats = api.get(f"{A}/stats").json()
    assert stats["facts"] == 1 and stats["memories"] == 0 and stats["database"] is None


def test_feedback_and_provenance_routes(api):
    ids = [api.post(f"{A}/memories", json={"content": text, "source": source, "session_id": "s1"}).json()["id"]
           for text, source in (("The build uses make", "migration"), ("The build takes ten minutes", None))]
    reinforced = api.post(f"{A}/memories/{ids[1]}/reinforce")
    assert reinforced.status_code == 200 and reinforced.json()["feedback"] == 3
    assert reinforced.json()["reinforced_at"] is not None
    assert api.post(f"{A}/memories/{ids[0]}/demote").json()["feedback"] == -1
    error(api.post(f"{A}/memories/{'0' * 26}/reinforce"), 404, "not_found")
    error(api.post(f"{A}/memories/nope/demote"), 422)

    hits = api.get(f"{A}/memories", params={"q": "build", "source": "migration"}).json()["hits"]
    assert [h["chunk"]["id"] for h in hits] == [ids[0]] and hits[0]["chunk"]["session_id"] == "s1"
    looked = api.get(f"{A}/memories", params=[("q", "build"), ("source", "migration"), ("source", "agent")]).json()
    assert {h["chunk"]["id"] for h in looked["hits"]} == set(ids)
    assert api.get(f"{A}/memories/{ids[0]}/related").json()["links"] == []  # a look links nothing
    both = api.post(f"{A}/memories/recall", json={"query": "build", "source": ["migration", "agent"]}).json()
    assert {h["chunk"]["id"] for h in both["hits"]} == set(ids)
    feedback = {h["chunk"]["id"]: h["feedback"] for h in both["hits"]}
    assert feedback[ids[1]] > 1 > feedback[ids[0]]  # the reinforced one up, the demoted one down
    api.post(f"{A}/memories/recall", json={"query": "build", "limit": 2})  # a second joint recall: a strong link
    related = api.get(f"{A}/memories/{ids[0]}/related").json()["links"]
    assert [(x["chunk"]["id"], x["kind"], x["strength"]) for x in related] == [(ids[1], "co_recall", 2.0)]
    expanded = api.get(f"{A}/memories", params={"q": "make", "limit": 1, "expand": "true"}).json()["hits"]
    assert [(h["chunk"]["id"], h["linked_from"]) for h in expanded] == [(ids[0], None), (ids[1], ids[0])]
    counted = api.post(f"{A}/memories/recall", json={"query": "make", "limit": 1, "expand": True}).json()["hits"]
    assert [(h["chunk"]["id"], h["linked_from"]) for h in counted] == [(ids[0], None), (ids[1], ids[0])]
    error(api.get(f"{A}/memories", params={"source": "agent"}), 400, "invalid_input")
    error(api.post(f"{A}/memories", json={"content": "x", "source": "Bad Source"}), 400, "invalid_input")


def test_a_get_search_counts_nothing_and_a_post_recall_counts(api):
    """GET memories?q= is a look; POST memories/recall is the recall an agent makes: its hits count
    as retrieved (access count, last access, +0.02 strength)."""
    memory_id = api.post(f"{A}/memories", json={"content": "The staging database listens on port 5433"}).json()["id"]
    start = api.get(f"{A}/memories/{memory_id}").json()
    for _ in range(3):
        hits = api.get(f"{A}/memories", params={"q": "staging database port"}).json()["hits"]
        assert [h["chunk"]["id"] for h in hits] == [memory_id]
    looked = api.get(f"{A}/memories/{memory_id}").json()
    assert (looked["access_count"], looked["running_intensity"], looked["last_accessed_at"]) == \
        (start["access_count"], start["running_intensity"], start["last_accessed_at"])
    recalled = api.post(f"{A}/memories/recall", json={"query": "staging database port", "kind": "memory"})
    assert recalled.status_code == 200 and [h["chunk"]["id"] for h in recalled.json()["hits"]] == [memory_id]
    counted = api.get(f"{A}/memories/{memory_id}").json()
    assert counted["access_count"] == start["access_count"] + 1
    assert counted["running_intensity"] == pytest.approx(start["running_intensity"] + 0.02)
    error(api.post(f"{A}/memories/recall", json={"q": "staging"}), 422)  # the body names it query
    error(api.post(f"{A}/memories/recall", json={"query": ""}), 422)
    error(api.post(f"{A}/memories/recall", json={"query": "x", "metadata": {"n": {"$near": 1}}}), 400, "invalid_input")
    error(api.get(f"{A}/memories/recall"), 422)  # not a memory id


def test_stats_are_whole_counts_and_iso_times(api, clock):
    api.post(f"{A}/experiences", json={"type": "error", "content": "Kafka broker 3 ran out of disk"})
    api.post(f"{A}/consolidate")
    stats = api.get(f"{A}/stats").json()
    numbers = {k: v for k, v in stats.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    assert numbers and all(type(v) is int for v in numbers.values()), numbers
    counters = stats["consolidation"]
    assert {k: type(v) for k, v in counters.items() if k not in ("last_run_at", "consolidation_rate")} == \
        dict.fromkeys(("recorded", "evicted", "consolidated", "merged", "pruned", "archived", "runs", "capacity"), int)
    assert counters["runs"] == 2 and counters["consolidated"] == 1 and counters["consolidation_rate"] == 1.0
    assert datetime.fromisoformat(counters["last_run_at"]) == clock()  # ISO 8601, not seconds since 1970
    assert '"consolidated":1,' in api.get(f"{A}/stats").text  # not 1.0


def test_archive_routes(base, clock):
    capped = hippo.open(base.database, agent_id="alice", embedder=FakeEmbedder(dimension=1024), clock=clock,
                        max_db_bytes=1)
    old = capped.store_memory("An old note about the heron").id
    clock.advance(days=30)
    capped.store_memory("A new note about the garden")
    with BackgroundServer(capped) as url, httpx.Client(base_url=url, timeout=30) as api:
        assert capped.maintain().archived == 2
        hits = api.get(f"{A}/archive", params={"q": "heron"}).json()["hits"]
        assert [h["chunk"]["id"] for h in hits] == [old] and hits[0]["score"] > 0
        assert api.get(f"{A}/memories", params={"q": "heron"}).json()["hits"] == []
        mixed = api.get(f"{A}/memories", params={"q": "heron", "include_archived": "true"}).json()["hits"]
        assert [(h["chunk"]["id"], h["archived"]) for h in mixed] == [(old, True)]
        restored = api.post(f"{A}/archive/{old}/restore")
        assert restored.status_code == 200 and restored.json()["id"] == old
        assert api.get(f"{A}/archive", params={"q": "heron"}).json()["hits"] == []
        error(api.post(f"{A}/archive/{old}/restore"), 404, "not_found")
        error(api.get(f"{A}/memories", params={"include_archived": "true"}), 400, "invalid_input")
    capped.close()


def test_blocks_routes(api):
    error(api.get(f"{A}/blocks/human"), 404, "block_not_found")
    assert api.post(f"{A}/blocks/human", json={"text": "Name: Kris"}).json()["value"] == "Name: Kris"
    assert api.patch(f"{A}/blocks/human", json={"old": "Kris", "new": "Chris"}).json()["value"] == "Name: Chris"
    error(api.patch(f"{A}/blocks/human", json={"old": "pirate", "new": "x"}), 409, "text_not_found")
    error(api.patch(f"{A}/blocks/persona", json={"old": "x", "new": "y"}), 404, "block_not_found")
    put = api.put(f"{A}/blocks/persona", json={"value": "A helpful assistant", "char_limit": 40}).json()
    assert put["char_limit"] == 40
    error(api.post(f"{A}/blocks/persona", json={"text": "x" * 50}), 409, "limit_exceeded")
    assert [b["key"] for b in api.get(f"{A}/blocks").json()["items"]] == ["human", "persona"]
    assert api.get(f"{A}/blocks/persona").json()["value"] == "A helpful assistant"


def test_conversation_and_tools_routes(api, db_path):
    hippo.create_messages_table(db_path)
    sql(db_path, "INSERT INTO messages (agent_id, role, content) VALUES ('alice', 'user', 'the OAuth redirect is wrong')")
    hits = api.get(f"{A}/conversation", params={"q": "OAuth redirect"}).json()
    assert hits[0]["content"] == "the OAuth redirect is wrong"
    result = api.post(f"{A}/tools/store_memory", json={"content": "Tools over HTTP"}).json()
    assert result["ok"] is True and result["action"] == "inserted"
    structured = api.post(f"{A}/tools/replace_memory_block", json={"key": "human", "old_text": "a", "new_text": "b"})
    assert structured.status_code == 200 and structured.json()["error"]["code"] == "block_not_found"
    error(api.post(f"{A}/tools/recall_everything", json={}), 404, "unknown_tool")


def test_the_tool_definitions_are_those_of_python(api, base, db_path):
    listed = api.get(f"{A}/tools").json()["items"]
    assert listed == [{"name": t.name, "description": t.description, "parameters": t.parameters}
                      for t in base.for_agent("alice").tools()]
    assert "recall_conversation" not in [t["name"] for t in listed]  # no messages table yet
    hippo.create_messages_table(db_path)
    assert "recall_conversation" in [t["name"] for t in api.get(f"{A}/tools").json()["items"]]


def test_list_paginates_newest_first(api):
    ids = [api.post(f"{A}/memories", json={"content": f"memory number {i}"}).json()["id"] for i in range(25)]
    seen, cursor = [], None
    while True:
        page = api.get(f"{A}/memories", params={"limit": 10, **({"cursor": cursor} if cursor else {})}).json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]
    assert len(api.get(f"{A}/memories", params={"limit": 10, "kind": "fact"}).json()["items"]) == 0
    error(api.get(f"{A}/memories", params={"cursor": "not a ulid"}), 422, "invalid_request")


# -- each error status ------------------------------------------------------------------------------


def test_error_statuses(api, base, db_path):
    error(api.post("/v1/agents/bad agent!/memories", json={"content": "x"}), 422, "invalid_request")
    error(api.post(f"{A}/memories", json={"content": "x", "metadata": {"tags": "not-a-list"}}), 400)
    error(api.get(f"{A}/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV"), 404, "not_found")
    error(api.get("/v1/nowhere"), 404)
    error(api.patch(f"{A}/blocks/human", json={"old": "a", "new": "b"}), 404)
    error(api.delete(f"{A}/blocks/human"), 405)
    error(api.post(f"{A}/memories", content=b"{" + b" " * 2_000_000 + b"}",
                   headers={"content-type": "application/json"}), 413, "too_large")
    error(api.post(f"{A}/memories", json={"content": ""}), 422, "invalid_request")
    error(api.post(f"{A}/memories", json={"content": "x", "extra": 1}), 422)
    error(api.post(f"{A}/memories", content=b"{not json", headers={"content-type": "application/json"}), 422)
    error(api.get(f"{A}/memories", params={"limit": 0}), 422)


def test_provider_down_is_503(db_path, clock):
    llm = FakeLLM(script=[ProviderError("upstream LLM is down", retryable=True)])
    mem = hippo.open(db_path, agent_id="default", embedder=FakeEmbedder(), llm=llm, clock=clock)
    with BackgroundServer(mem) as url:
        response = httpx.post(f"{url}{A}/facts", json={"text": "I live in Berlin."})
    body = error(response, 503, "provider_error")
    assert "down" in body["message"]
    assert sql(db_path, "SELECT count(*) FROM chunks") == [(0,)]


def test_unexpected_errors_say_nothing(api, base, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals at /srv/hippo")

    monkeypatch.setattr(type(base), "stats", broken)
    body = error(api.get(f"{A}/stats"), 500, "internal")
    assert "secret" not in body["message"] and "Traceback" not in body["message"]


# -- keys -------------------------------------------------------------------------------------------


def test_patch_changes_content_in_place_and_delete_all_erases_one_agent(api, base, db_path):
    memory_id = api.post(f"{A}/memories", json={"content": "The door code is 1234"}).json()["id"]
    patched = api.patch(f"{A}/memories/{memory_id}", json={"content": "The door code is 4711"}).json()
    assert (patched["id"], patched["content"]) == (memory_id, "The door code is 4711")
    assert sql(db_path, "SELECT count(*) FROM chunks WHERE content LIKE '%1234%'") == [(0,)]
    hits = api.get(f"{A}/memories", params={"q": "door code 4711"}).json()["hits"]
    assert hits[0]["chunk"]["id"] == memory_id
    error(api.patch(f"{A}/memories/{memory_id}", json={}), 400, "invalid_input")
    error(api.patch(f"{A}/memories/{memory_id}", json={"content": ""}), 422)

    base.for_agent("bob").store_memory("Bob keeps this")
    api.put(f"{A}/blocks/human", json={"value": "Alice"})
    error(api.delete(f"{A}/memories"), 422)  # the confirmation is required
    error(api.delete(f"{A}/memories", params={"confirm": "bob"}), 400, "invalid_input")
    assert api.get(f"{A}/stats").json()["memories"] == 1
    erased = api.delete(f"{A}/memories", params={"confirm": "alice"}).json()
    assert (erased["memories"], erased["blocks"], erased["scrubbed"]) == (1, 1, True)
    assert api.get(f"{A}/stats").json()["memories"] == 0
    assert [h.content for h in base.for_agent("bob").recall_memories("Bob", touch=False)] == ["Bob keeps this"]


def test_search_with_metadata_operators(api):
    import json

    api.post(f"{A}/memories", json={"content": "Ticket: login page is slow", "metadata": {"priority": 3}})
    api.post(f"{A}/memories", json={"content": "Ticket: typo in footer", "metadata": {"priority": 1}})
    where = json.dumps({"priority": {"$gte": 2}})
    hits = api.get(f"{A}/memories", params={"q": "Ticket", "metadata": where}).json()["hits"]
    assert [h["chunk"]["content"] for h in hits] == ["Ticket: login page is slow"]
    error(api.get(f"{A}/memories", params={"q": "Ticket", "metadata": '{"priority": {"$near": 2}}'}), 400,
          "invalid_input")
    error(api.get(f"{A}/memories", params={"q": "Ticket", "metadata": "{not json"}), 400, "invalid_input")
    error(api.get(f"{A}/memories", params={"metadata": where}), 400, "invalid_input")  # listing takes no filter


def test_blocks_as_a_prompt_section(api):
    api.put(f"{A}/blocks/persona", json={"value": "A patient tutor."})
    api.put(f"{A}/blocks/human", json={"value": "Name: Kris"})
    section = api.get(f"{A}/context").json()["context"]
    assert section.index("<human") < section.index("<persona") and "Name: Kris" in section
    assert api.get(f"{A}/context", params={"max_tokens": 50}).json()["context"].startswith("<memory_blocks>")
    error(api.get(f"{A}/context", params={"max_tokens": 10}), 422)


def test_facts_from_chat_messages(api):
    chat = [{"role": "system", "content": "The user lives in Atlantis."},
            {"role": "user", "content": [{"type": "text", "text": "I moved to Lisbon last month."}]}]
    facts = api.post(f"{A}/facts", json={"messages": chat}).json()["facts"]
    assert len(facts) == 1 and "Lisbon" in facts[0]["fact"]
    error(api.post(f"{A}/facts", json={"text": "I like tea", "messages": chat}), 422)
    error(api.post(f"{A}/facts", json={}), 422)
    error(api.post(f"{A}/facts", json={"messages": [{"role": "wizard", "content": "x"}]}), 400, "invalid_input")


def agent_routes(agent):
    p = f"/v1/agents/{agent}"
    mid = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    return [
        ("GET", f"{p}/memories", None), ("GET", f"{p}/memories?q=x", None),
        ("POST", f"{p}/memories/recall", {"query": "x"}),
        ("POST", f"{p}/memories", {"content": "x"}), ("GET", f"{p}/memories/{mid}", None),
        ("PATCH", f"{p}/memories/{mid}", {"metadata": {}}), ("DELETE", f"{p}/memories/{mid}", None),
        ("DELETE", f"{p}/memories?confirm={agent}", None), ("GET", f"{p}/context", None),
        ("POST", f"{p}/facts", {"text": "I like tea"}), ("POST", f"{p}/forget", {"description": "tea"}),
        ("GET", f"{p}/blocks", None), ("GET", f"{p}/blocks/human", None),
        ("PUT", f"{p}/blocks/human", {"value": "x"}), ("POST", f"{p}/blocks/human", {"text": "x"}),
        ("PATCH", f"{p}/blocks/human", {"old": "x", "new": "y"}), ("GET", f"{p}/conversation?q=x", None),
        ("POST", f"{p}/tools/recall_memory_block", {"key": "human"}), ("GET", f"{p}/tools", None),
        ("GET", f"{p}/stats", None),
        ("POST", f"{p}/memories/{mid}/reinforce", None), ("POST", f"{p}/memories/{mid}/demote", None),
        ("GET", f"{p}/archive?q=x", None), ("POST", f"{p}/archive/{mid}/restore", None),
        ("GET", f"{p}/memories/{mid}/related", None), ("GET", f"{p}/facts/{mid}/history", None),
        ("POST", f"{p}/facts/{mid}/split", {"wording": "x"}), ("POST", f"{p}/receipts/verify", {}),
    ]


def test_every_agent_route_is_in_the_key_test():
    from hippo.interfaces.http.app import router

    wanted = {(m, r.path) for r in router.routes for m in r.methods if r.path.startswith("/v1/agents/")}
    covered = {(m, u.split("?")[0].replace("/v1/agents/bob", "/v1/agents/{agent_id}")
                .replace("01ARZ3NDEKTSV4RRFFQ69G5FAV", "{memory_id}").replace("/human", "/{key}")
                .replace("/recall_memory_block", "/{name}")) for m, u, _ in agent_routes("bob")}
    assert wanted == covered


def test_keys_scope_agents(base, db_path):
    alice_key, _ = create_key(base.store, ["alice"], now=NOW)
    admin_key, _ = create_key(base.store, [], admin=True, now=NOW)
    bob = base.for_agent("bob")
    bob.store_memory("Bob's private note about his salary")
    bob.append_memory_block("human", "Bob")
    before = sql(db_path, "SELECT * FROM chunks ORDER BY id"), sql(db_path, "SELECT * FROM memory_blocks")
    with BackgroundServer(base) as url, httpx.Client(base_url=url) as client:
        assert client.get("/healthz").json()["auth"] is True
        for method, path, body in agent_routes("bob"):
            for headers, status in (({"Authorization": f"Bearer {alice_key}"}, 403), ({}, 401),
                                    ({"Authorization": "Bearer hippo_000000000000_" + "x" * 43}, 401),
                                    ({"Authorization": alice_key}, 401),
                                    ({"Authorization": f"Bearer {alice_key[:-1]}y"}, 401)):
                response = client.request(method, path, json=body, headers=headers)
                err = error(response, status)
                assert "salary" not in response.text and "Bob" not in response.text, (method, path)
                assert err["code"] == ("forbidden" if status == 403 else "unauthorized")
                assert response.headers.get("www-authenticate") == ("Bearer" if status == 401 else None)
        assert after_all(db_path) == before
        ok = client.get("/v1/agents/alice/stats", headers={"Authorization": f"Bearer {alice_key}"})
        assert ok.status_code == 200
        admin = client.get("/v1/agents/bob/memories?q=salary", headers={"Authorization": f"Bearer {admin_key}"})
        assert admin.json()["hits"][0]["chunk"]["content"] == "Bob's private note about his salary"


def after_all(db_path):
    return sql(db_path, "SELECT * FROM chunks ORDER BY id"), sql(db_path, "SELECT * FROM memory_blocks")


def test_keys_are_stored_hashed(base, db_path):
    token, record = create_key(base.store, ["alice"], label="ci", now=NOW)
    raw = b"".join(p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name))
    assert token.encode() not in raw and token.split("_", 2)[2].encode() not in raw
    assert record.id.encode() in raw


def test_no_key_means_loopback_only(base):
    assert check_bind(base, "127.0.0.1") is False
    with pytest.raises(hippo.ConfigError, match="without API keys"):
        check_bind(base, "0.0.0.0")
    create_key(base.store, ["alice"], now=NOW)
    assert check_bind(base, "0.0.0.0") is True


# -- concurrency --------------------------------------------------------------------------------------


def test_concurrent_clients_lose_no_write(base, db_path):
    clients, writes = 8, 200
    failures: list[str] = []

    def client_run(url: str, n: int) -> None:
        agent = f"/v1/agents/agent-{n % 4}"
        with httpx.Client(base_url=url, timeout=60) as client:
            for i in range(writes):
                kind = i % 4
                if kind == 0:
                    r = client.post(f"{agent}/memories", json={"content": f"client {n} memory {i}"})
                elif kind == 1:
                    r = client.post(f"{agent}/blocks/log-{n}", json={"text": f"line {i}"})
                elif kind == 2:
                    r = client.post(f"{agent}/memories", json={"content": f"client {n} memory {i - 2}"})  # strengthen
                else:
                    r = client.post(f"{agent}/tools/store_memory", json={"content": f"client {n} tool {i}"})
                if r.status_code >= 300 or (kind == 3 and not r.json()["ok"]):
                    failures.append(f"{r.status_code} {r.text[:200]}")

    with BackgroundServer(base) as url:
        threads = [threading.Thread(target=client_run, args=(url, n)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []
    per_client = writes // 4
    assert sql(db_path, "SELECT count(*) FROM chunks") == [(clients * per_client * 2,)]
    assert sql(db_path, "SELECT min(encounter_count), max(encounter_count) FROM chunks WHERE content LIKE '%memory%'") \
        == [(2, 2)]
    for n in range(clients):
        [(value,)] = sql(db_path, f"SELECT value FROM memory_blocks WHERE key = 'log-{n}'")
        assert value.splitlines() == [f"line {i}" for i in range(1, writes, 4)]
