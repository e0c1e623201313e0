"""The one hash hippo stores per memory: what makes storing the same memory twice strengthen it.

A memory is deduplicated by its text (:func:`content_hash`), or, when a caller addresses it by
a key of its own (:mod:`hippo.core.memories.items`), by that key (:func:`key_hash`): two keys may then
hold the same text, and one key holds one memory whatever its text becomes.
"""

from __future__ import annotations

import hashlib

__all__ = ["content_hash", "key_hash"]


def content_hash(content: str) -> str:
    """SHA-256 of the UTF-8 text, hex."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def key_hash(key: str) -> str:
    """The identity of a keyed memory. Texts never hold NUL (validation refuses it), so the
    marker keeps a key's hash apart from every text's."""
    return content_hash("\x00key\x00" + key)
