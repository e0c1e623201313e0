"""The SQLite tables of the merged wordings (see ``MergeStore``; read and written by
``stores/sql/merges.py``).

A wording lives beside its fact: kept while the fact is archived, deleted with it by triggers
(whatever path deletes the fact: forget, delete, ``delete_all``, the archive's own delete), and
deleted when the fact's text is replaced (``REWRITTEN``: a wording of the old text is not one of the
new). Its text leaves the file as a forgotten chunk's does: ``secure_delete`` zeroes the freed pages,
and the WAL is scrubbed after the commit (the chunk's delete or rewrite schedules that;
``remove_merged`` does too).
"""

from __future__ import annotations

__all__ = ["MIGRATION", "PROVENANCE", "REWRITTEN"]

MIGRATION = """
CREATE TABLE fact_merges (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    fact_id     TEXT NOT NULL,
    content     TEXT NOT NULL,
    similarity  REAL,
    intensity   REAL NOT NULL,
    merged_at   TEXT NOT NULL
);
CREATE INDEX idx_fact_merges_fact ON fact_merges(fact_id, agent_id);
CREATE TRIGGER fact_merges_chunk_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM fact_merges WHERE fact_id = old.id AND agent_id = old.agent_id
        AND NOT EXISTS (SELECT 1 FROM chunks_archive WHERE id = old.id);
END;
CREATE TRIGGER fact_merges_archive_ad AFTER DELETE ON chunks_archive BEGIN
    DELETE FROM fact_merges WHERE fact_id = old.id AND agent_id = old.agent_id
        AND NOT EXISTS (SELECT 1 FROM chunks WHERE id = old.id);
END;
"""

# Who said a wording, and where: what the split fact takes (migration 0023; NULL in older rows).
PROVENANCE = """
ALTER TABLE fact_merges ADD COLUMN metadata TEXT;
ALTER TABLE fact_merges ADD COLUMN source TEXT;
ALTER TABLE fact_merges ADD COLUMN session_id TEXT;
ALTER TABLE fact_merges ADD COLUMN observed_at TEXT;
"""

# A fact whose text is replaced (``update_content``: update_memory, a keyed item put again, any
# later path that sets ``content``) loses the wordings merged into the old text, in the write that
# replaces it (migration 0024). A trigger, as for the windows, so no path can keep them by omission;
# the same text written again (or only a new vector) keeps them.
REWRITTEN = """
CREATE TRIGGER fact_merges_chunk_au AFTER UPDATE OF content ON chunks WHEN old.content IS NOT new.content BEGIN
    DELETE FROM fact_merges WHERE fact_id = old.id AND agent_id = old.agent_id;
END;
"""
