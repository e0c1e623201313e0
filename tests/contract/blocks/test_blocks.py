"""Memory blocks: seed 000's edge cases and the per-block character limit."""

from __future__ import annotations

import pytest
from support import sql

import hippo


def block_rows(db):
    return sql(db, "SELECT agent_id, key, value, char_limit FROM memory_blocks ORDER BY agent_id, key")


def refused(call, code):
    """A block write the agent can act on is refused with its own error class and code, writing nothing."""
    with pytest.raises(hippo.HippoError) as info:
        call()
    assert info.value.code == code
    return info.value


def test_recall_missing_block_is_none(mem):
    assert mem.recall_memory_block("persona") is None
    assert mem.memory_block("persona") is None
    assert mem.memory_blocks() == []


def test_set_and_recall(mem, clock):
    result = mem.set_memory_block("persona", "A terse assistant")
    assert (result.created, result.value) == (True, "A terse assistant")
    assert mem.recall_memory_block("persona") == "A terse assistant"
    block = mem.memory_block("persona")
    assert block.updated_at == clock()
    clock.advance(minutes=5)
    again = mem.set_memory_block("persona", "A chatty assistant")
    assert again.created is False
    assert mem.memory_block("persona").updated_at == clock()
    assert [b.key for b in mem.memory_blocks()] == ["persona"]
    # An empty value is allowed for a whole-block write.
    assert mem.set_memory_block("persona", "").value is not None
    assert mem.recall_memory_block("persona") == ""


def test_replace_on_missing_block(mem, db):
    error = refused(lambda: mem.replace_memory_block("human", "Berlin", "Munich"), "block_not_found")
    assert isinstance(error, hippo.NotFound) and "human" in error.message
    assert mem.recall_memory_block("human") is None
    assert block_rows(db) == []


def test_replace_text_not_found(mem, clock):
    mem.set_memory_block("human", "Lives in Berlin")
    updated = mem.memory_block("human").updated_at
    clock.advance(minutes=1)
    refused(lambda: mem.replace_memory_block("human", "Paris", "Munich"), "text_not_found")
    assert mem.recall_memory_block("human") == "Lives in Berlin"
    assert mem.memory_block("human").updated_at == updated
    # Matching is case-sensitive.
    refused(lambda: mem.replace_memory_block("human", "berlin", "Munich"), "text_not_found")


def test_replace_all_matches(mem):
    mem.set_memory_block("human", "Likes tea. Drinks tea daily. tea!")
    result = mem.replace_memory_block("human", "tea", "coffee")
    assert result.replaced == 3
    assert result.value == "Likes coffee. Drinks coffee daily. coffee!"
    assert mem.recall_memory_block("human") == "Likes coffee. Drinks coffee daily. coffee!"


def test_replace_with_empty_text_deletes(mem):
    mem.set_memory_block("human", "Lives in Berlin (temporarily)")
    result = mem.replace_memory_block("human", " (temporarily)", "")
    assert result.replaced == 1
    assert mem.recall_memory_block("human") == "Lives in Berlin"


def test_append_creates_then_appends_with_newline(mem):
    first = mem.append_memory_block("objectives", "Ship v1")
    assert (first.created, first.value) == (True, "Ship v1")
    second = mem.append_memory_block("objectives", "Write docs")
    assert second.created is False
    assert mem.recall_memory_block("objectives") == "Ship v1\nWrite docs"
    # No doubled newline when the block already ends with one.
    mem.set_memory_block("notes", "line one\n")
    mem.append_memory_block("notes", "line two")
    assert mem.recall_memory_block("notes") == "line one\nline two"
    # Appending to an empty block adds no leading newline.
    mem.set_memory_block("empty", "")
    mem.append_memory_block("empty", "first")
    assert mem.recall_memory_block("empty") == "first"


