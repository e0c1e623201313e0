"""The one hash of a text that hippo stores: what makes storing the same memory twice strengthen it."""

from __future__ import annotations

import hashlib

__all__ = ["content_hash"]


def content_hash(content: str) -> str:
    """SHA-256 of the UTF-8 text, hex."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()
