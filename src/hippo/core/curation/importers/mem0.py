"""mem0 on hippo: where mem0's user, agent and run ids put a memory, and the reader of mem0's
``get_all`` output. The mem0-compatible API (``hippo.compat.mem0``) and the importer share it, so
the memories a file holds for bob are the ones ``Memory().search(..., user_id="bob")`` finds.

A mem0 scope is one hippo agent, and its run a session of that agent:

- ``user_id`` alone: the agent ``user:<user_id>``; ``agent_id`` alone: ``agent:<agent_id>``;
  both: ``user:<user_id>:agent:<agent_id>``; ``run_id`` alone: the agent ``runs``.
- ``run_id``: the ``session_id`` of what is stored for the run, in that agent; a run-scoped read
  filters by it.
- An id of letters, digits and ``_ . @ -`` (up to 48 characters) is written as it is. Any other
  (a colon, a slash, another script, a longer one) is written ``h:`` and 32 hex digits of its
  SHA-256, so that every scope is an agent of its own: a plain id holds no colon, and hex digits
  never spell ``agent``. A run id keeps the characters a session id may hold (``: /`` too).

What is stored for a scope carries its ids in its metadata, under mem0's names (``user_id``,
``agent_id``, ``run_id``), as mem0 keeps them in its payload, and the mark ``_mem0``: what the
mem0 API or a mem0 import wrote, and so what its ``delete_all`` and ``reset`` may remove. An agent's
name alone never says so: ``hippo.open(agent_id="user:alice")`` is an agent of hippo's own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo import limits
from hippo.core import validation as v
from hippo.core.curation.importers.readers import Item, Read, json_file, shown_name, tags_of
from hippo.errors import InvalidInput

__all__ = ["IDENTITY", "MARK", "PROMOTED", "RUNS", "Scope", "check_id", "read"]

IDENTITY = ("user_id", "agent_id", "run_id")
# The payload fields mem0 shows beside ``metadata`` in a result, not inside it (mem0/memory/main.py).
PROMOTED = (*IDENTITY, "actor_id", "role", "attributed_to", "expiration_date")
RUNS = "runs"  # the agent of runs that name no user or agent
MARK = "_mem0"  # metadata: written by the mem0 API or a mem0 import (True)
_PLAIN = re.compile(r"[A-Za-z0-9_.@-]{1,48}")
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}")
_AGENT = re.compile(r"(?:user:(?P<user>[^:]+))?(?::?agent:(?P<agent>[^:]+))?")


def check_id(value: Any, name: str) -> str | None:
    """A mem0 entity id as mem0 takes it: a number becomes its text, the text is trimmed, and
    an empty one or one with whitespace inside is refused (InvalidInput, a ValueError as in mem0)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidInput(f"invalid {name} {v.shown(value)}: expected a string")
    text = str(value).strip()
    if not text:
        raise InvalidInput(f"invalid {name}: cannot be empty or whitespace-only")
    if any(c.isspace() for c in text) or len(text) > limits.NAME_CHARS:
        raise InvalidInput(f"invalid {name} {v.shown(text)}: no whitespace, at most {limits.NAME_CHARS} characters")
    return text


def _hashed(text: str) -> str:
    return "h:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Scope:
    """The user, agent and run a mem0 call names (at least one), and where hippo keeps them."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> "Scope":
        """The scope of a call, each id checked; InvalidInput when it names none (as mem0)."""
        scope = cls(check_id(user_id, "user_id"), check_id(agent_id, "agent_id"), check_id(run_id, "run_id"))
        if scope.user_id is None and scope.agent_id is None and scope.run_id is None:
            raise InvalidInput("At least one of 'user_id', 'agent_id', or 'run_id' must be provided.")
        return scope

    @property
    def agent(self) -> str:
        """The hippo agent that holds this scope's memories."""
        parts = [f"{kind}:{text if _PLAIN.fullmatch(text) else _hashed(text)}"
                 for kind, text in (("user", self.user_id), ("agent", self.agent_id)) if text is not None]
        return ":".join(parts) or RUNS

    @property
    def session(self) -> str | None:
        """The hippo session of this scope's run (None: no run)."""
        if self.run_id is None:
            return None
        return self.run_id if _SESSION.fullmatch(self.run_id) else _hashed(self.run_id)

    def identity(self) -> dict[str, str]:
        """The ids this scope names, as metadata (mem0's payload keys)."""
        return {k: value for k, value in zip(IDENTITY, (self.user_id, self.agent_id, self.run_id)) if value is not None}

    @classmethod
    def of_agent(cls, agent: str, session_id: str | None) -> "Scope":
        """What an agent's name and a session say of a scope, for memories stored without their
        ids (through hippo's own API): a hashed id cannot be read back and stays None."""
        found = _AGENT.fullmatch(agent) if agent != RUNS else None
        user, other = (found.group("user"), found.group("agent")) if found else (None, None)
        readable = session_id if session_id is not None and not session_id.startswith("h:") else None
        return cls(user, other, readable)


# -- the reader -----------------------------------------------------------------------------------

def read(path: Path) -> Read:
    """mem0's ``get_all`` output (``{"results": [...]}`` or a list): each row's ``memory`` as the
    text, ``created_at`` as when it was observed, metadata and categories (as tags) kept, ``id``
    as ``mem0_id``. A row goes to the agent of its scope, into its run's session; a row that names
    no user, agent or run goes to the agent importing. A row mem0 stored as given (it has a
    ``role``: ``add(..., infer=False)``) is a raw memory; the others, which mem0 extracted, are facts."""
    data = json_file(path)
    rows = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise InvalidInput(f"{shown_name(str(path))}: expected mem0's get_all output "
                           "({\"results\": [...]} or a list)")
    found = Read()
    for number, row in enumerate(rows):
        try:
            found.items.append(_item(row, f"results[{number}]"))
        except InvalidInput as exc:
            found.skip(f"results[{number}]", exc.message)
    return found


def _item(row: Any, where: str) -> Item:
    if not isinstance(row, dict):
        raise InvalidInput("not a JSON object")
    text = row.get("memory")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("no memory text")
    meta = row.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise InvalidInput(f"metadata must be a JSON object, got {v.shown(meta)}")
    ids = [row.get(k) for k in IDENTITY]
    scope = Scope.of(*ids) if any(i is not None for i in ids) else None
    kept = {k: row[k] for k in PROMOTED[3:] if isinstance(row.get(k), str)}
    metadata = {**{k: x for k, x in (meta or {}).items() if k not in IDENTITY}, **kept,
                **(scope.identity() if scope else {}), MARK: True}
    if isinstance(row.get("id"), str):
        metadata["mem0_id"] = row["id"]
    categories = row.get("categories")
    return Item(text.strip(), where, tags_of(categories if isinstance(categories, list) else []), metadata,
                v.check_datetime(row.get("created_at"), "created_at"), agent=scope.agent if scope else None,
                session_id=scope.session if scope else None, fact="role" not in kept)
