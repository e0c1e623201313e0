"""A name that means the user: "what food should alice avoid?" asked of Alice's own memories.

Memories about the user say "User" or "I" ("User is allergic to peanuts"), and one of them often says
who the user is ("User is Alice"). A query that names the user then matches that one memory by the
name and the rest by nothing: the model ranks "User is Alice" first for any question about Alice.
When one of a recall's hits says the user's name and the query uses it without asking for it,
recall asks again with the name read as "the user", which is how the memories speak of them.
"""

from __future__ import annotations

import re
from typing import Iterable

__all__ = ["as_the_user", "user_name"]

_IDENTITY = re.compile(
    r"^\s*(?:(?:the\s+)?user(?:'s\s+name)?\s+is(?:\s+called|\s+named)?|my\s+name\s+is|i\s+am|i'm|call\s+me)\s+"
    r"(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s*[.!]?\s*$", re.IGNORECASE)
_ASKS_NAME = re.compile(r"\b(?:name|named|called|who\s+am\s+i|who\s+is|who's)\b", re.IGNORECASE)


def user_name(texts: Iterable[str]) -> str | None:
    """The user's name as one of ``texts`` states it ("User is Alice", "My name is Ana Souza")."""
    for text in texts:
        match = _IDENTITY.match(text)
        if match is not None and match["name"][0].isupper():
            return match["name"]
    return None


def as_the_user(query: str, name: str) -> str | None:
    """``query`` with ``name`` (and its first word alone) read as "the user", or None when the query
    does not use the name or asks for it."""
    if _ASKS_NAME.search(query):
        return None
    words = sorted({name, name.split()[0]}, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")(?P<owner>'s)?\b", re.IGNORECASE)
    if pattern.search(query) is None:
        return None
    return pattern.sub(lambda m: "the user's" if m["owner"] else "the user", query)
