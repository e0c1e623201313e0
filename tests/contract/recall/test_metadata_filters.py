"""Metadata filters with operators ($eq $ne $in $gt $gte $lt $lte $exists), checked once."""

from __future__ import annotations

import pytest
from support import sql

from hippo.errors import InvalidInput

ITEMS = [
    ("Ticket: login page is slow", {"status": "open", "priority": 3, "due": "2026-12-01"}),
    ("Ticket: export button missing", {"status": "blocked", "priority": 1}),
    ("Ticket: typo in footer", {"status": "closed", "priority": 2, "due": "2026-11-01"}),
    ("Ticket: dark mode request", {"status": "open", "priority": True}),
    ("Ticket: crash on upload", {}),
]


@pytest.fixture
def tickets(mem):
    for content, metadata in ITEMS:
        mem.store_memory(content, metadata)
    return mem


def found(mem, metadata):
    return sorted(h.content.removeprefix("Ticket: ") for h in mem.recall_memories("Ticket", metadata=metadata,
                                                                                   touch=False, limit=20))


@pytest.mark.parametrize(("metadata", "expected"), [
    ({"status": "open"}, ["dark mode request", "login page is slow"]),
    ({"status": {"$eq": "open"}}, ["dark mode request", "login page is slow"]),
    ({"status": {"$ne": "open"}}, ["crash on upload", "export button missing", "typo in footer"]),  # missing too
    ({"status": {"$in": ["blocked", "closed"]}}, ["export button missing", "typo in footer"]),
    ({"priority": {"$gte": 2}}, ["login page is slow", "typo in footer"]),  # true is not a number
    ({"priority": {"$gt": 1, "$lt": 3}}, ["typo in footer"]),
    ({"priority": {"$lte": 1}}, ["export button missing"]),
    ({"due": {"$lt": "2026-11-15"}}, ["typo in footer"]),  # ISO dates compare as text
    ({"due": {"$exists": True}}, ["login page is slow", "typo in footer"]),
    ({"due": {"$exists": False}}, ["crash on upload", "dark mode request", "export button missing"]),
    ({"priority": True}, ["dark mode request"]),
    ({"status": "open", "priority": {"$gt": 2}}, ["login page is slow"]),
])
def test_operators(tickets, metadata, expected):
    assert found(tickets, metadata) == expected


@pytest.mark.parametrize(("metadata", "message"), [
    ({"status": {"$regex": "o.*"}}, "unknown operator '\\$regex'"),
    ({"status": {"$in": "open"}}, "\\$in takes a list"),
    ({"status": {"$in": []}}, "\\$in takes a list"),
    ({"priority": {"$gt": True}}, "compares a number or a text"),
    ({"due": {"$exists": "yes"}}, "\\$exists takes true or false"),
    ({"status": {}}, "tests nothing"),
    ({"status": ["open"]}, "compares a plain value"),
    ({"bad key!": 1}, "invalid metadata key"),
    (["status"], "must be a JSON object"),
])
def test_bad_filters_are_clear_errors_and_change_nothing(tickets, db, metadata, message):
    before = sql(db, "SELECT * FROM chunks ORDER BY id")
    with pytest.raises(InvalidInput, match=message):
        tickets.recall_memories("Ticket", metadata=metadata)
    assert sql(db, "SELECT * FROM chunks ORDER BY id") == before
