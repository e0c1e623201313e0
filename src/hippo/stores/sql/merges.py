"""The wordings recognition merged into facts (``MergeStore``), as both relational stores keep them.

A wording lives beside its fact: kept while the fact is archived, deleted with it by the schema's
triggers (whatever path deletes the fact) and when the fact's text is replaced (a wording of the
old text is not one of the new). Its text leaves the files as a forgotten chunk's does
(``SqlDatabase.text_deleted``; the chunk's delete or rewrite does it for the trigger's deletes).
"""

from __future__ import annotations

import json
from typing import Sequence

from hippo.stores.sql.database import SqlDatabase, blank, fetch_among, write_many
from hippo.stores.sql.rows import time_of
from hippo.types import MergedWording

__all__ = ["SqlMerges"]

_COLUMNS = "id, fact_id, content, merged_at, similarity, intensity, metadata, source, session_id, observed_at"


class SqlMerges:
    """The ``MergeStore`` methods of a relational store, through its ``db`` handle."""

    db: SqlDatabase

    def add_merged(self, agent_id: str, wordings: Sequence[MergedWording]) -> None:
        d = self.db.dialect
        write_many(self.db, agent_id,
                   f"INSERT INTO fact_merges (agent_id, {_COLUMNS}) VALUES (?,?,?,?,?,?,?,{d.json_mark},?,?,?)",
                   [(agent_id, w.id, w.fact_id, w.content, d.time(w.merged_at), w.similarity, w.intensity,
                     json.dumps(w.metadata, ensure_ascii=False) if w.metadata else None, w.source, w.session_id,
                     d.time(w.observed_at)) for w in wordings])

    def merged_wordings(self, agent_id: str, fact_ids: Sequence[str]) -> list[MergedWording]:
        d = self.db.dialect
        rows = fetch_among(self.db, agent_id, f"SELECT {_COLUMNS} FROM fact_merges WHERE agent_id = ? AND", "fact_id",
                           fact_ids, (agent_id,), then=" ORDER BY merged_at, id")
        return [MergedWording(r[0], r[1], r[2], time_of(d, r[3]), r[4], r[5], d.read_json(r[6]) or {}, r[7], r[8],
                              d.read_time(r[9])) for r in rows]

    def remove_merged(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        among, values = self.db.dialect.among("id", ids)
        return blank(self.db, agent_id, f"DELETE FROM fact_merges WHERE agent_id = ? AND {among}", (agent_id, *values))

    def known_merge_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        rows = fetch_among(self.db, agent_id, "SELECT id, agent_id = ? FROM fact_merges WHERE", "id", ids, (agent_id,))
        return {row[0]: bool(row[1]) for row in rows}
