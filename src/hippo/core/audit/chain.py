"""The check of an agent's audit chain: every record's hash, every link, the signed checkpoint a
trim leaves, the head (the records' encoding and hash: :mod:`hippo.core.ports.audit`)."""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass
from typing import Iterable, Sequence

from hippo.core.ports.audit import GENESIS, ChainRecord, record_hash, sign_checkpoint

__all__ = ["Break", "verify_chain"]


@dataclass(frozen=True, slots=True)
class Break:
    """The first link of a chain that does not hold: the record (its seq) and why."""

    agent_id: str
    seq: int
    reason: str


def verify_chain(agent_id: str, records: Iterable[ChainRecord], head: tuple[int, str] | None,
                 secret: str | None) -> tuple[int, Break | None]:
    """Recompute an agent's chain (``records`` in seq order) against its recorded ``head`` (seq,
    hash); how many records were read, and the first break found (None: it holds)."""
    previous: ChainRecord | None = None
    first: ChainRecord | None = None
    checkpoints: list[ChainRecord] = []
    read = 0
    for record in records:
        read += 1
        if record_hash(record) != record.hash:
            return read, Break(agent_id, record.seq, "the record was altered: its hash does not match its fields")
        if previous is None:
            first = record
        elif record.seq != previous.seq + 1:
            return read, Break(agent_id, previous.seq + 1, f"records {previous.seq + 1} to {record.seq - 1} "
                                                           "were removed")
        elif record.prev_hash != previous.hash:
            return read, Break(agent_id, record.seq, "the record does not link to the one before it "
                                                     "(a record before it was altered, replaced or reordered)")
        if record.kind == "checkpoint":
            checkpoints.append(record)
        previous = record
    return read, _ends(agent_id, first, previous, checkpoints, head, secret)


def _ends(agent_id: str, first: ChainRecord | None, last: ChainRecord | None, checkpoints: Sequence[ChainRecord],
          head: tuple[int, str] | None, secret: str | None) -> Break | None:
    """The chain's two ends: its start is the first record or a signed checkpoint's; its end is the head."""
    if first is None or last is None:
        return None if head is None else Break(agent_id, head[0], "every record of the chain was removed")
    for checkpoint in checkpoints:
        body = json.loads(checkpoint.body)
        expected = None if secret is None else sign_checkpoint(secret, agent_id, body["through"], body["last_hash"])
        if expected is None or not hmac.compare_digest(expected, str(body.get("signature", ""))):
            return Break(agent_id, checkpoint.seq, "the checkpoint's signature does not verify")
    if first.seq != 1 or first.prev_hash != GENESIS:
        covered = any(json.loads(c.body)["through"] == first.seq - 1 and json.loads(c.body)["last_hash"]
                      == first.prev_hash for c in checkpoints)
        if not covered:
            return Break(agent_id, first.seq, f"records before {first.seq} were removed without a checkpoint")
    if head is None or head != (last.seq, last.hash):
        shown = "none" if head is None else str(head[0])
        return Break(agent_id, last.seq + 1, f"the newest records were removed (the chain's head is record "
                                             f"{shown}, the last found {last.seq})")
    return None
