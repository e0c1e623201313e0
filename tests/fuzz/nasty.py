"""Values a careless or hostile caller hands hippo, and a fingerprint of what a database holds.

Shared by the fuzz tests of the Python API, the agent tools and the CLI: every call either
succeeds, or fails with a hippo error (``ok: false`` for tools, exit code 1 or 2 for the CLI)
and leaves the database exactly as it was."""

from __future__ import annotations

import hashlib
import sqlite3
import traceback
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Text that breaks naive code: lone surrogates, NUL, newlines at the end, FTS syntax, SQL.
TRICKY_TEXT = ["", " ", "\n", "alice\n", "human\n", "a\x00b", "bad \ud800 text", "\udfff", '"', "NEAR(", "*",
               "AND OR NOT", "'; DROP TABLE chunks; --", "x" * 40_000, "../human", "hippo://blocks/human",
               "01J00000000000000000000000", "01J00000000000000000000000\n", "🧠" * 10, "٣", "ß", "\t\r"]
HUGE_INTS = [10**400, -(10**400), 2**63, -(2**63) - 1, 10**19]



def _digits_past_str_limit() -> int:
    return 10**4400  # Python refuses to print it (4,300 digits): built, never repr'd by hypothesis


characters = st.characters(codec=None, categories=None)  # surrogates included
texts = st.one_of(st.sampled_from(TRICKY_TEXT), st.text(characters, max_size=60), st.text(max_size=20))
numbers = st.one_of(st.integers(), st.sampled_from(HUGE_INTS), st.builds(_digits_past_str_limit), st.floats(allow_nan=True, allow_infinity=True),
                    st.integers(min_value=-3, max_value=1100), st.booleans())


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"k": value}
    return value


scalars = st.one_of(st.none(), texts, numbers, st.binary(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(texts, inner, max_size=4)), max_leaves=12)
def _too_deep_to_print() -> dict:
    return _nested(3_000)  # past Python's recursion limit: built on demand, never repr'd by hypothesis


nasty = st.one_of(values, st.builds(_too_deep_to_print),
                  st.sampled_from([_nested(40), [[[[[]]]]], object(), {1, 2}, ("t",)]))
metadata = st.one_of(st.none(), st.dictionaries(st.sampled_from(["tags", "k", "source", "k\n", ""]) | texts,
                                                values, max_size=3), nasty)


def fingerprint(db: Path) -> str:
    """A digest of every row a caller could have changed: memories, blocks, keys, versions, the archive,
    experiences, the capture inbox and the sessions' histories."""
    conn = sqlite3.connect(db)
    try:
        digest = hashlib.sha256()
        for table in ("chunks", "memory_blocks", "api_keys", "agent_versions", "embedding_model", "chunks_archive",
                      "experiences", "short_term", "observed_messages", "capture_cursors", "surfaced",
                      "session_items"):
            for row in sorted(conn.execute(f"SELECT * FROM {table}"), key=repr):
                digest.update(repr(row).encode("utf-8", "surrogatepass"))
        return digest.hexdigest()
    finally:
        conn.close()


def hippo_error_or_none(exc: BaseException | None) -> Any:
    """Assert an exception is a hippo error (or no exception at all)."""
    import hippo

    if exc is not None and not isinstance(exc, hippo.HippoError):
        where = [f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in traceback.extract_tb(exc.__traceback__)]
        raise AssertionError(f"untyped {type(exc).__name__}: {str(exc)[:200]} at {' <- '.join(reversed(where[-6:]))}")
    return exc


Operations = dict[str, tuple[Callable[..., Any], tuple[st.SearchStrategy, ...]]]


def fuzz_calls(ops: Operations, target: Any, db: Path, calls: int) -> list[str]:
    """``calls`` generated calls of ``ops`` on ``target`` (a strategy per argument): each raises
    nothing but a hippo error, and one that raises leaves ``db`` as it was. The names called."""
    made: list[str] = []

    @settings(max_examples=calls, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data(), name=st.sampled_from(sorted(ops)))
    def call(data: st.DataObject, name: str) -> None:
        run, strategies = ops[name]
        args = [data.draw(strategy) for strategy in strategies]
        before = fingerprint(db)
        error = None
        try:
            run(target, *args)
        except Exception as exc:  # noqa: BLE001 - the property: nothing but hippo errors
            error = exc
        hippo_error_or_none(error)
        if error is not None:
            assert fingerprint(db) == before, f"{name} raised {error!r} but changed the database"[:500]
        made.append(name)

    call()
    return made
