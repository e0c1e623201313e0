"""PostgreSQL only: ``scrub`` (``hippo scrub``) rewrites the tables only once no transaction older
than the delete can still see the deleted rows; one that stays open leaves the scrub pending, with
the reason, instead of a rewrite that keeps the text and a report that it is gone."""

from __future__ import annotations

import threading

import psycopg
from traces import SECRET, occurrences, total

import hippo
from hippo.providers.fake import FakeEmbedder
from hippo.stores.postgres import store as pg_store


def _elsewhere(url: str) -> psycopg.Connection:
    """A transaction with an id in another database of the cluster (another run's CREATE DATABASE)."""
    base, query = url.split("?", 1)
    other = psycopg.connect(base.rsplit("/", 1)[0] + "/postgres?" + query)
    other.execute("SELECT pg_current_xact_id()")
    return other


def test_scrub_waits_for_an_older_transaction_to_end(database):
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder()) as mem:
        other = _elsewhere(database)
        mem.delete_memory(mem.store_memory(f"Remember {SECRET} as the code word").id)
        threading.Timer(1.0, other.commit).start()  # it ends a second later
        assert mem.scrub() is None
        assert total(occurrences(database)) == 0
        other.close()


def test_a_transaction_that_stays_open_leaves_the_scrub_pending_with_the_reason(database, monkeypatch):
    monkeypatch.setattr(pg_store, "SCRUB_WAIT", 0.3)
    with hippo.open(database, agent_id="alice", embedder=FakeEmbedder()) as mem:
        other = _elsewhere(database)
        mem.delete_memory(mem.store_memory(f"Remember {SECRET} as the code word").id)
        note = mem.scrub()
        assert note is not None and "transaction older than the delete" in note
        other.commit()
        assert mem.scrub() is None and total(occurrences(database)) == 0
        other.close()
