"""Issuing a receipt (what an operation removed, with its text, which never leaves the process,
turned into ids, keyed digests and word fingerprints, checked in every place, tied to the
operation's audit record and signed by the database) and checking one again
(``Memory.verify_receipt``, ``hippo receipts verify``): later, from any process on the same
database, and as the agent it was issued to."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from hippo.core.audit.chain import verify_chain
from hippo.core.context import Capability
from hippo.core.hashing import content_hash
from hippo.core.ports.audit import AuditQuery, current, digest
from hippo.core.receipts.checks import (
    audit_check,
    fingerprints,
    place_checks,
    recorded_log,
    signature,
    signature_check,
)
from hippo.errors import InvalidInput
from hippo.trust import Receipt, ReceiptCheck, Removed

if TYPE_CHECKING:
    from hippo.core.context import AgentContext
    from hippo.core.ports.scoped import AgentStore
    from hippo.types import Forgotten

__all__ = ["Gone", "Receipts", "everything", "gone_of", "issue", "receipt_of", "wordings"]

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


def receipt_of(receipt: Receipt | Mapping[str, Any] | str) -> Receipt:
    """A receipt as given: the object, its ``to_dict()`` or its JSON; InvalidInput says what is wrong."""
    try:
        if isinstance(receipt, Receipt):
            return receipt.checked()
        if isinstance(receipt, str):
            return Receipt.from_json(receipt)
        if isinstance(receipt, Mapping):
            return Receipt.from_dict(dict(receipt))
    except ValueError as exc:
        raise InvalidInput(f"receipt: {exc}") from None
    raise InvalidInput(f"receipt must be a Receipt, its dict or its JSON, got {type(receipt).__name__}")


class Receipts(Capability):
    """Receipts of this agent's forgets (issued by the forgetting operations with ``receipt=True``)."""

    def verify_receipt(self, receipt: Receipt | Mapping[str, Any] | str) -> ReceiptCheck:
        """Check a forget's receipt again: its signature (issued by this database, unaltered), its
        audit record, and that no place holds anything of what it removed (the ids, or a copy of
        the text, found by its keyed word fingerprints: inside a longer text too). ``failed``
        names each place that does not hold, and ``checks`` says what was found there."""
        found = receipt_of(receipt)
        if found.agent_id != self.ctx.agent_id:
            raise InvalidInput(f"this receipt is of agent {json.dumps(found.agent_id)}: verify it as that agent")
        store, db = self.ctx.store, self.ctx.store.database
        secret = db.audit_secret()
        # The whole chain is read only when the receipt's record is gone (trimmed: does the checkpoint hold?).
        def chain_holds() -> bool:
            return verify_chain(self.ctx.agent_id, store.audit_chain(), store.audit_head(), secret)[1] is None

        log_place = db.remnant_places()[-1]
        checks = [signature_check(secret, found), audit_check(store, found, chain_holds=chain_holds),
                  *place_checks(store, secret, found.removed, recorded_log(found, log_place, db.log_state))]
        failed = [c.place for c in checks if not c.ok]
        return ReceiptCheck(verified=not failed, checks=checks, failed=failed)
