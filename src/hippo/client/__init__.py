"""The same ``Memory`` over HTTP: :func:`connect` reaches one agent's memory on a ``hippo serve``
with ``Memory``'s operations, arguments, result types and errors.

    mem = hippo.connect("http://127.0.0.1:8000", key="hk_...", agent_id="alice")
    mem.store_memory("We chose SQLite")
    hits = mem.recall_memories("which database?")

Every operation of ``Memory`` is here except the database-wide ones and those that name a file
on the server (:data:`hippo.client.wire.NOT_REMOTE` says which, and why). The calls travel as
``POST /v1/agents/{agent_id}/operations/{name}``; :mod:`hippo.client.wire` is the codec both ends share.
"""

from __future__ import annotations

import os

from hippo.client.remote import DEFAULT_TIMEOUT, AsyncRemoteMemory, RemoteMemory
from hippo.config import load_settings

__all__ = ["AsyncRemoteMemory", "RemoteMemory", "connect", "connect_async"]


def _agent(agent_id: str | None) -> str:
    """As :func:`hippo.open` finds it: given, else ``HIPPO_AGENT_ID``, hippo.toml's, ``default``."""
    return agent_id if agent_id is not None else load_settings().agent_id


def _key(key: str | None) -> str | None:
    return key if key is not None else os.environ.get("HIPPO_API_KEY") or None


def connect(url: str, *, key: str | None = None, agent_id: str | None = None,
            timeout: float | None = DEFAULT_TIMEOUT) -> RemoteMemory:
    """One agent's memory on the hippo server at ``url``, with ``Memory``'s operations.

    ``key``: an API key from ``hippo keys create`` (default: ``HIPPO_API_KEY``; a keyless loopback
    server needs none). ``agent_id``: as :func:`hippo.open` finds it (``HIPPO_AGENT_ID``, hippo.toml,
    else ``default``); the server refuses an invalid one at the first call. ``timeout``: seconds a
    call may take (None: no limit). Nothing is sent until the first call."""
    return RemoteMemory(url, agent_id=_agent(agent_id), key=_key(key), timeout=timeout)


def connect_async(url: str, *, key: str | None = None, agent_id: str | None = None,
                  timeout: float | None = DEFAULT_TIMEOUT) -> AsyncRemoteMemory:
    """:func:`connect` with every operation a coroutine (the same calls, the same codec)."""
    return AsyncRemoteMemory(url, agent_id=_agent(agent_id), key=_key(key), timeout=timeout)
