"""The merged wordings of :class:`~hippo.stores.postgres.store.PostgresStore` (see ``MergeStore``),
as in SQLite (``stores/sqlite/merges.py``): kept while the fact is archived, deleted with it by a
trigger (a foreign key cannot follow a fact that moves between two tables), and deleted by another
when the fact's text is replaced (``REWRITTEN``). A removed wording's bytes stay in the table's files
until ``hippo scrub`` (``VACUUM FULL``), as a forgotten chunk's do.
"""

from __future__ import annotations

import json
from typing import Any, Callable, ContextManager, Sequence

from hippo.types import MergedWording

__all__ = ["MIGRATION", "MergeMixin", "PROVENANCE", "REWRITTEN"]

MIGRATION = """
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
CREATE FUNCTION hippo_merges_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'chunks' THEN
        DELETE FROM fact_merges WHERE fact_id = OLD.id AND agent_id = OLD.agent_id
            AND NOT EXISTS (SELECT 1 FROM chunks_archive WHERE id = OLD.id);
    ELSE
        DELETE FROM fact_merges WHERE fact_id = OLD.id AND agent_id = OLD.agent_id
            AND NOT EXISTS (SELECT 1 FROM chunks WHERE id = OLD.id);
    END IF;
    RETURN NULL;
END $$;
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

_COLUMNS = "id, fact_id, content, merged_at, similarity, intensity, metadata, source, session_id, observed_at"


class MergeMixin:
    _db: Any
    _read: Callable[..., ContextManager[Any]]
    _deleted: Callable[[str, int], None]

    def add_merged(self, agent_id: str, wordings: Sequence[MergedWording]) -> None:
        if not wordings:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany(f"INSERT INTO fact_merges (agent_id, {_COLUMNS}) VALUES ({', '.join(['%s'] * 11)})",
                            [(agent_id, w.id, w.fact_id, w.content, w.merged_at, w.similarity, w.intensity,
                              json.dumps(w.metadata, ensure_ascii=False) if w.metadata else None, w.source,
                              w.session_id, w.observed_at) for w in wordings])

    def merged_wordings(self, agent_id: str, fact_ids: Sequence[str]) -> list[MergedWording]:
        if not fact_ids:
            return []
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM fact_merges WHERE agent_id = %s AND fact_id = ANY(%s) "
                                "ORDER BY merged_at, id", (agent_id, list(fact_ids))).fetchall()
        return [MergedWording(r[0], r[1], r[2], r[3], r[4], r[5], r[6] or {}, r[7], r[8], r[9]) for r in rows]

    def remove_merged(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._db.writing(agent_id) as conn:
            count = conn.execute("DELETE FROM fact_merges WHERE agent_id = %s AND id = ANY(%s)",
                                 (agent_id, list(ids))).rowcount
        self._deleted(agent_id, count)
        return int(count)

    def known_merge_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute("SELECT id, agent_id = %s FROM fact_merges WHERE id = ANY(%s)",
                                (agent_id, list(ids))).fetchall()
        return {row[0]: bool(row[1]) for row in rows}
