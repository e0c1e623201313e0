"""The capture and compaction routes at their edges, against a real server on loopback: a request
never chooses a file on the server, and malformed messages or settings are 4xx, never a 500, with
nothing written."""

from __future__ import annotations

import json
import os

import pytest

BASE = "/v1/agents/alice"
SAID = [{"role": "user", "content": "We decided to ship the billing fix on Friday."}]


def _raw(api, path: str, text: str):
    """A body sent as written: JSON escapes such as a lone surrogate reach the server as they are."""
    return api.post(path, content=text.encode("utf-8"), headers={"content-type": "application/json"})


@pytest.mark.parametrize("key", ["logFile", "log_file", "debug"])
@pytest.mark.parametrize("session", [None, "s1"])
def test_a_request_never_names_a_file_on_the_server(api, tmp_path, monkeypatch, key, session):
    monkeypatch.chdir(tmp_path)  # a relative path would land in the server's working directory
    for target in ("relative.log", str(tmp_path / "absolute.log"), str(tmp_path / "hippo.toml")):
        value = True if key == "debug" else target
        body = {"messages": SAID, "config": {key: value}, "session_id": session}
        response = api.post(f"{BASE}/compact", json=body)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_input"
        assert "operator" in response.json()["error"]["message"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("hippo.db")) == []
    assert api.get(f"{BASE}/memories").json()["items"] == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_by_requests_never_stalls_the_server(api, tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    for _ in range(5):
        assert api.post(f"{BASE}/compact", json={"messages": SAID, "config": {"logFile": str(fifo)}}).status_code == 400
    assert api.get("/healthz", timeout=5).status_code == 200


def test_a_requests_numbers_are_checked(api):
    huge = "1" + "0" * 400
    for config in (f'{{"sparseThreshold": {huge}}}', '{"decayRates": {"decision": -1}}', '{"sparse": 0.2}',
                   '{"compressThreshold": "high"}', '{"maxSparseIndexTokens": 2.5}'):
        response = _raw(api, f"{BASE}/compact", f'{{"messages": [], "config": {config}}}')
        assert response.status_code == 400, (config, response.text)
    said = [{"role": "assistant", "content": "The export took 41 minutes last night."}]  # context, r 0.65
    good = api.post(f"{BASE}/compact", json={"messages": said, "config": {"compressThreshold": 0.99}})
    assert good.status_code == 200 and good.json()["stats"]["kept"] == 0


BAD_MESSAGES = [
    '[{"role": ["user"], "content": "hi"}]',
    '[{"role": {"user": 1}, "content": "hi"}]',
    '[{"role": "user", "content": "hi", "id": "\\ud800"}]',
    '[{"role": "user", "content": "hi", "name": "\\udfff"}]',
    '[{"role": "user", "content": "lone \\ud800 surrogate"}]',
    '[{"role": "user", "content": [{"type": "text", "text": "\\ud800"}]}]',
    '[{"role": "assistant", "content": "x", "tool_calls": [{"id": "c", "function": {"name": "\\ud800"}}]}]',
    '[{"role": "user", "content": "hi", "id": ' + "9" * 400 + "}]",
    '[{"role": "user", "content": "a\\u0000b"}]',
]


@pytest.mark.parametrize("messages", BAD_MESSAGES)
def test_malformed_messages_are_refused_with_nothing_written(api, messages):
    routes = [(f"{BASE}/sessions/s1/messages", "{}"), (f"{BASE}/sessions/s1/surface", "{}"),
              (f"{BASE}/compact", '{"session_id": "s1"}'), (f"{BASE}/compact", "{}")]
    for path, rest in routes:
        body = json.loads(rest)
        text = json.dumps(body)[:-1] + (", " if body else "") + f'"messages": {messages}}}'
        response = _raw(api, path, text)
        assert 400 <= response.status_code < 500, (path, messages, response.status_code, response.text)
        assert set(response.json()) == {"error"}
    assert api.get(f"{BASE}/memories").json()["items"] == []
    assert api.post(f"{BASE}/process").json()["messages"] == 0
