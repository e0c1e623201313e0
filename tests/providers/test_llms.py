"""The chat LLM adapters, through the official SDKs, against a real loopback server."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from llm_wire import LLMWireServer, llm_wire_fixture, word_count  # noqa: F401  (the llm_wire fixture)

from hippo.errors import ConfigError, MissingDependency, ProviderError
from hippo.providers.anthropic import JSON_INSTRUCTION, AnthropicLLM
from hippo.providers.base import LLM, Completion, Message
from hippo.providers.fake import FakeLLM
from hippo.providers.openai import OpenAILLM
from hippo.providers.registry import create_llm

CHAT = [Message("user", "Alice moved to Lyon."), Message("assistant", "Noted."), Message("user", "Where is she?")]
SYSTEM = "You extract facts."
# Retry-After of 10 ms, so tests that let the SDK retry stay fast.
FAST_RETRY = {"retry-after-ms": "10"}


def _prompt_words(system: str, messages: list[Message]) -> int:
    return word_count(system) + sum(word_count(m.content) for m in messages)


def _anthropic_key(headers: dict[str, str]) -> str:
    """The key an Anthropic request carried: SDK 2.x sends a bearer token, older ones x-api-key."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def _fail(llm: Any) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        llm.complete(SYSTEM, CHAT)
    return info.value


# -- OpenAI ---------------------------------------------------------------------------


def test_openai_request_and_answer(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("She lives in Lyon.")
    llm = llm_wire.openai_llm("gpt-test")
    result = llm.complete(SYSTEM, CHAT, max_tokens=77)

    assert isinstance(llm, LLM) and llm.model_id == "openai:gpt-test"
    assert result == Completion("She lives in Lyon.", result.usage, "gpt-test")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (_prompt_words(SYSTEM, CHAT), 4)
    sent = llm_wire.last
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-wire"
    assert sent.body["model"] == "gpt-test"
    assert sent.body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Alice moved to Lyon."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Where is she?"},
    ]
    # A loopback server is "OpenAI-compatible": it gets the widely understood max_tokens.
    assert sent.body["max_tokens"] == 77 and "max_completion_tokens" not in sent.body
    assert sent.body["temperature"] == 0.0
    assert "response_format" not in sent.body


def test_openai_json_mode(llm_wire: LLMWireServer) -> None:
    llm_wire.reply('{"facts": []}', '{"facts": []}')
    llm = llm_wire.openai_llm()
    llm.complete("Answer in JSON.", CHAT, json=True)
    assert llm_wire.last.body["response_format"] == {"type": "json_object"}
    assert llm_wire.last.system == "Answer in JSON."  # already says JSON: left alone

    # JSON mode is refused when no message mentions JSON, so the adapter adds a line.
    llm.complete(SYSTEM, CHAT, json=True)
    assert llm_wire.last.system.startswith(SYSTEM) and "JSON" in llm_wire.last.system