def test_per_block_char_limit(mem, db):
    refused(lambda: mem.set_memory_block("persona", "x" * 11, char_limit=10), "limit_exceeded")
    assert mem.recall_memory_block("persona") is None  # nothing created

    assert mem.set_memory_block("persona", "abcde", char_limit=10).value is not None
    assert mem.memory_block("persona").char_limit == 10
    assert block_rows(db) == [("alice", "persona", "abcde", 10)]

    # set without char_limit keeps the limit.
    refused(lambda: mem.set_memory_block("persona", "x" * 11), "limit_exceeded")
    assert mem.recall_memory_block("persona") == "abcde"
    assert mem.set_memory_block("persona", "x" * 10).value is not None  # exactly at the limit
    mem.set_memory_block("persona", "abcde")

    refused(lambda: mem.replace_memory_block("persona", "c", "ccccccc"), "limit_exceeded")  # 11 characters
    assert mem.recall_memory_block("persona") == "abcde"

    refused(lambda: mem.append_memory_block("persona", "fghij"), "limit_exceeded")  # "abcde\nfghij" is 11
    assert mem.recall_memory_block("persona") == "abcde"
    assert mem.append_memory_block("persona", "fghi").value is not None  # exactly 10
    assert mem.recall_memory_block("persona") == "abcde\nfghi"

    # Raising the limit allows more; other blocks have no limit.
    assert mem.set_memory_block("persona", "y" * 50, char_limit=100).value is not None
    assert mem.set_memory_block("other", "z" * 5000).value is not None


def test_default_char_limit_from_open(make_mem):
    mem = make_mem("alice", block_char_limit=20)
    assert mem.set_memory_block("persona", "a" * 20).value is not None
    refused(lambda: mem.set_memory_block("persona", "a" * 21), "limit_exceeded")

    refused(lambda: mem.append_memory_block("fresh", "b" * 21), "limit_exceeded")
    assert mem.recall_memory_block("fresh") is None

    mem.append_memory_block("fresh", "b" * 10)
    refused(lambda: mem.append_memory_block("fresh", "c" * 10), "limit_exceeded")  # 10 + newline + 10
    assert mem.recall_memory_block("fresh") == "b" * 10

    refused(lambda: mem.replace_memory_block("fresh", "b", "bbb"), "limit_exceeded")  # 30 characters
    assert mem.recall_memory_block("fresh") == "b" * 10

    # A per-block limit overrides the default.
    assert mem.set_memory_block("big", "d" * 50, char_limit=100).value is not None
    assert mem.append_memory_block("big", "e" * 30).value is not None


def test_limit_message_is_actionable(mem):
    mem.set_memory_block("persona", "abc", char_limit=5)
    error = refused(lambda: mem.append_memory_block("persona", "defgh"), "limit_exceeded")
    assert "5" in error.message and "persona" in error.message


@pytest.mark.parametrize("key", ["", " ", "a b", "../x", "x/y", "k" * 65, "-lead", 5, None, b"persona", "per\x00sona"])
def test_invalid_keys_raise(mem, db, key):
    for call in (
        lambda: mem.recall_memory_block(key),
        lambda: mem.memory_block(key),
        lambda: mem.set_memory_block(key, "value"),
        lambda: mem.append_memory_block(key, "value"),
        lambda: mem.replace_memory_block(key, "a", "b"),
    ):
        with pytest.raises(hippo.InvalidInput):
            call()
    assert block_rows(db) == []


@pytest.mark.parametrize("key", ["persona", "human", "objectives", "k" * 64, "a.b-c_d", "_private", "0"])
def test_valid_keys(mem, key):
    assert mem.append_memory_block(key, "ok").value is not None
    assert mem.recall_memory_block(key) == "ok"


def test_block_result_and_errors_to_dict(mem):
    assert mem.append_memory_block("notes", "a").to_dict() == {"key": "notes", "value": "a", "replaced": 0,
                                                                "created": True}
    error = refused(lambda: mem.replace_memory_block("nope", "a", "b"), "block_not_found")
    assert error.to_dict() == {"code": "block_not_found", "message": "there is no memory block 'nope'"}
