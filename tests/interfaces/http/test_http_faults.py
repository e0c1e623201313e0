"""The operations route under the requests that once broke it (issue 46, item 3), against a real
server on loopback: a put_item whose metadata is a list was a 500, and the request after a 500, on
the same kept-alive connection, was reset; a refusal whose message quotes a lone surrogate was a
500 too. Each is now a 4xx in the error envelope, nothing written, and the connection stays up."""

from __future__ import annotations

import pytest
from support import counts

pytest.importorskip("fastapi")
from hippo.client import wire  # noqa: E402

OPERATIONS = "/v1/agents/alice/operations"


def refusal(response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert set(response.json()) == {"error"} and response.json()["error"]["code"] == code, response.text
    return response.json()["error"]["message"]


def test_put_item_with_metadata_that_is_a_list_is_a_400_and_writes_nothing(api, db):
    before = counts(db)
    response = api.post(f"{OPERATIONS}/put_item", json={"arguments": {"key": "k", "content": "c", "metadata": [1]}})
    assert "metadata must be a JSON object" in refusal(response, 400, "invalid_input")
    assert counts(db) == before
    answer = api.post(f"{OPERATIONS}/put_item", json={"arguments": {"key": "k", "content": "c", "metadata": {"a": 1}}})
    assert answer.status_code == 200 and answer.json()["result"]["action"] == "inserted"


@pytest.mark.parametrize("batch_size", ["abc", 1.5, 0, -1])
def test_reembed_with_a_batch_size_that_is_no_count_is_a_400_not_a_server_fault(api, batch_size):
    response = api.post(f"{OPERATIONS}/reembed", json={"arguments": {"batch_size": batch_size}})
    assert "batch_size must be an integer from 1 to 10000" in refusal(response, 400, "invalid_input")


def test_a_server_fault_is_one_500_and_the_connection_stays_up(api, monkeypatch):
    def broken(value, *args, **kwargs):
        raise RuntimeError("secret internals at /srv/hippo")

    monkeypatch.setattr(wire, "encode", broken)  # every operation's answer fails to be written
    for _ in range(3):  # the same kept-alive connection, each time
        assert refusal(api.post(f"{OPERATIONS}/stats", json={"arguments": {}}), 500, "internal") == \
            "internal server error"
        assert api.get("/healthz").status_code == 200  # was: ReadError, connection reset by peer


def test_a_refusal_that_quotes_a_lone_surrogate_is_still_a_4xx(api, db):
    text = '{"arguments": {"items": [{"bad \\ud800 text": null}]}}'
    response = api.post(f"{OPERATIONS}/store_memories", content=text.encode(),
                        headers={"content-type": "application/json"})
    message = refusal(response, 400, "invalid_input")
    assert "MemoryInput has no field 'bad \\ud800 text'" in message and "content" in message
    assert counts(db) == (0, 0)