def test_openai_no_system_message_and_no_temperature(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("ok")
    llm_wire.openai_llm(temperature=None).complete("", [Message("user", "hi")])
    assert llm_wire.last.body["messages"] == [{"role": "user", "content": "hi"}]
    assert "temperature" not in llm_wire.last.body


def test_openai_own_api_gets_max_completion_tokens() -> None:
    # No network: the SDK call is replaced, only the parameters are inspected.
    llm = OpenAILLM("gpt-5-mini", base_url="https://api.openai.com/v1", api_key="sk-test")
    sent: dict[str, Any] = {}

    def create(**params: Any) -> Any:
        sent.update(params)
        message = SimpleNamespace(content="ok", refusal=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=None, model="gpt-5-mini")

    llm.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    assert llm.complete("", [Message("user", "hi")], max_tokens=9).text == "ok"
    assert sent["max_completion_tokens"] == 9 and "max_tokens" not in sent


@pytest.mark.parametrize(
    ("status", "retryable"),
    [(500, True), (503, True), (429, True), (408, True), (401, False), (400, False), (404, False)],
)
def test_openai_http_errors(llm_wire: LLMWireServer, status: int, retryable: bool) -> None:
    llm_wire.reply(("status", status, f"server says {status}"))
    error = _fail(llm_wire.openai_llm())
    assert error.retryable is retryable
    assert f"HTTP {status}" in str(error) and f"server says {status}" in str(error)
    assert len(llm_wire.requests) == 1  # max_retries=0: the SDK did not retry


def test_openai_dropped_connection_and_timeout_are_retryable(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("drop", ("slow", 2.0, "too late"))
    assert _fail(llm_wire.openai_llm()).retryable
    error = _fail(llm_wire.openai_llm(timeout=0.3))
    assert error.retryable and "timed out" in str(error)


def test_openai_malformed_answers(llm_wire: LLMWireServer) -> None:
    envelope = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}
    null_content = {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "length"}
    llm_wire.reply(
        ("raw", 200, {**envelope, "choices": []}),
        ("raw", 200, {**envelope, "choices": [null_content]}),
        ("raw", 200, b"<html>gateway</html>"),
    )
    llm = llm_wire.openai_llm()
    assert "no choices" in str(_fail(llm))
    null = str(_fail(llm))
    assert "no content" in null and "length" in null
    assert "invalid JSON" in str(_fail(llm))


def test_openai_sdk_retries_consume_replies(llm_wire: LLMWireServer) -> None:
    llm_wire.reply(("status", 500, "blip", FAST_RETRY), "recovered")
    assert llm_wire.openai_llm(max_retries=1).complete(SYSTEM, CHAT).text == "recovered"
    assert len(llm_wire.requests) == 2


def test_openai_keys_and_base_url_from_environment(llm_wire: LLMWireServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_wire.openai_base_url)
    llm_wire.reply("a", "b")
    llm = OpenAILLM("llama3", max_retries=0)
    llm.complete(SYSTEM, CHAT)
    # Ollama, vLLM and friends ignore the key; a placeholder keeps the SDK content.
    assert llm_wire.last.headers["authorization"] == "Bearer hippo-no-key"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    OpenAILLM("llama3", max_retries=0).complete(SYSTEM, CHAT)
    assert llm_wire.last.headers["authorization"] == "Bearer sk-from-env"


def test_openai_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAILLM("gpt-4o-mini")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        create_llm("openai:gpt-4o-mini")
    with pytest.raises(ConfigError, match="model"):
        OpenAILLM(None, api_key="sk-test")


def test_openai_from_registry(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("hello")
    llm = create_llm("openai:gpt-4o-mini", base_url=llm_wire.openai_base_url, api_key="k", max_retries=0)
    assert isinstance(llm, OpenAILLM) and llm.model_id == "openai:gpt-4o-mini"
    assert llm.complete(SYSTEM, CHAT).text == "hello"
    assert llm_wire.last.body["model"] == "gpt-4o-mini"


# -- Anthropic --------------------------------------------------------------------------


def test_anthropic_request_and_answer(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("She lives in Lyon.")
    llm = llm_wire.anthropic_llm("claude-test")
    result = llm.complete(SYSTEM, CHAT, max_tokens=55)

    assert isinstance(llm, LLM) and llm.model_id == "anthropic:claude-test"
    assert result.text == "She lives in Lyon." and result.model == "claude-test"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (_prompt_words(SYSTEM, CHAT), 4)
    sent = llm_wire.last
    assert sent.path == "/v1/messages"
    assert _anthropic_key(sent.headers) == "sk-ant-wire"
    assert "anthropic-version" in sent.headers
    assert sent.body["model"] == "claude-test" and sent.body["max_tokens"] == 55
    assert sent.body["system"] == SYSTEM
    assert sent.body["messages"] == [
        {"role": "user", "content": "Alice moved to Lyon."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Where is she?"},
    ]
    # Newer Claude models reject temperature, so none is sent unless asked for.
    assert "temperature" not in sent.body


def test_anthropic_json_asks_in_system_prompt_without_prefill(llm_wire: LLMWireServer) -> None:
    llm_wire.reply('{"facts": []}', "ok")
    llm = llm_wire.anthropic_llm(temperature=0.0)
    assert llm.complete(SYSTEM, CHAT, json=True).text == '{"facts": []}'
    sent = llm_wire.last
    assert sent.body["system"] == f"{SYSTEM}\n\n{JSON_INSTRUCTION}"
    assert sent.body["messages"][-1]["role"] == "user"  # no assistant prefill
    assert "response_format" not in sent.body
    assert sent.body["temperature"] == 0.0

    llm.complete("", [Message("user", "hi")])
    assert "system" not in llm_wire.last.body


def test_anthropic_joins_text_blocks(llm_wire: LLMWireServer) -> None:
    body = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "text", "text": '{"a": '},
            {"type": "tool_use", "id": "t1", "name": "noop", "input": {}},
            {"type": "text", "text": "1}"},
        ],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    empty = {**body, "content": [], "stop_reason": "max_tokens"}
    llm_wire.reply(("raw", 200, body), ("raw", 200, empty), ("raw", 200, b"not json"))
    llm = llm_wire.anthropic_llm()
    result = llm.complete(SYSTEM, CHAT)
    assert result.text == '{"a": 1}' and (result.usage.input_tokens, result.usage.output_tokens) == (3, 2)
    assert "max_tokens" in str(_fail(llm))
    assert "invalid JSON" in str(_fail(llm))


@pytest.mark.parametrize(
    ("status", "retryable"), [(500, True), (529, True), (429, True), (401, False), (400, False), (404, False)]
)
def test_anthropic_http_errors(llm_wire: LLMWireServer, status: int, retryable: bool) -> None:
    llm_wire.reply(("status", status, f"server says {status}"))
    error = _fail(llm_wire.anthropic_llm())
    assert error.retryable is retryable
    assert f"HTTP {status}" in str(error) and f"server says {status}" in str(error)
    assert len(llm_wire.requests) == 1


def test_anthropic_dropped_connection_and_timeout_are_retryable(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("drop", ("slow", 2.0, "too late"))
    assert _fail(llm_wire.anthropic_llm()).retryable
    error = _fail(llm_wire.anthropic_llm(timeout=0.3))
    assert error.retryable and "timed out" in str(error)


def test_anthropic_sdk_retries_consume_replies(llm_wire: LLMWireServer) -> None:
    llm_wire.reply(("status", 529, "overloaded", FAST_RETRY), "recovered")
    assert llm_wire.anthropic_llm(max_retries=1).complete(SYSTEM, CHAT).text == "recovered"
    assert len(llm_wire.requests) == 2


def test_anthropic_keys_and_base_url_from_environment(
    llm_wire: LLMWireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_wire.anthropic_base_url)
    llm_wire.reply("a", "b")
    AnthropicLLM("claude-test", max_retries=0).complete(SYSTEM, CHAT)
    assert _anthropic_key(llm_wire.last.headers) == "hippo-no-key"

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    AnthropicLLM("claude-test", max_retries=0).complete(SYSTEM, CHAT)
    assert _anthropic_key(llm_wire.last.headers) == "sk-ant-env"


def test_anthropic_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicLLM("claude-haiku-4-5")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        create_llm("anthropic:claude-haiku-4-5")
    with pytest.raises(ConfigError, match="model"):
        create_llm("anthropic", api_key="k")


def test_anthropic_from_registry(llm_wire: LLMWireServer) -> None:
    llm_wire.reply("hello")
    llm = create_llm("anthropic:claude-haiku-4-5", base_url=llm_wire.anthropic_base_url, api_key="k", max_retries=0)
    assert isinstance(llm, AnthropicLLM) and llm.model_id == "anthropic:claude-haiku-4-5"
    assert llm.complete(SYSTEM, CHAT).text == "hello"
    assert llm_wire.last.body["model"] == "claude-haiku-4-5"


# -- shared -------------------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "package"), [(OpenAILLM, "openai"), (AnthropicLLM, "anthropic")])
def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch, cls: type, package: str) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # makes `import <package>` fail
    with pytest.raises(MissingDependency) as info:
        cls("some-model", api_key="k", base_url="http://127.0.0.1:9")
    assert info.value.package == package and info.value.extra == package


def test_importing_hippo_does_not_import_the_sdks() -> None:
    code = (
        "import sys, hippo, hippo.providers.openai, hippo.providers.anthropic, hippo.providers.registry;"
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_wire_server_without_a_queued_reply_fails_loudly(llm_wire: LLMWireServer) -> None:
    error = _fail(llm_wire.openai_llm(max_retries=2))
    assert "no reply queued" in str(error) and len(llm_wire.requests) == 1  # not retried
    llm_wire.default = lambda request: f"echo {request.messages[-1]['content']}"
    assert llm_wire.anthropic_llm().complete(SYSTEM, CHAT).text == "echo Where is she?"


# -- FakeLLM ------------------------------------------------------------------------------


def test_fake_llm_follows_its_script_and_records_calls() -> None:
    seen: list[tuple[str, list[Message]]] = []

    def echo(system: str, messages: Any) -> str:
        seen.append((system, list(messages)))
        return f"you said {messages[-1].content}"

    llm = FakeLLM(script=["first answer", ProviderError("down", retryable=True), echo])
    assert isinstance(llm, LLM) and llm.model_id == "fake:scripted"

    first = llm.complete(SYSTEM, CHAT, max_tokens=10)
    assert first.text == "first answer" and first.model == "scripted"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (_prompt_words(SYSTEM, CHAT), 2)
    with pytest.raises(ProviderError, match="down") as info:
        llm.complete("s", [Message("user", "x")], json=True)
    assert info.value.retryable
    assert llm.complete("s2", [Message("user", "ping")]).text == "you said ping"
    assert seen == [("s2", [Message("user", "ping")])]

    assert [c["system"] for c in llm.calls] == [SYSTEM, "s", "s2"]
    assert llm.calls[0] == {"system": SYSTEM, "messages": CHAT, "json": False, "max_tokens": 10}
    assert llm.calls[1]["json"] is True and llm.calls[1]["max_tokens"] == 1024

    with pytest.raises(ProviderError, match="fake LLM script exhausted"):
        llm.complete("s", [])
    assert len(llm.calls) == 4  # the failed call is recorded too
    llm.push("again", "and again")
    assert [llm.complete("s", []).text for _ in range(2)] == ["again", "and again"]


def test_fake_llm_from_registry() -> None:
    llm = create_llm("fake", script=["hi"])
    assert isinstance(llm, FakeLLM) and llm.model_id == "fake:scripted"
    assert llm.complete("", [Message("user", "x")]).text == "hi"
    named = create_llm("fake:extractor")
    assert named.model_id == "fake:extractor"
    with pytest.raises(ProviderError, match="exhausted"):
        named.complete("", [])
