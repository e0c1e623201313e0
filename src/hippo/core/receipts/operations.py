"""Checking a receipt again (``Memory.verify_receipt``, ``hippo receipts verify``): later, from
any process on the same database, and as the agent it was issued to."""

from __future__ import annotations

import json
from typing import Any, Mapping

from hippo.core.audit.chain import verify_chain
from hippo.core.context import Capability
from hippo.core.receipts.checks import audit_check, place_checks, recorded_log, signature_check
from hippo.errors import InvalidInput
from hippo.trust import Receipt, ReceiptCheck

__all__ = ["Receipts", "receipt_of"]


def receipt_of(receipt: Receipt | Mapping[str, Any] | str) -> Receipt:
    """A receipt as given: the object, its ``to_dict()`` or its JSON; InvalidInput says what is wrong."""
    if isinstance(receipt, Receipt):
        return receipt
    try:
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
        chain_holds = verify_chain(self.ctx.agent_id, store.audit_chain(), store.audit_head(), secret)[1] is None
        log_place = db.remnant_places()[-1]
        checks = [signature_check(secret, found), audit_check(store, found, chain_holds=chain_holds),
                  *place_checks(store, secret, found.removed, recorded_log(found, log_place, db.log_state))]
        failed = [c.place for c in checks if not c.ok]
        return ReceiptCheck(verified=not failed, checks=checks, failed=failed)
