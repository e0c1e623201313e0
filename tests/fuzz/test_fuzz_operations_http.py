"""Property-based fuzz of the operations route, ``POST /v1/agents/{agent_id}/operations/{name}``,
against a real ``hippo serve`` on loopback: 2,000 generated requests over every operation ``Memory``
names, with arguments drawn from each operation's type hints (:mod:`typed`) and sent as JSON text
written here (lone surrogates, 400-digit numbers and 3,000 levels of nesting reach the server as a
client could send them); now and then an argument the operation does not take, arguments that are
not an object, or a body that is not JSON. Every answer is below 500, on a connection that stays
up, in the one error envelope when refused; a refused request leaves the database as it was; an
operation ``wire.NOT_REMOTE`` names is refused (a 404 when the body is a request at all)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from nasty import fingerprint
from typed import drive, served

from hippo.core.memory import OPERATIONS

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
from hippo.client import wire  # noqa: E402

CALLS = 2_000


TOO_DEEP = '{"k":' * 3_000 + "1" + "}" * 3_000


def body_text(value: Any) -> str:
    """JSON text of a generated value: what JSON cannot hold is sent as its repr, a value too deep
    for the encoder as the same depth written out by hand (:data:`TOO_DEEP`)."""
    try:
        return json.dumps(value, default=repr)
    except (RecursionError, ValueError):
        return TOO_DEEP


def body(kwargs: dict[str, Any], odd: random.Random) -> tuple[str, bool]:
    """The request's body, and whether it is the call as generated: mostly, else a request the
    route refuses whatever the operation."""
    shape = odd.randrange(20)
    if shape == 0:
        return body_text({"arguments": {**kwargs, "no_such_argument": 1}}), False
    if shape == 1:
        return body_text({"arguments": odd.choice([[kwargs], "x", 1, None])}), False
    if shape == 2:
        return odd.choice(["", "{", "[]", '{"arguments": {}, "extra": 1}', body_text(kwargs)]), False
    arguments = body_text(kwargs)
    return '{"arguments": ' + arguments + "}", arguments != TOO_DEEP


def test_generated_requests_get_no_server_error_and_refusals_change_nothing(tmp_path):
    odd = random.Random(46)
    statuses: list[int] = []
    with served(tmp_path) as (url, alice, seeds), httpx.Client(base_url=url, timeout=60) as client:

        def each(name: str, kwargs: dict[str, Any]) -> None:
            text, as_generated = body(kwargs, odd)
            before = fingerprint(seeds.settle(alice))
            response = client.post(f"/v1/agents/alice/operations/{name}", content=text.encode("utf-8", "surrogatepass"),
                                   headers={"content-type": "application/json"})
            status, call = response.status_code, f"{name} {text[:300]}"
            assert status < 500, (call, response.text[:300])
            statuses.append(status)
            if status >= 400:
                assert set(response.json()) == {"error"}, (call, response.text[:300])
                assert fingerprint(seeds.settle(alice)) == before, f"{call} was refused ({status}) but wrote"
            else:
                seeds.after(name, alice)
            assert name in wire.REMOTE or status == 404 or status >= 400 and not as_generated, (call, status)

        made = drive(OPERATIONS, seeds, tmp_path / "files", CALLS, each)
    assert sum(made.values()) >= CALLS and min(made.values()) >= 5 and set(made) == set(OPERATIONS), made
    assert sum(made[name] for name in wire.REMOTE) >= CALLS * len(wire.REMOTE) // len(OPERATIONS) - 100
    assert statuses.count(200) > CALLS // 10 and statuses.count(422) > 0, sorted(set(statuses))
