"""The public types of trust: the audit trail's records and the receipts that prove a forget.

A :class:`Receipt` is what ``forget_memory``, ``delete_memory``, ``update_memory`` and
``delete_all`` return with ``receipt=True``: what was removed (ids, kinds, keyed digests, never the
text), every place checked afterwards and what each held, whether the write-ahead log was
emptied, the audit record of the change, and a signature by the database. Keep it as JSON
(:meth:`Receipt.to_json`); ``Memory.verify_receipt`` (``hippo receipts verify``) checks it again,
later and from another process, and answers a :class:`ReceiptCheck` naming any place that failed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from hippo.dictable import Dictable

__all__ = ["AuditBreak", "AuditPage", "AuditRecord", "AuditReport", "PlaceCheck", "Receipt", "ReceiptCheck",
           "Removed"]


@dataclass(frozen=True, slots=True)
class AuditRecord(Dictable):
    """One change to an agent's memory, as the audit trail keeps it (``Memory.audit``): when, who
    (an API key's id, ``"local"`` for an embedded call) through which surface, the operation (its
    public name, and one ``operation_id`` per call), the ids it touched with the digests of their
    content (keyed per database; never the text), counts by what was done. ``seq`` numbers the
    agent's records; ``hash`` chains each to the one before (``prev_hash``). A ``checkpoint``
    record is left by trimming the trail: ``checkpoint`` holds the last removed record's seq and
    hash, signed."""

    agent_id: str
    seq: int
    at: datetime
    operation: str
    operation_id: str
    who: str
    surface: str
    kind: Literal["change", "checkpoint"]
    touched: dict[str, str | None]
    counts: dict[str, int]
    prev_hash: str
    hash: str
    checkpoint: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AuditPage(Dictable):
    """One page of an agent's audit records; pass ``next_cursor`` back for the next (None: the last)."""

    items: list[AuditRecord]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class AuditBreak(Dictable):
    """Where an agent's audit chain stops holding: the record's seq and why."""

    agent_id: str
    seq: int
    reason: str


@dataclass(frozen=True, slots=True)
class AuditReport(Dictable):
    """What checking audit chains found: the agents and records read, and each chain's first break."""

    agents: int
    records: int
    breaks: list[AuditBreak] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.breaks

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "agents": self.agents, "records": self.records,
                "breaks": [b.to_dict() for b in self.breaks]}


@dataclass(frozen=True, slots=True)
class Removed(Dictable):
    """One thing a forget removed: its id, its kind (``memory``, ``fact``, ``wording``,
    ``experience``, ``block``), the keyed digest of its text (as the audit trail keeps it) and
    ``words``, keyed fingerprints of its words in order: enough to find a copy of the text, in a
    database holding the key, and nothing to read it back. ``kept``: the id lives on with another
    text (``update_memory``), so only the old text must be gone."""

    id: str
    kind: str
    digest: str
    words: list[str]
    kept: bool = False


@dataclass(frozen=True, slots=True)
class PlaceCheck(Dictable):
    """One place a receipt checks (the memories, the full-text index, the vectors and ANN files,
    the archive, the capture inbox, session items, links, history, experiences, blocks, the
    audit trail, the write-ahead log): whether it is clean, and what was found or looked at."""

    place: str
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True)
class ReceiptCheck(Dictable):
    """A receipt checked again (``Memory.verify_receipt``): ``verified`` when its signature and
    audit record hold and every place is clean; ``failed`` names the places that are not."""

    verified: bool
    checks: list[PlaceCheck]
    failed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"verified": self.verified, "failed": self.failed, "checks": [c.to_dict() for c in self.checks]}


@dataclass(frozen=True, slots=True)
class Receipt(Dictable):
    """Proof of one forget, signed by the database that did it (see the module's docstring).

    ``checks`` were made right after the change committed; ``verified`` says whether they all
    held then. ``wal_checkpointed`` is None where the backend has no write-ahead log of hippo's
    (PostgreSQL: ``scrubbed`` says whether ``hippo scrub`` has rewritten the tables since)."""

    agent_id: str
    database: str
    operation: str
    operation_id: str
    issued_at: datetime
    removed: list[Removed]
    counts: dict[str, int]
    checks: list[PlaceCheck]
    wal_checkpointed: bool | None
    scrubbed: bool
    audit_seq: int | None
    audit_hash: str | None
    signature: str = ""

    @property
    def verified(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Receipt":
        """A receipt read back from its JSON form; a ValueError says what is missing or wrong."""
        if not isinstance(data, dict):
            raise ValueError("a receipt is a JSON object")
        names = {f.name for f in fields(cls)}
        missing = sorted(names - set(data) - {"signature"})
        if missing:
            raise ValueError(f"a receipt needs {', '.join(missing)}")
        values = {k: _checked(k, v, _SHAPE[k]) for k, v in data.items() if k in names}
        try:
            values["issued_at"] = datetime.fromisoformat(values["issued_at"])
        except ValueError:
            raise ValueError("issued_at is not an ISO-8601 time") from None
        values["removed"] = [Removed(**_fields(r, _REMOVED, "removed")) for r in values["removed"]]
        values["checks"] = [PlaceCheck(**_fields(c, _CHECK, "checks")) for c in values["checks"]]
        return cls(**values)

    def checked(self) -> "Receipt":
        """This receipt, its every field of the type a receipt's JSON gives (a ValueError if not):
        one made in code is held to the same shape as one read back."""
        def shallow(item: Any) -> Any:
            return {f.name: getattr(item, f.name) for f in fields(item)} if isinstance(item, (Removed, PlaceCheck)) \
                else item

        data = {f.name: getattr(self, f.name) for f in fields(self)}
        if isinstance(data["issued_at"], datetime):
            data["issued_at"] = data["issued_at"].isoformat()
        for name in ("removed", "checks"):
            if isinstance(data[name], list):
                data[name] = [shallow(item) for item in data[name]]
        return Receipt.from_dict(data)

    @classmethod
    def from_json(cls, text: str) -> "Receipt":
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a receipt: {exc}") from None


# The JSON shape of a receipt, field by field: a receipt read back is checked against it before it
# is used (a value of another type, or nested without end, is refused, not hashed).
_SHAPE: dict[str, Any] = {"agent_id": str, "database": str, "operation": str, "operation_id": str,
                          "issued_at": str, "removed": list, "counts": dict, "checks": list,
                          "wal_checkpointed": (bool, type(None)), "scrubbed": bool, "audit_seq": (int, type(None)),
                          "audit_hash": (str, type(None)), "signature": str}
_REMOVED: dict[str, Any] = {"id": str, "kind": str, "digest": str, "words": list, "kept": bool}
_CHECK: dict[str, Any] = {"place": str, "ok": bool, "detail": str}


def _checked(name: str, value: Any, kind: Any) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple)
                                                                                 else (kind,))):
        raise ValueError(f"{name} has the wrong type ({type(value).__name__})")
    if name == "counts" and not all(isinstance(k, str) and type(n) is int for k, n in value.items()):
        raise ValueError("counts must map names to whole numbers")
    return value


def _fields(item: Any, shape: dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(item, dict) or set(item) - set(shape) or set(shape) - set(item) - {"kept"}:
        raise ValueError(f"an item of {where} must have exactly {', '.join(shape)}")
    found = {k: _checked(f"{where}.{k}", v, shape[k]) for k, v in item.items()}
    if "words" in found and not all(isinstance(w, str) for w in found["words"]):
        raise ValueError("removed.words must be a list of fingerprints")
    return found
