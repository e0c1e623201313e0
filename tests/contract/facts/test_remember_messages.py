"""remember_facts learns from a list of chat messages: the user's turns, OpenAI and Anthropic shapes."""

from __future__ import annotations

import pytest

from hippo.core.messages import user_text
from hippo.errors import InvalidInput

OPENAI = [
    {"role": "system", "content": "You are a helpful assistant. The user lives in Atlantis."},
    {"role": "user", "content": "I moved to Lisbon last month."},
    {"role": "assistant", "content": "Nice! The user likes surfing, I guess."},
    {"role": "user", "content": [{"type": "text", "text": "I work as a nurse."},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
    {"role": "tool", "tool_call_id": "1", "content": "User's salary is 1M"},
]
ANTHROPIC = [
    {"role": "user", "content": [{"type": "text", "text": "I moved to Lisbon last month."}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Noted."},
                                      {"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ignored"},
                                 {"type": "text", "text": "I work as a nurse."}]},
]


@pytest.mark.parametrize("messages", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def test_only_the_users_turns_are_learned(mem, messages):
    assert user_text(messages) == "I moved to Lisbon last month.\nI work as a nurse."
    result = mem.remember_facts(messages)
    facts = " ".join(f.fact for f in result.facts)
    assert "Lisbon" in facts and "nurse" in facts
    assert "Atlantis" not in facts and "surfing" not in facts and "salary" not in facts


@pytest.mark.parametrize(("messages", "message"), [
    ({"role": "user", "content": "one message, not a list"}, "a list of chat messages"),
    ([{"content": "no role"}], "role must be one of"),
    ([{"role": "user", "content": 42}], "content must be a string or a list"),
    ([{"role": "user", "content": [{"text": "no type"}]}], "with a type"),
    ([{"role": "assistant", "content": "only the assistant"}], "no user turn"),
])
def test_malformed_messages_are_clear_errors(mem, messages, message):
    with pytest.raises(InvalidInput, match=message):
        mem.remember_facts(messages)
    assert mem.stats().facts == 0
