"""remember_facts through the real openai and anthropic SDKs, against a loopback server
speaking each wire protocol: answers repaired, retried, and failing loudly."""

from __future__ import annotations

import json

import pytest
from llm_wire import llm_wire_fixture  # noqa: F401  (the llm_wire fixture)
from support import sql

import hippo
from hippo.errors import ProviderError

GOOD = json.dumps({"facts": [{"fact": "User strongly dislikes Redux", "intensity": 0.85},
                             {"fact": "User tried a café on Sukhumvit", "intensity": 0.15}]})
SAID = "I NEVER want to use Redux again, it was a nightmare. Oh and I tried that new café on Sukhumvit."


@pytest.fixture(params=["openai", "anthropic"])
def wire_mem(request, llm_wire, db, local_embedder):
    llm = llm_wire.openai_llm() if request.param == "openai" else llm_wire.anthropic_llm()
    with hippo.open(db, agent_id="alice", embedder=local_embedder, llm=llm) as mem:
        yield mem, llm_wire


def stored(mem) -> list[tuple]:
    return sql(mem.database, "SELECT content, running_intensity FROM chunks ORDER BY running_intensity")


def test_fenced_answer_with_prose_is_repaired(wire_mem):
    mem, wire = wire_mem
    wire.reply(f"Here you go:\n```json\n{GOOD}\n```\nLet me know if you need more!")
    result = mem.remember_facts(SAID)
    assert [c.attempt for c in result.llm_calls] == [1]
    assert stored(mem) == [("User tried a café on Sukhumvit", 0.15), ("User strongly dislikes Redux", 0.85)]
    request = wire.requests[0]
    assert SAID in json.dumps(request.body, ensure_ascii=False)
    assert "intensity" in (request.system or "")


def test_invalid_answer_is_retried_once(wire_mem):
    mem, wire = wire_mem
    wire.reply('{"facts": [{"fact": "User strongly dislikes Redux", "intensity": 0.85}', GOOD)
    result = mem.remember_facts(SAID)
    assert [c.attempt for c in result.llm_calls] == [1, 2]
    assert len(stored(mem)) == 2
    retry = wire.requests[1]
    assert len(retry.messages) == 3  # the question, the bad answer, the correction
    assert "not usable" in json.dumps(retry.messages[-1])


def test_schema_echo_then_garbage_fails_loudly(wire_mem):
    mem, wire = wire_mem
    echo = json.dumps({"type": "object", "properties": {"facts": {"type": "array"}}})
    wire.reply(echo, "no JSON here at all")
    with pytest.raises(ProviderError, match="after a retry"):
        mem.remember_facts(SAID)
    assert stored(mem) == []


def test_classification_goes_over_the_wire_once(wire_mem):
    mem, wire = wire_mem
    wire.reply(json.dumps({"facts": [{"fact": "User lives in Berlin", "intensity": 0.4}]}))
    mem.remember_facts("I live in Berlin.")
    wire.reply(json.dumps({"facts": [{"fact": "User moved to Lisbon", "intensity": 0.5}]}),
               json.dumps({"decisions": [{"pair": 1, "label": "supersedes"}]}))
    result = mem.remember_facts("I moved to Lisbon.")
    assert result.facts[0].action == "supersedes"
    assert [c.purpose for c in result.llm_calls] == ["extract", "classify"]
    assert "User lives in Berlin" in json.dumps(wire.requests[-1].messages)


def test_http_error_is_a_provider_error_and_writes_nothing(wire_mem):
    mem, wire = wire_mem
    wire.reply(("status", 401, "invalid api key"))
    with pytest.raises(ProviderError, match="invalid api key"):
        mem.remember_facts(SAID)
    assert stored(mem) == []
