"""The audit trail's operations on one agent: read its records, check its chain, trim it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hippo.core import validation as v
from hippo.core.audit.chain import verify_chain
from hippo.core.context import Capability
from hippo.core.ports.audit import AuditQuery, ChainRecord, operation
from hippo.errors import InvalidInput, shown
from hippo.types import AuditBreak, AuditPage, AuditRecord, AuditReport

if TYPE_CHECKING:
    from hippo.core.ports import Store

__all__ = ["Auditor", "record_of"]


def record_of(found: ChainRecord) -> AuditRecord:
    """A stored record as the public type (its body read back)."""
    body: dict[str, Any] = json.loads(found.body)
    checkpoint = None if found.kind != "checkpoint" else body
    return AuditRecord(agent_id=found.agent_id, seq=found.seq, at=datetime.fromisoformat(found.at),
                       operation=found.operation, operation_id=found.operation_id, who=found.who,
                       surface=found.surface, kind="checkpoint" if checkpoint is not None else "change",
                       touched=dict(body.get("touched", [])), counts=dict(body.get("counts", {})),
                       prev_hash=found.prev_hash, hash=found.hash, checkpoint=checkpoint)


def _cursor(cursor: Any) -> int | None:
    if cursor is None:
        return None
    if isinstance(cursor, str) and cursor.isdigit() and len(cursor) < 19:
        return int(cursor)
    raise InvalidInput(f"cursor must be the next_cursor of an earlier page, got {shown(cursor)}")


class Auditor(Capability):
    """The audit trail of the agent (``Memory.audit``, ``verify_audit``, ``trim_audit``)."""

    @property
    def _db(self) -> "Store":
        return self.ctx.store.database

    def audit(self, *, since: datetime | str | None = None, until: datetime | str | None = None,
              operation: str | None = None, chunk_id: str | None = None, limit: int = 100,
              cursor: str | None = None) -> AuditPage:
        """The agent's audit records, newest first: each change to its memory, when, by whom
        (an API key's id or ``"local"``, and the surface), the operation, the ids it touched with
        digests of their content (never the text), counts. ``since`` (inclusive) and ``until``
        (exclusive) bound the time, ``operation`` names one (``forget_memory``), ``chunk_id``
        keeps the records that touched one memory; pass ``next_cursor`` back for the next page."""
        if operation is not None:
            operation = v.check_text(operation, "operation", max_chars=100)
        query = AuditQuery(since=v.check_datetime(since, "since"), until=v.check_datetime(until, "until"),
                           operation=operation, chunk_id=None if chunk_id is None else v.check_chunk_id(chunk_id),
                           before_seq=_cursor(cursor), limit=v.check_limit(limit))
        found = self.ctx.store.audit_records(query)
        more = len(found) == query.limit and found[-1].seq > 1
        return AuditPage([record_of(r) for r in found], str(found[-1].seq) if more else None)

    def verify_audit(self, *, every_agent: bool = False) -> AuditReport:
        """Recompute the agent's audit chain (every agent's in the database, the API keys' too, with
        ``every_agent``): each record's hash, each link to the one before, the signed checkpoint a
        trim left, the head; the report names the first record of each chain that does not hold."""
        db = self._db
        agents = db.audit_agents() if v.check_flag(every_agent, "every_agent") else [self.ctx.agent_id]
        secret, read, breaks = db.audit_secret(), 0, list[AuditBreak]()
        for agent_id in agents:
            head = db.audit_head(agent_id)
            count, broken = verify_chain(agent_id, db.audit_chain(agent_id), head, secret)
            read += count
            if broken is not None:
                breaks.append(AuditBreak(broken.agent_id, broken.seq, broken.reason))
        return AuditReport(agents=len(agents), records=read, breaks=breaks)

    def trim_audit(self, *, older_than_days: int | None = None, every_agent: bool = False) -> int:
        """Remove the agent's audit records older than ``older_than_days`` (the setting
        ``audit_retention_days`` by default; nothing when both are None), leaving a signed
        checkpoint record that keeps the chain verifiable; how many records were removed. With
        ``every_agent``, every trail of the database (the API keys' too): what ``hippo serve`` runs
        daily when the setting is on."""
        days = self.ctx.settings.audit_retention_days if older_than_days is None \
            else v.check_int(older_than_days, "older_than_days", 1, 365_000)
        agents = self._db.audit_agents() if v.check_flag(every_agent, "every_agent") else [self.ctx.agent_id]
        if days is None:
            return 0
        before = self.ctx.now() - timedelta(days=days)
        with operation("trim_audit", clock=self.ctx.now) as current:
            return sum(self._db.trim_audit(agent, before, current) for agent in agents)
