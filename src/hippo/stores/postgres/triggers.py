"""The trigger functions that delete what hangs on a chunk (its experience record, its merged
wordings) when the chunk leaves for good, written once for the migrations that create them and for
the one that renamed the chunks' table.

A chunk moves between the live table and ``chunks_archive`` (archive, restore): a foreign key
cannot follow it, so a trigger on each table deletes the dependants only when the chunk is in
neither table any more. The function tells which table it fired on by name (``TG_TABLE_NAME``).
"""

from __future__ import annotations

__all__ = ["DELETE_EXPERIENCE", "DELETE_MERGES", "gone_with_chunk"]

# What goes with a chunk: its experience record, its merged wordings (a fact's).
DELETE_EXPERIENCE = "DELETE FROM experiences WHERE id = OLD.id"
DELETE_MERGES = "DELETE FROM fact_merges WHERE fact_id = OLD.id AND agent_id = OLD.agent_id"


def gone_with_chunk(function: str, delete: str, live: str, *, replace: bool = False) -> str:
    """``CREATE FUNCTION function()``: run ``delete`` (a ``DELETE ... WHERE`` on ``OLD``, ending
    before its last ``AND``) when a row deleted from ``live`` is not archived, or a row deleted from
    the archive is not live."""
    create = "CREATE OR REPLACE" if replace else "CREATE"
    return f"""{create} FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = '{live}' THEN
        {delete}
            AND NOT EXISTS (SELECT 1 FROM chunks_archive WHERE id = OLD.id);
    ELSE
        {delete}
            AND NOT EXISTS (SELECT 1 FROM {live} WHERE id = OLD.id);
    END IF;
    RETURN NULL;
END $$;"""
