"""Property-based fuzz of ``hippo.connect``: 2,000 generated calls over every operation the client
offers (``wire.REMOTE``; the others are named in ``wire.NOT_REMOTE`` and fuzzed through Python),
against a real ``hippo serve`` on loopback, with arguments drawn from each operation's type hints
(:mod:`typed`). Each call returns or raises a hippo error that a 4xx answer stands for (or one the
client raises before sending), never one of a 5xx or a dropped connection; and a call that raises
leaves the database as it was."""

from __future__ import annotations

from typing import Any

import pytest
from nasty import fingerprint, hippo_error_or_none
from typed import drive, served, shown

import hippo
from hippo.errors import ProviderError, StorageError

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
from hippo.client import wire  # noqa: E402

CALLS = 2_000


def test_generated_calls_get_only_4xx_errors_and_rejections_change_nothing(tmp_path):
    with served(tmp_path) as (url, alice, seeds), hippo.connect(url, agent_id="alice", timeout=60) as remote:
        statuses: list[int] = []
        remote.http.event_hooks = {"response": [lambda response: statuses.append(response.status_code)]}

        def each(name: str, kwargs: dict[str, Any]) -> None:
            before, sent = fingerprint(seeds.settle(alice)), len(statuses)
            error = None
            try:
                getattr(remote, name)(**kwargs)
            except Exception as exc:  # noqa: BLE001 - the property: nothing but hippo errors
                error = exc
            call = f"{name}({shown(kwargs)})"
            hippo_error_or_none(error)
            # A 5xx, or a connection the server dropped (the client's StorageError), is the server's fault.
            assert not isinstance(error, (StorageError, ProviderError)) and getattr(error, "code", "") != "internal", \
                f"{call}: {error!r}"[:600]
            assert all(status < 500 for status in statuses[sent:]), f"{call}: {statuses[sent:]}"[:600]
            if error is not None:
                assert fingerprint(seeds.settle(alice)) == before, f"{call} raised {error!r} but wrote"[:600]
            else:
                seeds.after(name, alice)

        made = drive(wire.REMOTE, seeds, tmp_path / "files", CALLS, each)
    assert sum(made.values()) >= CALLS and min(made.values()) >= 5 and set(made) == set(wire.REMOTE), made
    assert len(statuses) >= CALLS // 2 and any(status == 200 for status in statuses)
