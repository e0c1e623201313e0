"""The PostgreSQL tables of the merged wordings (see ``MergeStore``; read and written by
``stores/sql/merges.py``), as in SQLite (``stores/sqlite/merges.py``): kept while the fact is
archived, deleted with it by a trigger (a foreign key cannot follow a fact that moves between two
tables), and deleted by another when the fact's text is replaced (``REWRITTEN``). A removed
wording's bytes stay in the table's files until ``hippo scrub`` (``VACUUM FULL``), as a forgotten
chunk's do.
"""

from __future__ import annotations

from hippo.stores.postgres.triggers import DELETE_MERGES, gone_with_chunk

__all__ = ["MIGRATION", "PROVENANCE", "REWRITTEN"]

MIGRATION = f"""
CREATE TABLE fact_merges (
    id          text PRIMARY KEY,
    agent_id    text NOT NULL,
    fact_id     text NOT NULL,
    content     text NOT NULL,
    similarity  double precision,
    intensity   double precision NOT NULL,
    merged_at   timestamptz NOT NULL
);
CREATE INDEX fact_merges_fact ON fact_merges (fact_id, agent_id);
{gone_with_chunk("hippo_merges_gone", DELETE_MERGES, "chunks")}
CREATE TRIGGER fact_merges_chunk_ad AFTER DELETE ON chunks FOR EACH ROW EXECUTE FUNCTION hippo_merges_gone();
CREATE TRIGGER fact_merges_archive_ad AFTER DELETE ON chunks_archive
    FOR EACH ROW EXECUTE FUNCTION hippo_merges_gone();
"""

# Who said a wording, and where: what the split fact takes (migration 0017; NULL in older rows).
PROVENANCE = """
ALTER TABLE fact_merges ADD COLUMN metadata jsonb, ADD COLUMN source text, ADD COLUMN session_id text,
    ADD COLUMN observed_at timestamptz;
"""

# As in SQLite: a fact whose text is replaced loses the wordings merged into the old text, in the
# write that replaces it (migration 0018); the same text or only a new vector keeps them.
REWRITTEN = """
CREATE FUNCTION hippo_merges_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fact_merges WHERE fact_id = OLD.id AND agent_id = OLD.agent_id;
    RETURN NULL;
END $$;
CREATE TRIGGER fact_merges_chunk_au AFTER UPDATE OF content ON chunks
    FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content) EXECUTE FUNCTION hippo_merges_rewritten();
"""
