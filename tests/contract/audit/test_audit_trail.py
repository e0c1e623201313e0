"""The audit trail on every backend: each kind of change leaves one record (one per transaction of
its operation, all with the call's operation id) with the right actor; the records hold no text;
a verify names an altered, removed or reordered record; trimming leaves a signed checkpoint."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from support import sql
from traces import SECRET

from hippo.errors import InvalidInput


def _new(mem: Any, before: set[int]) -> list[Any]:
    return [r for r in mem.audit(limit=1000).items if r.seq not in before]


def _changes(mem: Any) -> list[tuple[str, Callable[[], Any]]]:
    first: dict[str, Any] = {}

    def store() -> Any:
        first["id"] = mem.store_memory("the zebra likes green tea").id

    return [
        ("store_memory", store),
        ("store_memory", lambda: mem.store_memory("the zebra likes green tea")),  # strengthened
        ("store_memories", lambda: mem.store_memories(["alpha one", "beta two"])),
        ("remember_facts", lambda: mem.remember_facts("Alice lives in Paris.")),
        ("remember_facts", lambda: mem.remember_facts("Alice lives in Berlin.")),  # supersedes
        ("update_memory", lambda: mem.update_memory(first["id"], "the zebra likes black tea")),
        ("update_metadata", lambda: mem.update_metadata(first["id"], metadata={"a": 1})),
        ("reinforce_memory", lambda: mem.reinforce_memory(first["id"])),
        ("demote_memory", lambda: mem.demote_memory(first["id"])),
        ("set_memory_block", lambda: mem.set_memory_block("persona", "helpful")),
        ("append_memory_block", lambda: mem.append_memory_block("persona", " and kind")),
        ("replace_memory_block", lambda: mem.replace_memory_block("persona", "kind", "warm")),
        ("record_experience", lambda: mem.record_experience("task", "deployed the app", importance=0.9)),
        ("put_item", lambda: mem.put_item("k1", "an item")),
        ("delete_item", lambda: mem.delete_item("k1")),
        ("delete_memory", lambda: mem.delete_memory(first["id"])),
        ("forget_memory", lambda: mem.forget_memory("alpha one")),
        ("delete_all", lambda: mem.delete_all()),
    ]


def test_every_kind_of_change_leaves_its_records_with_the_actor(make_mem, api) -> None:
    mem = make_mem("alice")
    who, surface = ("anonymous", "http") if api == "remote" else ("local", "python")
    for name, change in _changes(mem):
        before = {r.seq for r in mem.audit(limit=1000).items}
        change()
        new = _new(mem, before)
        assert new, f"{name} left no record"
        assert {r.operation for r in new} == {name}
        assert len({r.operation_id for r in new}) == 1, f"{name}: one operation id per call"
        if name != "record_experience":  # its buffer and its long-term memory: a transaction each
            assert len(new) == 1, f"{name}: {[r.counts for r in new]}"
        assert {(r.who, r.surface) for r in new} == {(who, surface)}
    stored = mem.audit(operation="store_memory").items
    assert stored[-1].counts == {"inserted": 1} and len(next(iter(stored[-1].touched.values()))) == 64
    seqs = [r.seq for r in mem.audit(limit=1000).items]
    assert seqs == list(range(len(seqs), 0, -1))


def test_the_inbox_sessions_experiences_and_compaction_leave_counts_and_ids(mem) -> None:
    """What capture, sessions, consolidation, surfacing and compaction did, counted in their records."""
    def counts(operation: str) -> dict[str, int]:
        found: dict[str, int] = {}
        for record in mem.audit(operation=operation, limit=100).items:
            for what, n in record.counts.items():
                found[what] = found.get(what, 0) + n
        return found

    mem.observe([{"role": "user", "content": "I moved to Lisbon last year.", "id": "m1"},
                 {"role": "user", "content": "I work as a nurse now.", "id": "m2"}], session_id="s")
    mem.process_pending()
    mem.add_session_items("t", [{"role": "user", "content": "hello there"}])
    mem.record_experience("insight", "Deploys on Friday break things", importance=0.2)
    mem.consolidate()
    kept = mem.store_memory("Tomatoes need full sun all day.").id
    mem.surface([{"role": "user", "content": "how much sun do tomatoes need?"}], session_id="u")
    mem.compact([{"role": "user", "content": f"Step {i}: we decided to use PostgreSQL."} for i in range(12)],
                session_id="c")
    assert counts("observe") == {"messages_observed": 2}
    assert counts("process_pending")["messages_processed"] == 2
    assert counts("add_session_items")["session_items_added"] == 1
    assert counts("consolidate").get("consolidation_runs") == 1
    surfaced = mem.audit(operation="surface").items
    assert surfaced and kept in surfaced[0].touched and counts("surface")["surfaced"] >= 1
    assert counts("compact").get("inserted", 0) >= 1


def test_a_recall_and_a_read_leave_no_record(mem) -> None:
    mem.store_memory("the zebra likes green tea")
    count = len(mem.audit().items)
    mem.recall_memories("zebra")
    mem.list_memories()
    mem.stats()
    mem.store_memory("another memory")  # its read waits for the recall's bookkeeping first
    assert [r.operation for r in mem.audit().items][:2] == ["store_memory", "store_memory"]
    assert len(mem.audit().items) == count + 1


def test_filters_and_pages(mem, clock) -> None:
    ids = [mem.store_memory(f"memory number {i}").id for i in range(5)]
    clock.advance(days=2)
    mem.delete_memory(ids[0])
    assert [r.operation for r in mem.audit(operation="delete_memory").items] == ["delete_memory"]
    assert [r.operation for r in mem.audit(chunk_id=ids[0]).items] == ["delete_memory", "store_memory"]
    assert len(mem.audit(since=clock() - __import__("datetime").timedelta(days=1)).items) == 1
    assert len(mem.audit(until=clock() - __import__("datetime").timedelta(days=1)).items) == 5
    first = mem.audit(limit=4)
    rest = mem.audit(limit=4, cursor=first.next_cursor)
    assert [r.seq for r in first.items + rest.items] == [6, 5, 4, 3, 2, 1] and rest.next_cursor is None
    with pytest.raises(InvalidInput):
        mem.audit(cursor="x")
    with pytest.raises(InvalidInput):
        mem.audit(chunk_id="not an id")


def test_the_trail_holds_no_text(mem, db) -> None:
    stored = mem.store_memory(f"my password is {SECRET}")
    mem.set_memory_block("human", f"likes {SECRET}")
    mem.delete_memory(stored.id)
    bodies = sql(db, "SELECT agent_id, operation, who, surface, body FROM audit_records")
    assert bodies and not any(SECRET.lower() in str(row).lower() for row in bodies)
    assert stored.id in str(bodies)  # ids and digests only


@pytest.mark.embedded_only("verify_audit is an operator's step, not offered over HTTP")
def test_verify_names_an_altered_a_removed_and_a_reordered_record(mem, db) -> None:
    for i in range(6):
        mem.store_memory(f"memory number {i}")
    assert mem.verify_audit().ok
    sql(db, "UPDATE audit_records SET who = 'mallory' WHERE seq = 3")
    broken = mem.verify_audit().breaks
    assert [(b.seq, "altered" in b.reason) for b in broken] == [(3, True)]
    sql(db, "UPDATE audit_records SET who = 'local' WHERE seq = 3")
    assert mem.verify_audit().ok
    sql(db, "DELETE FROM audit_records WHERE seq = 4")
    assert [(b.seq, "removed" in b.reason) for b in mem.verify_audit().breaks] == [(4, True)]


@pytest.mark.embedded_only("verify_audit is an operator's step, not offered over HTTP")
def test_verify_names_swapped_removed_first_and_removed_last_records(make_mem, db) -> None:
    mem = make_mem("alice")
    for i in range(4):
        mem.store_memory(f"memory number {i}")
    sql(db, "UPDATE audit_records SET seq = 100 WHERE seq = 2")
    sql(db, "UPDATE audit_records SET seq = 2 WHERE seq = 3")
    sql(db, "UPDATE audit_records SET seq = 3 WHERE seq = 100")
    assert [b.seq for b in mem.verify_audit().breaks] == [2]
    bob = make_mem("bob")
    for i in range(3):
        bob.store_memory(f"memory number {i}")
    sql(db, "DELETE FROM audit_records WHERE agent_id = 'bob' AND seq = 3")
    assert ["newest" in b.reason for b in bob.verify_audit().breaks] == [True]
    sql(db, "DELETE FROM audit_records WHERE agent_id = 'bob' AND seq = 1")
    assert [b.seq for b in bob.verify_audit().breaks] == [2]
    report = mem.verify_audit(every_agent=True)
    assert report.agents == 2 and {b.agent_id for b in report.breaks} == {"alice", "bob"}


@pytest.mark.embedded_only("trimming is an operator's step, not offered over HTTP")
def test_trimming_leaves_a_signed_checkpoint_that_keeps_the_chain_verifiable(mem, clock, db) -> None:
    for i in range(3):
        mem.store_memory(f"old memory {i}")
    clock.advance(days=40)
    mem.store_memory("new memory")
    assert mem.trim_audit() == 0  # no retention set: everything is kept
    assert mem.trim_audit(older_than_days=30) == 3
    records = mem.audit().items
    assert [(r.seq, r.kind) for r in records] == [(5, "checkpoint"), (4, "change")]
    assert records[0].checkpoint is not None and records[0].checkpoint["through"] == 3
    assert records[0].operation == "trim_audit" and mem.verify_audit().ok
    sql(db, "UPDATE audit_records SET body = replace(body, '\"through\":3', '\"through\":2') WHERE seq = 5")
    assert mem.verify_audit().breaks[0].seq == 5


@pytest.mark.embedded_only("the test reopens the database after undoing a migration")
def test_a_trail_from_before_the_touched_index_finds_its_records_by_id_after_the_upgrade(make_mem, db) -> None:
    mem = make_mem("alice")
    first = mem.store_memory("the zebra likes green tea").id
    mem.update_memory(first, "the zebra likes black tea")
    mem.store_memory("another note")
    mem.close()
    if db.startswith("postgresql://"):  # the database as it was before migration 0026
        sql(db, "DROP TABLE audit_touched")
        sql(db, "DELETE FROM hippo_migrations WHERE name = '0026_audit_touched'")
    else:  # and before 0029
        sql(db, "DROP TABLE audit_touched")
        sql(db, "DELETE FROM hippo_migrations WHERE name = '0029_audit_touched'")
        sql(db, f"PRAGMA user_version = {sql(db, 'PRAGMA user_version')[0][0] - 1}")
    again = make_mem("alice")
    assert [r.operation for r in again.audit(chunk_id=first).items] == ["update_memory", "store_memory"]
    again.forget_memory("zebra")
    assert [r.operation for r in again.audit(chunk_id=first).items] == ["forget_memory", "update_memory",
                                                                        "store_memory"]
