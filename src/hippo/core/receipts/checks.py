"""The checks a receipt makes, at its issue and every time it is verified: no place of the
database names a removed id, holds a removed text, or keeps an index or log entry of it.

Every place the store reads (``hippo.core.ports.receipts``) gets one :class:`PlaceCheck`, clean or
naming the rows that failed it; the receipt's own signature and its audit record come first when
it is verified.

A removed text is found again without keeping it: keyed fingerprints of its words, and a scan
of stored texts for a run of the same fingerprints.

A text's words are its runs of letters and digits, lower-cased (so a copy inside JSON, under
other punctuation or another case is the same words). Each word's fingerprint is the first four
bytes of an HMAC keyed with the database's secret (the receipt's subkey): a receipt holding them
says nothing to someone without that database's key, and a table of known words' fingerprints
made elsewhere matches nothing. A stored text holds a removed one when:

- the removed text has :data:`RUN` words or more, and the stored text has the same fingerprints
  one after another (so a copy inside a longer text is found, a few shared words are not);
- it has fewer, and the stored text's words are exactly its words.

The scan looks each run of :data:`RUN` of a stored text's fingerprints up in a table of the
removed texts' first runs, so checking many removed texts against many stored ones costs one pass
over the stored words; each distinct word is hashed once per scan.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from hippo.core.ports.audit import AuditQuery, canonical, subkey
from hippo.trust import PlaceCheck, Receipt, Removed

if TYPE_CHECKING:
    from hippo.core.ports.scoped import AgentStore

__all__ = ["RUN", "Fingerprints", "audit_check", "fingerprints", "place_checks", "recorded_log", "signature",
           "signature_check", "words"]

_SHOWN = 3  # rows named per place
RUN = 3  # words in a row that must match before a stored text counts as holding a removed one
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased."""
    return _WORD.findall(text.lower())


class Fingerprints:
    """The keyed fingerprints of one database (``key``: its receipt subkey) and a scan for
    removed texts, each given as its fingerprint list."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._seen: dict[str, str] = {}

    def word(self, word: str) -> str:
        found = self._seen.get(word)
        if found is None:
            found = hmac.new(self._key, word.encode("utf-8"), hashlib.sha256).hexdigest()[:8]
            if len(self._seen) < 1_000_000:  # the words of one scan: bounded, not a leak
                self._seen[word] = found
        return found

    def of(self, text: str) -> list[str]:
        """The fingerprints of ``text``'s words, in order."""
        return [self.word(w) for w in words(text)]

    def matcher(self, removed: Iterable[tuple[str, Sequence[str]]]) -> "Matcher":
        """A scan for the removed texts, each ``(label, fingerprints)``."""
        return Matcher(self, removed)


class Matcher:
    """Which removed texts a stored text holds."""

    def __init__(self, prints: Fingerprints, removed: Iterable[tuple[str, Sequence[str]]]) -> None:
        self._prints = prints
        self._runs: dict[tuple[str, ...], list[tuple[str, tuple[str, ...]]]] = {}
        self._whole: dict[tuple[str, ...], list[str]] = {}
        for label, prints_ in removed:
            seq = tuple(prints_)
            if len(seq) >= RUN:
                self._runs.setdefault(seq[:RUN], []).append((label, seq))
            elif seq:
                self._whole.setdefault(seq, []).append(label)

    def __bool__(self) -> bool:
        return bool(self._runs or self._whole)

    def held(self, text: str) -> list[str]:
        """The labels of the removed texts that ``text`` holds."""
        seq = tuple(self._prints.of(text))
        found = list(self._whole.get(seq, ()))
        if self._runs:
            for i in range(len(seq) - RUN + 1):
                for label, removed in self._runs.get(seq[i:i + RUN], ()):
                    if seq[i:i + len(removed)] == removed and label not in found:
                        found.append(label)
        return found



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


def audit_check(store: "AgentStore", receipt: Receipt, *, chain_holds: Callable[[], bool]) -> PlaceCheck:
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
    if oldest is not None and oldest.seq > receipt.audit_seq and chain_holds():
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
