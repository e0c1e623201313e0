"""Forget receipts: proof that a forget removed what it says, which anyone holding the receipt
can have the database check again later (``Memory.verify_receipt``, ``hippo receipts verify``).

A receipt names what was removed by id, kind and keyed digest, with keyed fingerprints of its
words (``checks.py``) so that a copy of the text can be found without the receipt holding
it; the places checked and what each held (``checks.py``); whether the write-ahead log was
emptied; the audit record of the change; and the database's signature (``operations.py``).
"""

from hippo.core.receipts.operations import Gone, Receipts, everything, gone_of, issue, receipt_of, wordings

__all__ = ["Gone", "Receipts", "everything", "gone_of", "issue", "receipt_of", "wordings"]
