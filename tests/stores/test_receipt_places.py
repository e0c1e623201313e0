"""A forget's receipt against a planted copy: after the forget, a copy of the removed text (or a
row naming the removed id) is put into one place of the database behind hippo's back, and the
receipt, checked again, fails and names that place and no other. Each place is planted the way
its backend allows: some rows cannot exist on PostgreSQL (a foreign key refuses a link to a
removed chunk), which the test shows instead."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
from support import sql

import hippo
from hippo.errors import InvalidInput
from hippo.stores.sqlite.index.hnsw import ann_available

SECRET = "Zyzzogeton-Quibblefrump"
SAID = f"My locker at the climbing gym opens with the code {SECRET} every evening."
FILLER = [f"Gardening note {i}: tomatoes need sun and regular watering" for i in range(12)]
WHEN = "2025-01-01T00:00:00+00:00"


def _json(pg: bool) -> str:
    return "CAST(? AS jsonb)" if pg else "?"


def _memories(mem: Any, db: str, gone: str, pg: bool) -> None:
    mem.store_memory(f"Copied from a note: {SAID}")


def _archive(mem: Any, db: str, gone: str, pg: bool) -> None:
    copy = mem.store_memory(f"Copied from a note: {SAID}").id
    with hippo.open(db, agent_id="alice", embedder=mem.embedding.embedder, max_db_bytes=1) as operator:
        operator.maintain()
    assert any(h.id == copy for h in mem.search_archive(SECRET))


def _history(mem: Any, db: str, gone: str, pg: bool) -> None:
    fact = mem.remember_facts("I work as a carpenter.").facts[0].id
    sql(db, "INSERT INTO fact_merges (id, agent_id, fact_id, content, similarity, intensity, merged_at) "
            "VALUES ('01PLANTEDWORDING0000000000', 'alice', ?, ?, 0.9, 0.5, ?)", (fact, SAID, WHEN))


def _experiences(mem: Any, db: str, gone: str, pg: bool) -> None:
    sql(db, "INSERT INTO short_term (id, agent_id, type, content, importance, context, tags, observed_at, created_at) "
            f"VALUES ('01PLANTEDEXPERIENCE0000000', 'alice', 'insight', ?, 0.5, {_json(pg)}, {_json(pg)}, ?, ?)",
        (SAID, "{}", "[]", WHEN, WHEN))


def _inbox(mem: Any, db: str, gone: str, pg: bool) -> None:
    sql(db, "INSERT INTO observed_messages (agent_id, session_id, message_id, role, content, created_at) "
            "VALUES ('alice', 'planted', 'm1', 'user', ?, ?)", (f"As I said: {SAID}", WHEN))


def _session_items(mem: Any, db: str, gone: str, pg: bool) -> None:
    item = json.dumps({"type": "message", "role": "user", "content": [{"type": "input_text", "text": SAID}]})
    sql(db, f"INSERT INTO session_items (agent_id, session_id, message_id, item, created_at) "
            f"VALUES ('alice', 'planted', 'm1', {_json(pg)}, ?)", (item, WHEN))


def _blocks(mem: Any, db: str, gone: str, pg: bool) -> None:
    mem.set_memory_block("notes", SAID)


def _audit_trail(mem: Any, db: str, gone: str, pg: bool) -> None:
    sql(db, "UPDATE audit_records SET body = ? WHERE agent_id = 'alice' AND seq = 1", (json.dumps({"note": SAID}),))


def _links(mem: Any, db: str, gone: str, pg: bool) -> None:
    keep = mem.store_memory("The bike shed key hangs by the door.").id
    sql(db, "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) "
            "VALUES ('alice', 'co_recall', ?, ?, 1.0, ?)", (keep, gone, WHEN))


def _full_text(mem: Any, db: str, gone: str, pg: bool) -> None:
    if pg:  # a live chunk's words replaced by the removed text's
        sql(db, "UPDATE chunk_words SET tsv = to_tsvector('simple', ?) WHERE id = "
                "(SELECT min(id) FROM chunk_words WHERE agent_id = 'alice')", (SAID,))
    else:  # an entry of the index with no row behind it
        sql(db, "INSERT INTO chunks_fts (rowid, content) VALUES (999999, ?)", (SAID,))


def _vectors(mem: Any, db: str, gone: str, pg: bool) -> None:
    sql(db, "INSERT INTO chunk_windows (key, embedding) VALUES (?, ?)", (2 ** 40, b"\0" * 16))


PLACES: dict[str, Callable[[Any, str, str, bool], None]] = {
    "memories": _memories, "archive": _archive, "history": _history, "experiences": _experiences,
    "capture inbox": _inbox, "session items": _session_items, "blocks": _blocks, "audit trail": _audit_trail,
    "links": _links, "full-text index": _full_text, "vectors": _vectors,
}
# On PostgreSQL these rows cannot be written: a foreign key refuses a row naming a removed chunk.
REFUSED_ON_POSTGRES = {"links", "vectors"}


def _forgotten(db: str, embedder: Any, **settings: Any) -> tuple[Any, Any, str]:
    mem = hippo.open(db, agent_id="alice", embedder=embedder, **settings)
    mem.store_memories(FILLER)
    gone = mem.store_memory(SAID).id
    result = mem.forget_memory(SECRET, receipt=True)
    assert [f.id for f in result.deleted] == [gone]
    if db.startswith("postgresql://"):
        mem.scrub()
    return mem, result.receipt, gone


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_planted_copy_fails_the_receipt_and_names_its_place(db: str, embedder: Any, place: str) -> None:
    pg = db.startswith("postgresql://")
    mem, receipt, gone = _forgotten(db, embedder)
    try:
        assert mem.verify_receipt(receipt).verified
        if pg and place in REFUSED_ON_POSTGRES:
            with pytest.raises(Exception, match="foreign key|violates|null value|column"):
                PLACES[place](mem, db, gone, pg)
            assert mem.verify_receipt(receipt).verified
            return
        PLACES[place](mem, db, gone, pg)
        check = mem.verify_receipt(receipt.to_json())
        assert not check.verified and check.failed == [place], check.checks
        detail = next(c.detail for c in check.checks if c.place == place)
        assert detail and SECRET not in detail and SAID not in json.dumps(receipt.to_dict())
    finally:
        mem.close()


@pytest.mark.sqlite_only
@pytest.mark.skipif(not ann_available(), reason="needs the ann extra (hnswlib)")
def test_a_saved_ann_index_holding_a_removed_vector_fails_the_receipt(db: str, embedder: Any) -> None:
    with hippo.open(db, agent_id="alice", embedder=embedder, ann_threshold=5) as mem:
        mem.store_memories([*FILLER, SAID])
        mem.recall_memories("tomatoes")  # builds the ANN index, saved at close
    saved = Path(db + ".hnsw")
    kept = saved.with_name("kept.hnsw")
    shutil.copytree(saved, kept)
    with hippo.open(db, agent_id="alice", embedder=embedder, ann_threshold=5) as mem:
        receipt = mem.forget_memory(SECRET, receipt=True).receipt
        assert receipt.verified and not any(saved.glob("*.bin"))  # the forget shredded the saved files
        shutil.rmtree(saved)
        shutil.copytree(kept, saved)  # and the old index is put back behind hippo's back
        assert mem.verify_receipt(receipt).failed == ["ANN files"]


def test_an_altered_receipt_fails_its_signature_and_another_agents_is_refused(db: str, embedder: Any) -> None:
    mem, receipt, gone = _forgotten(db, embedder)
    try:
        data = receipt.to_dict()
        data["removed"] = []  # hide what was removed
        check = mem.verify_receipt(data)
        assert check.failed == ["signature"]
        with mem.for_agent("bob") as bob, pytest.raises(InvalidInput, match="agent"):
            bob.verify_receipt(receipt)
        with pytest.raises(InvalidInput, match="receipt"):
            mem.verify_receipt('{"agent_id": "alice"}')
        nested: Any = 1
        for _ in range(5_000):
            nested = {"n": nested}
        for field, value in (("counts", nested), ("audit_seq", True), ("removed", [{"id": 1}]), ("issued_at", "soon")):
            with pytest.raises(InvalidInput, match="receipt"):
                mem.verify_receipt({**receipt.to_dict(), field: value})
    finally:
        mem.close()


def test_a_receipt_of_a_trimmed_record_still_verifies_and_an_altered_record_does_not(db: str, embedder: Any,
                                                                                     clock: Any) -> None:
    mem, receipt, gone = _forgotten(db, embedder, clock=clock)
    mem.close()
    clock.advance(days=40)
    with hippo.open(db, agent_id="alice", embedder=embedder, clock=clock) as mem:
        assert mem.trim_audit(older_than_days=30) > 0
        check = mem.verify_receipt(receipt)
        assert check.verified, check.checks
        sql(db, "UPDATE audit_records SET who = 'mallory' WHERE agent_id = 'alice'")
        assert "audit record" in mem.verify_receipt(receipt).failed


def test_on_postgres_a_receipt_waits_for_the_scrub(db: str, embedder: Any) -> None:
    if not db.startswith("postgresql://"):
        pytest.skip("SQLite empties its log by itself: the receipt holds at once")
    with hippo.open(db, agent_id="alice", embedder=embedder) as mem:
        mem.store_memories([*FILLER, SAID])
        receipt = mem.forget_memory(SECRET, receipt=True).receipt
        assert [c.place for c in receipt.checks if not c.ok] == ["dead rows"]
        assert mem.verify_receipt(receipt).failed == ["dead rows"]
        mem.scrub()
        assert mem.verify_receipt(receipt).verified
