"""Every argument of every operation is checked before anything is done (issue 46, items 3 and 4):
a value of the wrong type, or out of its range, raises InvalidInput (HTTP 400 through
``hippo.connect``), never a builtin error or a StorageError, and writes nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from support import sql

import hippo
from hippo.errors import InvalidInput
from hippo.providers.fake import FakeEmbedder


def snapshot(db):
    return (sql(db, "SELECT * FROM chunks ORDER BY id"), sql(db, "SELECT * FROM memory_blocks ORDER BY key"),
            sql(db, "SELECT * FROM embedding_model"))


def refused(db, call, *words: str) -> str:
    """``call()`` raises InvalidInput (naming ``words``) and the database is as it was."""
    before = snapshot(db)
    with pytest.raises(InvalidInput) as info:
        call()
    assert snapshot(db) == before
    assert all(word in info.value.message for word in words), info.value.message
    return info.value.message


@pytest.mark.parametrize("metadata", ["x", [1], [["k", "v"]], 5, True], ids=repr)
def test_put_item_with_metadata_that_is_not_an_object_is_refused(mem, db, metadata):
    mem.put_item("k", "the key's first text", {"v": 1})
    message = refused(db, lambda: mem.put_item("k", "c", metadata=metadata), "metadata", "object")
    assert type(metadata).__name__ in message
    refused(db, lambda: mem.put_item("new key", "c", metadata))
    assert mem.get_item("k").metadata == {"v": 1, "_item_key": "k"} and mem.get_item("new key") is None


@pytest.mark.parametrize("batch_size", ["abc", 1.5, 0, -1, 10**30, True, None, "64"], ids=repr)
def test_reembed_with_a_batch_size_that_is_no_count_of_chunks_is_refused(make_mem, db, batch_size):
    down = make_mem("alice", embedder=FakeEmbedder(fail=True))
    down.store_memories(["Pending memory about the espresso machine", "Another pending one"])
    mem = make_mem("alice", embedder=FakeEmbedder())
    refused(db, lambda: mem.reembed(batch_size=batch_size), "batch_size", "1 to 10000")
    assert mem.stats().pending_vectors == 2
    result = mem.reembed(batch_size=1)
    assert (result.embedded, result.pending) == (2, 0)


@pytest.mark.parametrize("call", [
    lambda mem: mem.reembed(progress="x"),
    lambda mem: mem.import_records([], progress=5),
], ids=["reembed", "import_records"])
def test_a_progress_that_is_no_function_is_refused(mem, db, call):
    mem.store_memory("Something to keep")
    refused(db, lambda: call(mem), "progress")


@pytest.mark.embedded_only("maintain is database-wide: hippo.connect does not offer it")
def test_maintain_with_a_progress_that_is_no_function_is_refused(mem, db):
    mem.store_memory("Something to keep")
    refused(db, lambda: mem.maintain(progress="x"), "progress")


# A flag that is not True or False: the text "false" is truthy, and was read as True.
FLAGS = {
    "forget preview": lambda mem: mem.forget_memory("espresso", preview="false"),
    "recall touch": lambda mem: mem.recall_memories("espresso", touch="false"),
    "recall expand": lambda mem: mem.recall_memories("espresso", expand=1),
    "recall include_archived": lambda mem: mem.recall_memories("espresso", include_archived="no"),
    "experience recall touch": lambda mem: mem.recall(query="espresso", touch=None),
    "browse superseded": lambda mem: mem.browse_memories(superseded=0),
    "browse archived": lambda mem: mem.browse_memories(archived="yes"),
    "export vectors": lambda mem: list(mem.export_records(vectors="yes")),
}


@pytest.mark.parametrize("call", list(FLAGS.values()), ids=list(FLAGS))
def test_a_flag_that_is_not_true_or_false_is_refused(mem, db, call):
    stored = mem.store_memory("The espresso machine needs descaling")
    refused(db, lambda: call(mem), "must be true or false")
    assert mem.get_memory(stored.id).access_count == 0


def test_a_recall_refused_for_filters_the_archive_cannot_apply_touches_nothing(mem, db):
    stored = mem.store_memory("The espresso machine needs descaling", {"room": "kitchen"})
    refused(db, lambda: mem.recall_memories("espresso", metadata={"room": "kitchen"}, include_archived=True),
            "metadata filters")
    assert mem.get_memory(stored.id).access_count == 0  # no retrieval was queued before the refusal


EDGE_OF_TIME = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00",
                datetime.min.replace(tzinfo=timezone(timedelta(hours=14)))]


@pytest.mark.parametrize("when", EDGE_OF_TIME, ids=["first-day-east", "last-day-west", "datetime.min-east"])
def test_a_time_outside_what_utc_can_hold_is_refused(mem, db, when):
    mem.store_memory("Something to keep")
    refused(db, lambda: mem.store_memory("New", observed_at=when), "observed_at", "years 1 to 9999")
    refused(db, lambda: mem.recall_memories("something", until=when), "until")
    message = {"role": "user", "content": "hi", "timestamp": when}
    refused(db, lambda: mem.observe([message], session_id="s1"), "timestamp")
    if isinstance(when, str):  # a session's history holds JSON, and skips the item it cannot keep
        added = mem.add_session_items("s1", [message])
        assert (added.accepted, added.skipped) == (0, 1)


@pytest.mark.parametrize("arguments", [{"sort": {"newest": 1}}, {"sort": ["newest"]}, {"archived_matching": 5},
                                       {"archived_matching": "bad \ud800 text"}], ids=repr)
def test_browse_with_a_sort_or_archive_search_of_the_wrong_type_is_refused(mem, db, arguments):
    mem.store_memory("Something to keep")
    refused(db, lambda: mem.browse_memories(**arguments), next(iter(arguments)))


def test_a_previous_summary_that_is_not_text_is_refused(mem, db):
    messages = [{"role": "user", "content": "We decided to ship the billing fix on Friday"}]
    refused(db, lambda: mem.compact(messages, session_id="s1", previous_summary="bad \udfff text"),
            "previous_summary", "UTF-8")
    refused(db, lambda: mem.compact(messages, session_id="s1", previous_summary=["a list"]), "previous_summary")
    assert "Prior Context" in mem.compact(messages, session_id="s1", previous_summary="Earlier: planning").summary


@pytest.mark.embedded_only("agent_ids is database-wide: hippo.connect does not offer it")
def test_agent_ids_with_a_prefix_that_is_not_text_is_refused(mem, db):
    mem.store_memory("Something to keep")
    refused(db, lambda: mem.agent_ids("bad \udfff"), "prefix", "UTF-8")
    refused(db, lambda: mem.agent_ids(5), "prefix", "string")
    assert mem.agent_ids("al") == ["alice"]


@pytest.mark.embedded_only("hippo.reembed is a function of the database's path")
def test_reembed_through_the_module_function_checks_its_arguments_before_it_drops_a_vector(make_mem, db):
    make_mem("alice", embedder=FakeEmbedder()).store_memory("The staging cluster runs on three small nodes")
    before = snapshot(db)
    with pytest.raises(InvalidInput, match="batch_size"):
        hippo.reembed(db, embedder=FakeEmbedder(dimension=32), batch_size=0)
    assert snapshot(db) == before  # the old model's vectors are all still there
