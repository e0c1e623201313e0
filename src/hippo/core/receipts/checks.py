"""The checks a receipt makes, at its issue and every time it is verified: no place of the
database names a removed id, holds a removed text, or keeps an index or log entry of it.

Every place the store reads (``hippo.core.ports.receipts``) gets one :class:`PlaceCheck`, clean or
naming the rows that failed it; the receipt's own signature and its audit record come first when
it is verified.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterable

from hippo.core.ports.audit import AuditQuery, canonical, subkey
from hippo.core.receipts.fingerprint import Fingerprints
from hippo.trust import PlaceCheck, Receipt, Removed

if TYPE_CHECKING:
    from hippo.core.ports.scoped import AgentStore

__all__ = ["audit_check", "fingerprints", "place_checks", "recorded_log", "signature", "signature_check"]

_SHOWN = 3  # rows named per place


def fingerprints(secret: str) -> Fingerprints:
    return Fingerprints(subkey(secret, "receipt"))


def signature(secret: str, receipt: Receipt) -> str:
    """The database's HMAC over the receipt's every field but the signature."""
    body = receipt.to_dict()
    body.pop("signature", None)
    return hmac.new(subkey(secret, "receipt-signature"), canonical(body).encode(), hashlib.sha256).hexdigest()


def signature_check(secret: str, receipt: Receipt) -> PlaceCheck:
    if hmac.compare_digest(signature(secret, receipt), receipt.signature):
        return PlaceCheck("signature", True, "issued by this database, unaltered")
    return PlaceCheck("signature", False, "the receipt was altered, or another database issued it")


def audit_check(store: "AgentStore", receipt: Receipt, *, chain_holds: bool) -> PlaceCheck:
    """The receipt's audit record is in the agent's trail, unaltered (or trimmed under retention,
    with the chain still verifying from the checkpoint that replaced it)."""
    if receipt.audit_seq is None:
        return PlaceCheck("audit record", True, "the forget changed nothing, so it left no record")
    found = store.audit_records(AuditQuery(before_seq=receipt.audit_seq + 1, limit=1))
    if found and found[0].seq == receipt.audit_seq:
        if found[0].hash == receipt.audit_hash and found[0].operation_id == receipt.operation_id:
            return PlaceCheck("audit record", True, f"record {receipt.audit_seq} of the trail, unaltered")
        return PlaceCheck("audit record", False, f"record {receipt.audit_seq} of the trail is not the one issued")
    oldest = next(iter(store.audit_chain()), None)
    if chain_holds and oldest is not None and oldest.seq > receipt.audit_seq:
        return PlaceCheck("audit record", True, f"record {receipt.audit_seq} was trimmed under the retention "
                                                "setting; the chain verifies from the checkpoint that replaced it")
    return PlaceCheck("audit record", False, f"record {receipt.audit_seq} is missing from the trail")


def place_checks(store: "AgentStore", secret: str, removed: Iterable[Removed], log: PlaceCheck) -> list[PlaceCheck]:
    """One check per place of the store, in its order: removed ids still named, removed texts
    still held, indexes and the log (``log``: the backend's answer, or the receipt's own)."""
    removed = list(removed)
    findings: dict[str, list[str]] = {}
    ids = [r.id for r in removed if not r.kept]
    for place, rows in store.remaining_ids(ids).items():
        findings.setdefault(place, []).extend(f"{row} is still there" for row in rows)
    matcher = fingerprints(secret).matcher((r.id, r.words) for r in removed)
    if matcher:
        for stored in store.stored_texts():
            for label in matcher.held(stored.text):
                findings.setdefault(stored.place, []).append(f"{stored.row} holds the text of {label}")
    states = {s.place: s for s in [*store.index_states(), log]}
    checks = []
    for place in store.database.remnant_places():
        found, state = findings.get(place, []), states.get(place)
        if found:
            more = f"; and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
            checks.append(PlaceCheck(place, False, "; ".join(found[:_SHOWN]) + more))
        elif state is not None:
            checks.append(state)
        else:
            checks.append(PlaceCheck(place, True, f"nothing of the {len(removed)} removed"))
    return checks


def recorded_log(receipt: Receipt, place: str, now_state: Callable[[datetime], PlaceCheck]) -> PlaceCheck:
    """The log's check when verifying: clean at issue stays clean (what left the log does not
    come back); otherwise the backend is asked again."""
    if receipt.scrubbed:
        return PlaceCheck(place, True, "emptied right after the delete (as the signed receipt says)")
    return now_state(receipt.issued_at)
