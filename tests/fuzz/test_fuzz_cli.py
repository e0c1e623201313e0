"""Property-based fuzz of the command line: 2,000 generated `hippo` invocations, run in-process.
Each exits 0, 1 (a problem the user can fix) or 2 (a usage error) with no traceback, and one
that fails leaves the database unchanged."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nasty import fingerprint, numbers, texts
import typer.main
import typer.testing
from typer.testing import CliRunner

import hippo
from hippo.providers.fake import FakeEmbedder
from hippo.interfaces.cli import app

CALLS = 2_000


def as_arg(value: Any) -> str:
    try:
        return str(value)
    except ValueError:  # an integer past Python's 4,300-digit printing limit
        return "9" * 5_000


words = st.one_of(st.sampled_from(["gardening", "tomatoes need sun", "I moved to Lisbon.", "-", "--json"]), texts)
nums = st.one_of(st.sampled_from(["5", "0", "-1", "1e400", "nan", "0.5", "99999999999999999999999"]),
                 numbers.map(as_arg))
when = st.one_of(st.sampled_from(["7d", "12h", "99999999d", "99999999999999999999w", "2024-05-01", "soon"]), words)
keys = st.one_of(st.sampled_from(["human", "persona", "human\n", "../x"]), texts)
ids = st.one_of(st.sampled_from(["01J00000000000000000000000", "01J00000000000000000000000\n"]), texts)
meta = st.one_of(st.sampled_from(["k=1", "tags=x", "k=" + "[" * 3000 + "]" * 3000, "k=" + "9" * 5000, "=x", "k"]),
                 texts.map(lambda t: f"k={t}"), texts)


def options(*pairs: tuple[str, st.SearchStrategy]) -> st.SearchStrategy[list[str]]:
    """Any subset of ``--name value`` pairs (a None strategy: a flag)."""
    def one(pair: tuple[str, Any]) -> st.SearchStrategy[list[str]]:
        name, values = pair
        return st.just([name]) if values is None else values.map(lambda v: [name, v])
    return st.lists(st.one_of(*[one(p) for p in pairs]), max_size=3).map(lambda parts: sum(parts, []))


def command(*head: st.SearchStrategy, opts: st.SearchStrategy | None = None) -> st.SearchStrategy[list[str]]:
    parts = [*head, opts if opts is not None else st.just([])]
    return st.tuples(*parts).map(lambda t: [x for part in t for x in (part if isinstance(part, list) else [part])])


COMMANDS = st.one_of(
    command(st.just("store"), words, opts=options(("--tag", words), ("--meta", meta), ("--intensity", nums),
                                                   ("--observed-at", when))),
    command(st.just("remember"), words, opts=options(("--observed-at", when))),
    command(st.just("recall"), words, opts=options(("--limit", nums), ("--kind", words), ("--tag", words),
                                                    ("--since", when), ("--until", when), ("--no-touch", None))),
    command(st.just("forget"), words, opts=options(("--preview", None), ("--yes", None), ("--limit", nums))),
    command(st.just("block"), st.sampled_from(["get", "set", "append", "replace", "list"]), keys, words, words,
            opts=options(("--char-limit", nums))),
    command(st.just("list"), opts=options(("--limit", nums), ("--cursor", ids), ("--kind", words))),
    command(st.just("show"), ids),
    command(st.just("stats")),
    command(st.just("conversation"), words, opts=options(("--limit", nums))),
    command(st.just("export"), st.just("-")),
)
GLOBAL = options(("--agent", st.one_of(st.just("alice"), texts)), ("--json", None))


def test_generated_invocations_exit_cleanly_and_failures_change_nothing(tmp_path, monkeypatch):
    # Typer rebuilds the Click command on every invoke (60 ms of type-hint evaluation): build it once.
    built = typer.main.get_command(app)
    monkeypatch.setattr(typer.testing, "_get_command", lambda _: built)
    db = tmp_path / "cli.db"
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
        mem.store_memories(["gardening: tomatoes need sun", "We chose SQLite"])
        mem.append_memory_block("human", "Name: Kris")
    hippo.create_messages_table(db)
    runner = CliRunner()
    codes: list[int] = []

    @settings(max_examples=CALLS, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(before=GLOBAL, argv=COMMANDS, after=GLOBAL)
    def invoke(before: list[str], argv: list[str], after: list[str]) -> None:
        prior = fingerprint(db)
        result = runner.invoke(app, ["--db", str(db), "--embedder", "fake", *before, *argv[:1], *after, *argv[1:]],
                               input="n\n", env={"COLUMNS": "120", "HIPPO_AGENT_ID": "alice"})
        output = result.stdout + result.stderr
        assert result.exit_code in (0, 1, 2), (argv, result.exit_code, output[-300:])
        assert result.exception is None or isinstance(result.exception, SystemExit), (argv, repr(result.exception))
        assert "Traceback" not in output and "error: unexpected" not in output, (argv, output[-500:])
        if result.exit_code:
            assert fingerprint(db) == prior, f"{argv[:2]} failed with {result.exit_code} but changed the database"
        codes.append(result.exit_code)

    invoke()
    assert len(codes) >= CALLS and {0, 1, 2} <= set(codes), sorted(set(codes))
