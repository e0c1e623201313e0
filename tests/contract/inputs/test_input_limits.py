"""Inputs at and past the bounds of hippo.limits: deep nesting, huge numbers, trailing newlines,
impossible settings. Each gets a typed error and writes nothing."""

from __future__ import annotations

import json

import pytest
from rejection import assert_rejected
from support import untouched

import hippo
from hippo import limits
from hippo.providers.fake import FakeEmbedder


@pytest.fixture
def seeded(mem):
    mem.store_memory("A memory that is already there about gardening")
    mem.set_memory_block("persona", "Existing persona")
    return mem


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"k": value}
    return value


def nested_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


HUGE = 10**400


@pytest.mark.parametrize("depth", [limits.NESTING + 1, 5_000])
def test_deeply_nested_metadata_is_invalid_input(seeded, db, depth):
    assert_rejected(db, lambda: seeded.store_memory("A fine text", nested(depth)))
    assert_rejected(db, lambda: seeded.remember_facts("I like tea.", metadata=nested(depth)))
    first = seeded.list_memories().items[0].id
    assert_rejected(db, lambda: seeded.update_metadata(first, nested(depth)))


def test_metadata_at_the_nesting_limit_is_kept(seeded):
    assert seeded.store_memory("Nested just enough", nested(limits.NESTING - 1)).action == "inserted"


@pytest.mark.parametrize("call", [
    lambda m: m.store_memory("A fine text", None, HUGE),
    lambda m: m.store_memory("A fine text", {"n": HUGE}),
    lambda m: m.set_memory_block("human", "x", char_limit=HUGE),
    lambda m: m.recall_memories("gardening", metadata={"n": HUGE}),
    lambda m: m.recall_memories("gardening", limit=HUGE),
    lambda m: m.forget_memory("gardening", min_similarity=HUGE),
    lambda m: m.forget_memory("gardening", limit=-HUGE),
], ids=["intensity", "metadata", "char-limit", "metadata-filter", "limit", "min-similarity", "forget-limit"])
def test_numbers_beyond_any_float_are_invalid_input(seeded, db, call):
    error = assert_rejected(db, lambda: call(seeded))
    assert len(error.message) < 300  # the number is not echoed back digit by digit


@pytest.mark.parametrize("records", [None, 5, "header", {"type": "header"}, b"bytes"],
                         ids=["none", "int", "str", "dict", "bytes"])
def test_import_records_needs_an_iterable_of_records(seeded, db, records):
    assert_rejected(db, lambda: seeded.import_records(records))


def test_an_imported_record_nested_too_deep_is_invalid_input(seeded, db):
    header = next(seeded.export_records())
    record = {"type": "chunk", "id": "01J00000000000000000000000", "content": "x", "metadata": nested(5_000)}
    assert_rejected(db, lambda: seeded.import_records([header, record]))


@pytest.mark.parametrize("make", [pytest.param(lambda m: m.for_agent("alice\n"), marks=pytest.mark.embedded_only(
                                      "hippo.connect leaves the agent id to the server, which refuses it at the first "
                                      "call (tests/client)")),
                                  lambda m: m.set_memory_block("human\n", "x"),
                                  lambda m: m.recall_memory_block("human\n"),
                                  lambda m: m.store_memory("A fine text", {"key\n": 1}),
                                  lambda m: m.get_memory("01J00000000000000000000000\n")],
                         ids=["agent", "block-key", "block-read", "metadata-key", "chunk-id"])
def test_a_trailing_newline_is_not_part_of_a_valid_id(seeded, db, make):
    assert_rejected(db, lambda: make(seeded))


def test_open_refuses_an_agent_id_with_a_trailing_newline(db):
    with pytest.raises(hippo.InvalidInput):
        hippo.open(db, agent_id="alice\n", embedder=FakeEmbedder())
    assert untouched(db)


@pytest.mark.parametrize("options", [{"ann_threshold": -1}, {"ann_threshold": HUGE}, {"block_char_limit": 0},
                                     {"max_content_chars": 0}, {"ann_threshold": "many"}],
                         ids=["negative-ann", "huge-ann", "zero-block-limit", "zero-content", "text"])
def test_settings_that_cannot_work_are_config_errors(db, options):
    with pytest.raises(hippo.ConfigError):
        hippo.open(db, embedder=FakeEmbedder(), **options)
    assert untouched(db)


@pytest.mark.parametrize("spec", ["fake:0", "fake:99999999", "fake:abc"])
def test_a_fake_embedder_needs_a_sensible_dimension(db, spec):
    with pytest.raises(hippo.ConfigError):
        hippo.open(db, embedder=spec).store_memory("x")


# -- the tools: the same bounds on arguments given as JSON text ------------------------------------

THE_TOOLS = "calls the agent tools: the server runs them on its tools route, hippo.connect does not offer them"


@pytest.mark.parametrize("arguments", [
    '{"query": "x", "limit": ' + "9" * 5_000 + "}",
    '{"content": "x", "intensity": ' + nested_text(3_000) + "}",
    '{"query": "x", "limit": NaN}',
    json.dumps({"query": "x", "extra": nested(limits.NESTING + 2)}),
], ids=["4300-digit-int", "deep-json", "nan", "deep-object"])
@pytest.mark.embedded_only(THE_TOOLS)
def test_tool_arguments_past_the_limits_are_ok_false(seeded, db, arguments):
    tools = seeded.tools()
    for name in ("recall_memories", "store_memory"):
        result = tools.call(name, arguments)
        assert result["ok"] is False and result["error"]["code"] == "invalid_input", result


@pytest.mark.embedded_only(THE_TOOLS)
def test_results_for_a_message_with_malformed_tool_calls_is_invalid_input(seeded, db):
    tools = seeded.tools()
    for message in ({"tool_calls": 5}, {"tool_calls": "store"}, {"tool_calls": {"id": "x"}}):
        assert_rejected(db, lambda: tools.results_for(message))
