"""A chunk's strength counters on PostgreSQL, in a narrow table of their own (migration 0019).

A recall that counts as a retrieval bumps the access count, the last access and the intensity of
its hits; reinforcement sets the encounter count too. On the chunk's own row, that UPDATE was never
a HOT update (rows of ~2.2 kB leave no room on their page, and the dashboard's covering index held
the counters), so every bump wrote a new entry into every index of the row, the HNSW graph
included: 25-45 ms per recall at 100k chunks. In ``chunk_strength`` (about 100 bytes a row, pages
left 30% free, no index on a column the bump changes) the same UPDATE is a HOT update of a few
small rows and touches no index at all.

The wide table is ``chunk_rows`` now (text, vector, metadata, provenance); ``chunks`` is a view
joining the two with the columns, in the order, of the table it replaces, and writable (INSTEAD OF
triggers), so that queries an operator or a tool wrote against ``chunks`` keep working. The store
itself reads and writes the two tables.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from hippo.stores.postgres.triggers import DELETE_EXPERIENCE, DELETE_MERGES, gone_with_chunk

__all__ = ["CHUNKS", "COUNTERS", "MIGRATION", "insert_counters"]

# What the store's reads name when they need the counters beside the row (``s`` is the counters).
CHUNKS = "chunk_rows c JOIN chunk_strength s ON s.id = c.id"
COUNTERS = "running_intensity, encounter_count, access_count, last_accessed_at"

_ROW_COLUMNS = ("id, agent_id, content, content_hash, embedding, metadata, kind, superseded_by, created_at, "
                "observed_at, feedback, reinforced_at, source, session_id")

MIGRATION = f"""
ALTER TABLE chunks RENAME TO chunk_rows;
CREATE TABLE chunk_strength (
    id                text PRIMARY KEY REFERENCES chunk_rows (id) ON DELETE CASCADE,
    agent_id          text NOT NULL,
    running_intensity double precision NOT NULL,
    encounter_count   integer NOT NULL,
    access_count      integer NOT NULL,
    last_accessed_at  timestamptz NOT NULL
) WITH (fillfactor = 70);
INSERT INTO chunk_strength (id, agent_id, {COUNTERS}) SELECT id, agent_id, {COUNTERS} FROM chunk_rows;
CREATE INDEX chunk_strength_agent ON chunk_strength (agent_id);
DROP INDEX chunks_summary;
ALTER TABLE chunk_rows DROP COLUMN running_intensity, DROP COLUMN encounter_count, DROP COLUMN access_count,
    DROP COLUMN last_accessed_at;
CREATE INDEX chunks_summary ON chunk_rows (agent_id, created_at, id, superseded_by);
ANALYZE chunk_strength;

-- The triggers that tell a chunk's delete from an archived one's name the table they fire on.
{gone_with_chunk("hippo_experience_gone", DELETE_EXPERIENCE, "chunk_rows", replace=True)}
{gone_with_chunk("hippo_merges_gone", DELETE_MERGES, "chunk_rows", replace=True)}

CREATE VIEW chunks AS SELECT c.id, c.agent_id, c.content, c.content_hash, c.embedding, c.metadata, c.kind,
    s.running_intensity, s.encounter_count, s.access_count, s.last_accessed_at, c.superseded_by, c.created_at,
    c.observed_at, c.tsv, c.feedback, c.reinforced_at, c.source, c.session_id
    FROM chunk_rows c JOIN chunk_strength s ON s.id = c.id;
CREATE FUNCTION hippo_chunks_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM chunk_rows WHERE id = OLD.id;
        RETURN OLD;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO chunk_rows ({_ROW_COLUMNS}) VALUES (NEW.id, NEW.agent_id, NEW.content, NEW.content_hash,
            NEW.embedding, coalesce(NEW.metadata, '{{}}'::jsonb), NEW.kind, NEW.superseded_by, NEW.created_at,
            NEW.observed_at, coalesce(NEW.feedback, 0), NEW.reinforced_at, NEW.source, NEW.session_id);
        INSERT INTO chunk_strength (id, agent_id, {COUNTERS}) VALUES (NEW.id, NEW.agent_id,
            coalesce(NEW.running_intensity, 0.5), coalesce(NEW.encounter_count, 1), coalesce(NEW.access_count, 0),
            NEW.last_accessed_at);
        RETURN NEW;
    END IF;
    -- Text and vector only when they change: their own triggers drop the windows and merged wordings.
    IF (NEW.content, NEW.embedding) IS DISTINCT FROM (OLD.content, OLD.embedding) THEN
        UPDATE chunk_rows SET content = NEW.content, embedding = NEW.embedding WHERE id = OLD.id;
    END IF;
    UPDATE chunk_rows SET content_hash = NEW.content_hash, metadata = NEW.metadata, kind = NEW.kind,
        superseded_by = NEW.superseded_by, created_at = NEW.created_at, observed_at = NEW.observed_at,
        feedback = NEW.feedback, reinforced_at = NEW.reinforced_at, source = NEW.source,
        session_id = NEW.session_id WHERE id = OLD.id;
    UPDATE chunk_strength SET running_intensity = NEW.running_intensity, encounter_count = NEW.encounter_count,
        access_count = NEW.access_count, last_accessed_at = NEW.last_accessed_at WHERE id = OLD.id;
    RETURN NEW;
END $$;
CREATE TRIGGER chunks_written INSTEAD OF INSERT OR UPDATE OR DELETE ON chunks
    FOR EACH ROW EXECUTE FUNCTION hippo_chunks_written();
"""


def insert_counters(cur: Any, agent_id: str, rows: Sequence[tuple[str, float, int, int, datetime]]) -> None:
    """The counters of new chunks (id, intensity, encounters, accesses, last access), in the write
    that inserts their rows."""
    cur.executemany(f"INSERT INTO chunk_strength (id, agent_id, {COUNTERS}) VALUES (%s, %s, %s, %s, %s, %s)",
                    [(i, agent_id, *rest) for i, *rest in rows])
