"""Bad input raises the right hippo error, and nothing is written."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from rejection import assert_rejected
from support import untouched

import hippo
from hippo import MemoryInput

NAN = float("nan")
INF = float("inf")


@pytest.fixture
def seeded(mem, db):
    """A memory with one chunk and one block, so 'nothing written' also means 'nothing changed'."""
    mem.store_memory("A memory that is already there about gardening")
    mem.set_memory_block("persona", "Existing persona")
    return mem


BAD_TEXT = {
    "empty": "",
    "blank": "   \n\t ",
    "oversized": "x" * 32_001,
    "int": 5,
    "none": None,
    "bytes": b"some bytes",
    "lone-surrogate": "bad \ud800 text",
    "nul": "bad \x00 text",
    "list": ["a list"],
}


@pytest.mark.parametrize("text", list(BAD_TEXT.values()), ids=list(BAD_TEXT))
def test_store_memory_bad_text(seeded, db, text):
    assert_rejected(db, lambda: seeded.store_memory(text))


def test_content_at_the_limit_is_accepted(seeded):
    assert seeded.store_memory("x" * 32_000).action == "inserted"


BAD_METADATA = {
    "string": "not a dict",
    "list": [("a", 1)],
    "int-key": {1: "a"},
    "quote-key": {'a"b': 1},
    "backslash-key": {"a\\b": 1},
    "empty-key": {"": 1},
    "space-key": {"a b": 1},
    "set-value": {"k": {1, 2}},
    "nan-value": {"k": NAN},
    "inf-value": {"k": INF},
    "bytes-value": {"k": b"x"},
    "object-value": {"k": object()},
    "tags-string": {"tags": "a,b"},
    "tags-ints": {"tags": [1, 2]},
    "tags-blank": {"tags": ["ok", " "]},
    "tags-nested": {"tags": [["a"]]},
    "huge": {"k": "x" * 20_000},
}


@pytest.mark.parametrize("metadata", list(BAD_METADATA.values()), ids=list(BAD_METADATA))
def test_store_memory_bad_metadata(seeded, db, metadata):
    assert_rejected(db, lambda: seeded.store_memory("A fine text", metadata))


BAD_INTENSITY = {"negative": -0.1, "above-one": 1.1, "true": True, "false": False, "nan": NAN, "inf": INF,
                 "string": "0.5", "none": None}


@pytest.mark.parametrize("intensity", list(BAD_INTENSITY.values()), ids=list(BAD_INTENSITY))
def test_store_memory_bad_intensity(seeded, db, intensity):
    assert_rejected(db, lambda: seeded.store_memory("A fine text", None, intensity))


@pytest.mark.parametrize("intensity", [0, 0.0, 1, 1.0, 0.5])
def test_intensity_bounds_accepted(seeded, intensity):
    assert seeded.store_memory(f"Intensity {intensity!r}", intensity=intensity).chunk.running_intensity == intensity


@pytest.mark.parametrize("observed_at", ["yesterday", "2024-13-45", 5, 1.5, ["2024-01-01"]])
def test_store_memory_bad_observed_at(seeded, db, observed_at):
    assert_rejected(db, lambda: seeded.store_memory("A fine text", observed_at=observed_at))


def test_bad_item_in_batch_writes_nothing(seeded, db):
    assert_rejected(db, lambda: seeded.store_memories(["fine one", "fine two", ""]))
    assert_rejected(db, lambda: seeded.store_memories([MemoryInput("fine"), MemoryInput("fine", intensity=2)]))
    assert_rejected(db, lambda: seeded.store_memories(["fine", 5]))
    assert_rejected(db, lambda: seeded.store_memories(["fine", None]))


@pytest.mark.parametrize("items", ["abc", b"bytes", None, 5], ids=["str", "bytes", "none", "int"])
def test_store_memories_needs_a_list(seeded, db, items):
    # A bare string must not be stored one character at a time.
    assert_rejected(db, lambda: seeded.store_memories(items))


# -- recall -------------------------------------------------------------------


@pytest.mark.parametrize("query", list(BAD_TEXT.values()) + ["q" * 4_001], ids=list(BAD_TEXT) + ["long-query"])
def test_recall_bad_query(seeded, db, query):
    assert_rejected(db, lambda: seeded.recall_memories(query))


@pytest.mark.parametrize("limit", [0, -1, 1001, 10**9, "5", True, 2.5, None])
def test_recall_bad_limit(seeded, db, limit):
    assert_rejected(db, lambda: seeded.recall_memories("gardening", limit))


BAD_FILTERS = {
    "unknown-kind": {"kind": "note"},
    "unknown-kind-in-list": {"kind": ["memory", "note"]},
    "kind-int": {"kind": 5},
    "tags-int": {"tags": 5},
    "tags-ints": {"tags": [1]},
    "tags-blank": {"tags": [""]},
    "metadata-list": {"metadata": ["source"]},
    "metadata-nested": {"metadata": {"source": {"a": 1}}},
    "metadata-list-value": {"metadata": {"source": [1]}},
    "metadata-quote-key": {"metadata": {'a"b': 1}},
    "metadata-nan": {"metadata": {"k": NAN}},
    "since-text": {"since": "last week"},
    "until-int": {"until": 5},
}


@pytest.mark.parametrize("filters", list(BAD_FILTERS.values()), ids=list(BAD_FILTERS))
def test_recall_bad_filters(seeded, db, filters):
    assert_rejected(db, lambda: seeded.recall_memories("gardening", **filters))


def test_good_filters_accepted(seeded):
    assert len(seeded.recall_memories("gardening", kind="memory", since=datetime(2000, 1, 1, tzinfo=timezone.utc)))


# -- forget, by id, blocks ------------------------------------------------------


@pytest.mark.parametrize("description", list(BAD_TEXT.values()), ids=list(BAD_TEXT))
def test_forget_bad_description(seeded, db, description):
    assert_rejected(db, lambda: seeded.forget_memory(description))


@pytest.mark.parametrize("kwargs", [{"limit": 0}, {"limit": "3"}, {"min_similarity": 1.5}, {"min_similarity": NAN},
                                    {"min_similarity": True}])
def test_forget_bad_options(seeded, db, kwargs):
    assert_rejected(db, lambda: seeded.forget_memory("gardening", **kwargs))


@pytest.mark.parametrize("chunk_id", ["", "not-a-ulid", "0" * 25, "0" * 27, 5, None, "../../etc/passwd", "'; --"])
def test_bad_chunk_ids(seeded, db, chunk_id):
    assert_rejected(db, lambda: seeded.get_memory(chunk_id))
    assert_rejected(db, lambda: seeded.delete_memory(chunk_id))


def test_unknown_chunk_id_is_not_found(seeded, db):
    assert_rejected(db, lambda: seeded.get_memory("01ARZ3NDEKTSV4RRFFQ69G5FAV"), hippo.NotFound)
    assert_rejected(db, lambda: seeded.delete_memory("01ARZ3NDEKTSV4RRFFQ69G5FAV"), hippo.NotFound)


@pytest.mark.parametrize("text", [t for k, t in BAD_TEXT.items() if k not in ("empty", "blank")],
                         ids=[k for k in BAD_TEXT if k not in ("empty", "blank")])
def test_block_writes_bad_text(seeded, db, text):
    assert_rejected(db, lambda: seeded.set_memory_block("persona", text))
    assert_rejected(db, lambda: seeded.append_memory_block("persona", text))
    assert_rejected(db, lambda: seeded.append_memory_block("newblock", text))
    assert_rejected(db, lambda: seeded.replace_memory_block("persona", "Existing", text))
    assert_rejected(db, lambda: seeded.replace_memory_block("persona", text, "x"))


def test_block_blank_text(seeded, db):
    assert_rejected(db, lambda: seeded.append_memory_block("persona", ""))
    assert_rejected(db, lambda: seeded.append_memory_block("newblock", "  "))
    assert_rejected(db, lambda: seeded.replace_memory_block("persona", "", "x"))


@pytest.mark.parametrize("char_limit", [0, -1, "10", True, 2.5])
def test_block_bad_char_limit(seeded, db, char_limit):
    assert_rejected(db, lambda: seeded.set_memory_block("persona", "v", char_limit=char_limit))
    assert_rejected(db, lambda: seeded.set_memory_block("newblock", "v", char_limit=char_limit))


# -- hippo.open ---------------------------------------------------------------


@pytest.mark.parametrize("agent_id", ["", " ", "a b", "../x", "a/b", "-lead", "a" * 129, "a" * 200, 5, "é", "a\x00"])
def test_open_bad_agent_id(seeded, db, clock, agent_id):
    assert_rejected(db, lambda: hippo.open(db, agent_id=agent_id, embedder="fake", clock=clock))


def test_open_bad_agent_id_creates_nothing(db):
    with pytest.raises(hippo.InvalidInput):
        hippo.open(db, agent_id="../x", embedder="fake")
    assert untouched(db)


@pytest.mark.parametrize("agent_id", ["a", "a" * 128, "marrow-main", "team:bot@v1.2_x"])
def test_open_good_agent_id(db, agent_id):
    with hippo.open(db, agent_id=agent_id, embedder="fake") as mem:
        assert mem.agent_id == agent_id


def test_open_unknown_setting_and_embedder(seeded, db):
    assert_rejected(db, lambda: hippo.open(db, agent_id="alice", embedder="fake", colour="red"),
                    hippo.ConfigError)
    assert_rejected(db, lambda: hippo.open(db, agent_id="alice", embedder="no-such-provider"),
                    hippo.ConfigError)


def test_errors_serialise(seeded):
    with pytest.raises(hippo.InvalidInput) as info:
        seeded.store_memory("")
    assert info.value.to_dict() == {"code": "invalid_input", "message": info.value.message}
    assert isinstance(info.value, ValueError)  # also a plain ValueError for callers that catch that


@pytest.mark.parametrize("text", list(BAD_TEXT.values()), ids=list(BAD_TEXT))
def test_remember_facts_bad_text(seeded, db, text):
    assert_rejected(db, lambda: seeded.remember_facts(text))


@pytest.mark.parametrize("observed_at", ["yesterday", "2026-13-01", 12345, ["2026-01-01"]])
def test_remember_facts_bad_observed_at(seeded, db, observed_at):
    assert_rejected(db, lambda: seeded.remember_facts("I live in Berlin.", observed_at=observed_at))


@pytest.mark.parametrize("metadata", [{"a": object()}, "not a mapping", {1: "int key"}])
def test_remember_facts_bad_metadata(seeded, db, metadata):
    assert_rejected(db, lambda: seeded.remember_facts("I live in Berlin.", metadata=metadata))


def test_fact_history_unknown_or_bad_id(seeded, db):
    assert_rejected(db, lambda: seeded.fact_history("01ARZ3NDEKTSV4RRFFQ69G5FAV"), hippo.NotFound)
    assert_rejected(db, lambda: seeded.fact_history("not an id"))
