"""The access log and request ids on a real loopback server: with ``log_format = "json"`` one JSON
line per request with its fields, and no memory text, query, block value, fact or key anywhere in
what the whole run logged (canary texts); ``X-Request-ID`` taken when it is safe, made when it is
not, and returned on every answer, errors included; ``hippo serve --log-format json`` writes only
JSON lines on stderr."""

from __future__ import annotations

import json
import logging
import re
import sys
import uuid
from typing import Iterator

import httpx
import pytest
from test_http_experiences import serve, stopped

pytest.importorskip("fastapi")
import hippo  # noqa: E402
from hippo.interfaces.http.access import JsonFormatter  # noqa: E402
from hippo.interfaces.http.server import BackgroundServer  # noqa: E402
from hippo.providers.fake import FakeEmbedder  # noqa: E402

A = "/v1/agents/alice"
FIELDS = {"time", "request_id", "method", "route", "agent", "status", "duration_ms", "error"}


class Captured(logging.Handler):
    """Every record of every logger of the server's side, from DEBUG up, as the root logger gets it
    (the test's own HTTP client, httpx, logs the URLs it calls: not the server's log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith(("httpx", "httpcore")):
            self.records.append(record)

    def text(self) -> str:
        """Everything the records say, as a text handler and as the JSON one would write them."""
        plain, as_json = logging.Formatter("%(name)s %(levelname)s %(message)s"), JsonFormatter()
        return "\n".join(f"{plain.format(r)}\n{as_json.format(r)}" for r in self.records)


@pytest.fixture
def captured() -> Iterator[Captured]:
    handler, root = Captured(), logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", "hippo", "uvicorn", "uvicorn.error")}
    root.addHandler(handler)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def access_lines(handler: Captured) -> list[dict]:
    return [json.loads(r.getMessage()) for r in handler.records if r.name == "hippo.access"]


def test_one_json_line_per_request_and_no_canary_or_key_in_any_log(db, clock, captured):
    canary = {name: f"canary-{name}-{uuid.uuid4().hex[:12]}" for name in
              ("memory", "query", "block", "fact", "message", "tool", "metadata", "forget", "compact")}
    mem = hippo.open(db, agent_id="default", embedder=FakeEmbedder(), clock=clock, log_format="json")
    key, _ = mem.keys.create(["alice"])
    sent: list[httpx.Response] = []
    with BackgroundServer(mem) as url, httpx.Client(base_url=url, timeout=30,
                                                   headers={"Authorization": f"Bearer {key}"}) as api:
        def call(method: str, path: str, **kwargs: object) -> httpx.Response:
            answer = api.request(method, path, **kwargs)
            sent.append(answer)
            return answer

        stored = call("POST", f"{A}/memories", json={"content": f"The vault code is {canary['memory']}",
                                                     "metadata": {"note": canary["metadata"]}})
        assert stored.status_code == 201
        assert call("POST", f"{A}/memories/recall", json={"query": canary["query"]}).status_code == 200
        assert call("GET", f"{A}/memories", params={"q": canary["query"]}).status_code == 200
        assert call("PUT", f"{A}/blocks/human", json={"value": canary["block"]}).status_code == 200
        assert call("POST", f"{A}/facts", json={"text": f"My name is {canary['fact']}."}).status_code == 200
        talk = [{"role": "user", "content": f"Remember {canary['message']}"}]
        assert call("POST", f"{A}/sessions/s-1/messages", json={"messages": talk}).status_code == 202
        assert call("POST", f"{A}/process").status_code == 200
        assert call("POST", f"{A}/tools/store_memory", json={"content": canary["tool"]}).status_code == 200
        assert call("POST", f"{A}/compact", json={"messages": [{"role": "user", "content": canary["compact"]}]}) \
            .status_code == 200
        assert call("POST", f"{A}/forget", json={"description": canary["forget"], "preview": True}).status_code == 200
        # refusals that quote what was sent: a bad value, a block text not found, a wrong key, a bad id
        assert call("POST", f"{A}/memories/recall", json={"query": canary["query"], "limit": 0}).status_code == 422
        assert call("PATCH", f"{A}/blocks/human", json={"old": canary["query"], "new": "x"}).status_code == 409
        assert call("GET", f"{A}/stats", headers={"Authorization": f"Bearer {key}x"}).status_code == 401
        assert call("GET", "/v1/agents/bob/stats").status_code == 403
        assert call("GET", f"{A}/memories/{canary['memory']}").status_code == 422
    lines = access_lines(captured)
    assert len(lines) == len(sent)  # one line per request, in order
    for line, answer in zip(lines, sent):
        assert set(line) == FIELDS
        assert line["request_id"] == answer.headers["x-request-id"]
        assert (line["method"], line["status"]) == (answer.request.method, answer.status_code)
        assert line["route"].startswith("/v1/agents/{agent_id}/") and line["agent"] in ("alice", "bob")
        assert line["duration_ms"] >= 0 and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", line["time"])
        assert line["error"] == (answer.json()["error"]["code"] if answer.status_code >= 400 else None)
    logged = captured.text()
    assert logged.count("hippo.access") >= len(sent)
    for text in (*canary.values(), key, key[-12:]):
        assert text not in logged, text


def test_an_exception_is_logged_by_its_class_and_frames_never_its_message():
    secret = f"canary-{uuid.uuid4().hex}"
    try:
        raise ValueError(f"the caller sent {secret}")
    except ValueError:
        record = logging.getLogger("hippo.http").makeRecord("hippo.http", logging.ERROR, __file__, 1,
                                                            "unhandled", (), sys.exc_info())
    line = json.loads(JsonFormatter().format(record))
    assert line["exception"].startswith("builtins.ValueError raised at") and "test_http_logs.py" in line["exception"]
    assert secret not in json.dumps(line)
    assert secret in logging.Formatter().format(record)  # what a plain traceback would have said


@pytest.mark.parametrize(("given", "kept"), [("req-123", True), ("a1b2c3d4:trace.5_6", True),
                                             ("x" * 65, False), ("has space", False), ("ünïcode", False),
                                             ("<script>", False), ("", False)])
def test_a_request_id_is_taken_when_safe_and_made_otherwise(api, given, kept):
    headers = {"X-Request-ID": given.encode("utf-8")} if given else {}
    for answer in (api.get("/healthz", headers=headers),  # success
                   api.get(f"{A}/blocks/missing", headers=headers),  # an error of the API
                   api.post(f"{A}/memories/recall", json={}, headers=headers),  # a malformed request
                   api.get("/no/such/route", headers=headers)):  # no route at all
        returned = answer.headers["x-request-id"]
        assert returned == given if kept else re.fullmatch(r"[0-9a-f]{32}", returned), (answer.url, returned)


def test_each_request_gets_its_own_id(api):
    ids = {api.get("/healthz").headers["x-request-id"] for _ in range(5)}
    assert len(ids) == 5


def test_refusals_before_any_route_carry_the_request_id_too(base):
    with BackgroundServer(base, max_body_bytes=2048) as url:
        too_large = httpx.post(f"{url}{A}/memories", content=b"x" * 5000, headers={"X-Request-ID": "big-1",
                                                                                    "Content-Type": "application/json"})
        assert (too_large.status_code, too_large.headers["x-request-id"]) == (413, "big-1")
        elsewhere = httpx.get(f"{url}/healthz", headers={"Host": "evil.example", "X-Request-ID": "host-1"})
        assert (elsewhere.status_code, elsewhere.headers["x-request-id"]) == (421, "host-1")


def test_text_format_logs_a_plain_line(base, captured):
    with BackgroundServer(base) as url:
        httpx.get(f"{url}/healthz", headers={"X-Request-ID": "plain-1"})
    # the line is written once the answer is sent: read after the server stopped
    [line] = [r.getMessage() for r in captured.records if r.name == "hippo.access"]
    assert line.startswith("GET /healthz 200 ") and line.endswith("request plain-1")


@pytest.mark.timeout(120)
def test_hippo_serve_with_json_logs_writes_only_json_lines(tmp_path):
    db = str(tmp_path / "served.db")
    proc, url = serve(db, tmp_path, log_format="json")
    try:
        secret = "canary-served-" + uuid.uuid4().hex[:8]
        httpx.post(f"{url}{A}/memories", json={"content": secret}, headers={"X-Request-ID": "served-1"})
        httpx.post(f"{url}{A}/memories/recall", json={"query": secret})
        httpx.get(f"{url}/metrics")
    finally:
        err = stopped(proc)
    assert all(line.startswith("{") for line in err.splitlines() if line.strip()), err
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]  # every line is JSON
    access = [line for line in lines if "request_id" in line and "route" in line]
    assert [line["route"] for line in access if line["route"] != "/healthz"] == \
        ["/v1/agents/{agent_id}/memories", "/v1/agents/{agent_id}/memories/recall", "/metrics"]
    assert access[-3]["request_id"] == "served-1"
    assert any("serving" in line.get("message", "") for line in lines)  # the start-up lines, as JSON
    assert secret not in err
