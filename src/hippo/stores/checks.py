"""What ``hippo check`` finds, said alike on both backends: the counts of a database, the findings
on its vectors and its schema version. Each backend reads its own tables in its own SQL
(``sqlite/upkeep/check.py``, ``postgres/checks.py``) and hands the numbers here.
"""

from __future__ import annotations

from typing import Any, Callable

from hippo.core.ports.database import Finding

__all__ = ["held", "listed", "schema_finding", "vectors_finding"]

SHOWN = 5  # problems named in a finding's detail


def listed(problems: list[str]) -> str:
    """The first problems, and how many more there are."""
    more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return "; ".join(problems[:SHOWN]) + more


def held(execute: Callable[[str], Any], rows: str) -> tuple[dict[str, int], tuple[str, Any] | None]:
    """What the database holds, with ``execute`` (a statement's cursor) over the chunk table
    ``rows``, and the embedding model it records (None: none)."""

    def one(sql: str) -> int:
        return int(execute(sql).fetchone()[0])

    kinds = dict(execute(f"SELECT kind, count(*) FROM {rows} GROUP BY kind").fetchall())
    found = {"agents": one(f"SELECT count(DISTINCT agent_id) FROM {rows}"),
             "memories": kinds.get("memory", 0), "facts": kinds.get("fact", 0),
             "archived": one("SELECT count(*) FROM chunks_archive"),
             "pending_vectors": one(f"SELECT count(*) FROM {rows} WHERE embedding IS NULL"),
             "window_vectors": one("SELECT count(*) FROM chunk_windows"),
             "blocks": one("SELECT count(*) FROM memory_blocks")}
    model = execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
    return found, ((model[0], model[1]) if model is not None else None)


def vectors_finding(one: Callable[[str], int], model: tuple[str, Any] | None, found: dict[str, int], *,
                    rows: str, wrong_size: Callable[[int], str], orphans: str) -> Finding:
    """The vectors' finding, with ``one`` (a count query's number) over the chunk table ``rows``:
    with a ``model`` recorded, the vectors whose size is not its dimension (``wrong_size``, this
    backend's test of a row's ``embedding``) and the window vectors of chunks without a vector
    (``orphans``, a count query); without one, no vector at all."""
    pending = f"{found['pending_vectors']} pending (hippo data reembed fills them)"
    if model is None:
        held = one(f"SELECT count(*) FROM {rows} WHERE embedding IS NOT NULL")
        if held:
            return Finding("vectors", False, f"{held} chunks have a vector but no embedding model is recorded")
        return Finding("vectors", True, "no embedding model recorded: keyword recall only; " + pending)
    model_id, dimension = model
    problems = []
    for table, name in ((rows, "chunk vectors"), ("chunk_windows", "window vectors")):
        bad = one(f"SELECT count(*) FROM {table} WHERE embedding IS NOT NULL AND {wrong_size(int(dimension))}") \
            if dimension else 0
        if bad:
            problems.append(f"{bad} {name} are not of dimension {dimension} ({model_id})")
    if stray := one(orphans):
        problems.append(f"{stray} window vectors belong to no chunk with a vector")
    if problems:
        return Finding("vectors", False, listed(problems))
    return Finding("vectors", True, f"every chunk has a vector of {model_id}; {pending}")


def schema_finding(version: int, known: int, *, recorded: int | None = None) -> Finding:
    """The schema version's finding: ``version`` applied of the ``known`` migrations (``recorded``:
    the migrations table's count, where the version is kept apart from it)."""
    if version == known and recorded in (None, known):
        return Finding("schema version", True, f"version {version}, the current one")
    if version > known:
        return Finding("schema version", False, f"version {version} is newer than this hippo's ({known})")
    tally = f" ({recorded} migrations recorded)" if recorded is not None else ""
    return Finding("schema version", False, f"version {version}{tally} of {known}: opening it with hippo migrates it")
