"""Finding a removed text again without keeping it: keyed fingerprints of its words, and a scan
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
from typing import Iterable, Sequence

__all__ = ["RUN", "Fingerprints", "words"]

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
