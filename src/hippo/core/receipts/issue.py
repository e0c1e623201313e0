"""Issuing a receipt: what an operation removed (with its text, which never leaves the process),
turned into ids, keyed digests and word fingerprints, checked in every place, tied to the
operation's audit record and signed by the database."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from hippo.core.hashing import content_hash
from hippo.core.ports.audit import AuditQuery, current, digest
from hippo.core.receipts.checks import fingerprints, place_checks, signature
from hippo.trust import Receipt, Removed

if TYPE_CHECKING:
    from hippo.core.context import AgentContext
    from hippo.core.ports.scoped import AgentStore
    from hippo.types import Forgotten

__all__ = ["Gone", "everything", "gone_of", "issue", "wordings"]

# The places whose texts a delete_all removes (the audit trail stays: it holds no text).
_ERASED = ("memories", "archive", "history", "experiences", "capture inbox", "session items", "blocks")


@dataclass(frozen=True, slots=True)
class Gone:
    """One thing an operation removed, with its text: ``kept`` when its id lives on (a new text)."""

    id: str
    kind: str
    text: str
    kept: bool = False


def gone_of(forgotten: Iterable["Forgotten"]) -> list[Gone]:
    return [Gone(f.id, f.kind, f.content) for f in forgotten]


def wordings(store: "AgentStore", fact_ids: list[str]) -> list[Gone]:
    """The wordings merged into these facts: they go with them."""
    return [Gone(w.id, "wording", w.content) for w in store.merged_wordings(fact_ids)] if fact_ids else []


def everything(store: "AgentStore") -> list[Gone]:
    """Every text the agent's rows hold, before a delete_all removes them."""
    kinds = {"memories": "memory", "archive": "memory", "history": "wording", "experiences": "experience",
             "capture inbox": "message", "session items": "session item", "blocks": "block"}
    return [Gone(t.row.split(" ", 1)[1], kinds[t.place], t.text) for t in store.stored_texts() if t.place in _ERASED]


def issue(ctx: "AgentContext", gone: list[Gone], counts: dict[str, int]) -> Receipt:
    """The receipt of the operation open now, once its change committed (and its log was scrubbed)."""
    store, db = ctx.store, ctx.store.database
    secret = db.audit_secret()
    prints = fingerprints(secret)
    removed = [Removed(g.id, g.kind, digest(secret, content_hash(g.text)), prints.of(g.text), g.kept) for g in gone]
    scope = current()
    record = next((r for r in store.audit_records(AuditQuery(limit=20)) if r.operation_id == scope.operation_id),
                  None)
    log = db.log_state(None)
    checks = place_checks(store, secret, removed, log)
    wal = log.ok if log.place == "write-ahead log" else None
    receipt = Receipt(agent_id=ctx.agent_id, database=db.location, operation=scope.operation,
                      operation_id=scope.operation_id, issued_at=ctx.now(), removed=removed, counts=dict(counts),
                      checks=checks, wal_checkpointed=wal, scrubbed=log.ok,
                      audit_seq=None if record is None else record.seq,
                      audit_hash=None if record is None else record.hash)
    return replace(receipt, signature=signature(secret, receipt))
