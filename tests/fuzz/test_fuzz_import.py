"""Property-based fuzz of importing from other memory systems: generated files in every format
(markdown, mcp-memory, mem0, letta) that mix good items, known-bad ones (too long, NUL, lone
surrogates, bad dates, deep or huge metadata, numbers past any integer, symlinks out of the folder,
FIFOs) and random ones, imported through ``Memory.import_from`` and through ``hippo import``
in-process, with arguments that cannot work among them.

Properties: only hippo errors (the CLI: exit 1 or 2 with a one-line message, no traceback); a
rejected call or a dry run commits nothing; an import writes exactly as many memories as it
reports, every good item among them, and reports every known-bad item as a problem with a reason;
a dry run reports the same skips. "Commits nothing" is read from SQLite's ``data_version`` on a
connection of our own, which moves with every commit of another connection: stricter than a
fingerprint, and cheap enough to check on every call as the database grows. The CLI opens the
database afresh for each command, which commits (nothing) on open: its calls compare the shared
fingerprint of every row instead."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import typer.main
import typer.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nasty import fingerprint, hippo_error_or_none, nasty, texts
from typer.testing import CliRunner

import hippo
from hippo.providers.fake import FakeEmbedder
from hippo.interfaces.cli import app

PYTHON_CALLS = 2_000
CLI_CALLS = 2_000
HUGE = "9" * 5_000  # spliced into JSON text: past Python's 4,300-digit int()
UID = itertools.count()


@dataclass
class Case:
    """A generated file or folder and what an import of it must do."""

    path: Path
    format: str
    items: int | None = None  # for mem0: every row is imported or skipped, once
    good: set[str] = field(default_factory=set)  # memory texts that must be there after an import
    blocks: dict[str, str] = field(default_factory=dict)  # block key -> value that must be there
    bad: set[str] = field(default_factory=set)  # where of the items that must be reported problems
    secret: str | None = None  # text outside the folder that must never be written


DEEP = json.loads('{"k": ' * 40 + "1" + "}" * 40)  # 40 levels: past the 32 metadata may have


def dumps(value: Any) -> str:
    return json.dumps(value).replace('"HUGE"', HUGE).replace('"NAN"', "NaN")


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), texts,
                         st.sampled_from(["HUGE", "NAN"]))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(texts, inner, max_size=3)),
                           max_leaves=8)
wild = st.one_of(json_values, st.fixed_dictionaries({"memory": st.one_of(texts, json_values)}, optional={
    "metadata": json_values, "created_at": st.one_of(texts, json_values), "categories": json_values,
    "label": st.one_of(texts, json_values), "value": st.one_of(texts, json_values), "limit": json_values}))

MEM0_BAD: list[Callable[[int], Any]] = [
    lambda n: {"memory": f"{n} " + "x" * 40_000}, lambda n: {"memory": f"nul {n} \x00"},
    lambda n: {"memory": f"lone {n} \ud800"}, lambda n: {"memory": f"date {n}", "created_at": "soon"},
    lambda n: {"memory": f"date {n}", "created_at": 1721999999},
    lambda n: {"memory": f"deep {n}", "metadata": DEEP},
    lambda n: {"memory": f"huge {n}", "metadata": {"n": "HUGE"}},
    lambda n: {"memory": f"nan {n}", "metadata": {"f": "NAN"}},
    lambda n: {"memory": f"big {n}", "metadata": {"b": "y" * 20_000}},
    lambda n: {"memory": f"key {n}", "metadata": {"a b": 1}},
    lambda n: {"memory": f"tags {n}", "metadata": {"tags": 5}}, lambda n: {"memory": f"meta {n}", "metadata": [1]},
    lambda n: {"memory": f"nul meta {n}", "metadata": {"k": "\x00"}}, lambda n: 5, lambda n: {"memory": 5},
    lambda n: {"memory": "  "},
]
MCP_BAD: list[Callable[[int], tuple[str, str]]] = [  # the line, and what follows "line N" in the report
    lambda n: (json.dumps({"type": "entity", "name": f"Cut_{n}", "observations": ["x"]})[:-4], ""),
    lambda n: ("[" * 5_000 + "]" * 5_000, ""), lambda n: (f'{{"type": "entity", "name": "N{n}", '
                                                          f'"observations": [{HUGE}]}}', ", observation 1"),
    lambda n: (json.dumps({"type": "entity", "name": f"Big_{n}", "observations": ["o" * 1_000_001]}), ""),
    lambda n: (json.dumps({"type": "entity", "name": f"Long_{n}", "observations": ["o" * 40_000]}), ", observation 1"),
    lambda n: (json.dumps({"type": "entity", "name": f"Nul_{n}", "observations": ["a\x00"]}), ", observation 1"),
    lambda n: (json.dumps({"type": "entity", "name": f"Odd_{n}", "observations": "x"}), ""),
    lambda n: ("5", ""), lambda n: (json.dumps({"type": "thing"}), ""),
]
LETTA_BAD: list[Callable[[int], Any]] = [
    lambda n: {"label": f"huge{n}", "value": "v", "limit": "HUGE"}, lambda n: {"label": f"nul{n}", "value": "\x00"},
    lambda n: {"label": f"tiny{n}", "value": "longer than five", "limit": 5},
    lambda n: {"label": f"zero{n}", "value": "v", "limit": 0}, lambda n: {"label": f"long{n}", "value": "b" * 40_000},
]


def _mem0(data: st.DataObject, folder: Path) -> Case:
    case, rows = Case(folder / "mem0.json", "mem0"), []
    for number in range(data.draw(st.integers(0, 6))):
        kind, n = data.draw(st.sampled_from(["good", "bad", "wild"])), next(UID)
        if kind == "good":
            rows.append({"memory": f"mem0 note {n}", "metadata": {"k": n}, "categories": ["food", "!!"],
                         "created_at": "2024-07-26T17:29:36Z", "user_id": "alex"})
            case.good.add(f"mem0 note {n}")
        else:
            rows.append(data.draw(st.sampled_from(MEM0_BAD))(n) if kind == "bad" else data.draw(wild))
            case.bad |= {f"results[{number}]"} if kind == "bad" else set()
    case.items = len(rows)
    text = data.draw(st.sampled_from([lambda: dumps({"results": rows}), lambda: dumps(rows),
                                      lambda: dumps({"memories": rows}), lambda: "NaN", lambda: '{"results": 5}',
                                      lambda: "[" + '{"k":' * 5_000 + "1" + "}" * 5_000 + "]"]))()
    case.path.write_text(text, encoding="utf-8")
    return case


def _mcp(data: st.DataObject, folder: Path) -> Case:
    case, lines, entities = Case(folder / "memory.jsonl", "mcp-memory"), [], []
    for number in range(1, data.draw(st.integers(0, 6)) + 1):
        kind, n = data.draw(st.sampled_from(["good", "relation", "bad", "wild"])), next(UID)
        if kind == "good" or kind == "relation" and len(entities) < 2:
            lines.append(json.dumps({"type": "entity", "name": f"Ent_{n}", "entityType": "person",
                                     "observations": [f"fact {n}"]}))
            case.good.add(f"Ent {n} (person): fact {n}")
            entities.append(n)
        elif kind == "relation":
            lines.append(json.dumps({"type": "relation", "from": f"Ent_{entities[-1]}", "to": f"Ent_{entities[-2]}",
                                     "relationType": "knows"}))
            case.good.add(f"Ent {entities[-1]} knows Ent {entities[-2]}")
        elif kind == "bad":
            line, suffix = data.draw(st.sampled_from(MCP_BAD))(n)
            lines.append(line)
            case.bad.add(f"line {number}{suffix}")
        else:
            value = data.draw(st.one_of(wild, texts))
            lines.append(" ".join(value.splitlines()) if isinstance(value, str) else dumps(value))
    case.path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return case


def _letta(data: st.DataObject, folder: Path) -> Case:
    case, blocks = Case(folder / "agent.af", "letta"), []
    for _ in range(data.draw(st.integers(0, 5))):
        kind, n = data.draw(st.sampled_from(["good", "bad", "wild"])), next(UID)
        if kind == "good":
            blocks.append({"label": f"lb{n}", "value": f"value {n}", "limit": 100})
            case.blocks[f"lb{n}"] = f"value {n}"
        elif kind == "bad":
            blocks.append(data.draw(st.sampled_from(LETTA_BAD))(n))
            case.bad.add(f"block {blocks[-1]['label']}")
        else:
            blocks.append(data.draw(wild))
    shape, read = data.draw(st.sampled_from([
        (lambda: {"blocks": blocks}, True), (lambda: {"agents": [{"core_memory": blocks}]}, True),
        (lambda: {"agents": [5, {"memory": {"blocks": blocks}}]}, True), (lambda: {"blocks": 5, "agents": "x"}, False),
        (lambda: [blocks], False)]))
    if not read:
        case.blocks, case.bad = {}, set()
    case.path.write_text(dumps(shape()), encoding="utf-8")
    return case


def _markdown(data: st.DataObject, folder: Path) -> Case:
    root, outside = folder / "notes", folder / "elsewhere"
    (root / "memory").mkdir(parents=True)
    outside.mkdir()
    case, lines = Case(root, "markdown", secret=f"secret {next(UID)}"), []
    (outside / "secret.md").write_text(f"- {case.secret}\n", encoding="utf-8")
    for number in range(1, data.draw(st.integers(0, 5)) + 1):
        kind, n = data.draw(st.sampled_from(["good", "long", "nul"])), next(UID)
        lines.append({"good": f"- md note {n}", "long": f"- {n} " + "x" * 40_000, "nul": f"- nul {n} \x00"}[kind])
        case.good |= {f"md note {n}"} if kind == "good" else set()
        case.bad |= {f"MEMORY.md:{number}"} if kind != "good" else set()
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for special in data.draw(st.lists(st.sampled_from(["leak", "fifo", "folder", "binary", "odd", "wild"]),
                                      max_size=3, unique=True)):
        _special(data, case, special)
    if data.draw(st.booleans()):  # the whole memory/ folder a link out
        shutil.rmtree(root / "memory")
        (root / "memory").symlink_to(outside)
        case.bad = {w for w in case.bad if not w.startswith("memory/")} | {"memory/secret.md"}
        case.good = {t for t in case.good if not t.startswith("odd")}
    case.path = data.draw(st.sampled_from([root, root / "MEMORY.md", root / "memory" / "fifo.md"]))
    if case.path.name != "notes":  # one file: MEMORY.md's items alone, or a FIFO refused
        one = case.path.name == "MEMORY.md"
        case.good = {t for t in case.good if one and t.startswith("md")}
        case.bad = {w for w in case.bad if one and w.startswith("MEMORY.md")}
        if case.path.name == "fifo.md" and not case.path.exists():
            os.mkfifo(case.path)
    return case


def _special(data: st.DataObject, case: Case, special: str) -> None:
    memory = case.path / "memory"
    name = {"leak": "leak.md", "fifo": "fifo.md", "folder": "sub.md", "binary": "bin.md", "odd": "a\nb.md",
            "wild": "wild.md"}[special]
    if special == "leak":
        (memory / name).symlink_to(case.path.parent / "elsewhere" / "secret.md")
    elif special == "fifo":
        os.mkfifo(memory / name)
    elif special == "folder":
        (memory / name).mkdir()
    elif special == "binary":
        (memory / name).write_bytes(b"- ok\n\xff\xfe\n")
    elif special == "odd":
        (memory / name).write_text(f"- odd {next(UID)}\n", encoding="utf-8")
        case.good.add((memory / name).read_text(encoding="utf-8")[2:-1])
    else:
        (memory / name).write_text(data.draw(texts), encoding="utf-8", errors="surrogatepass")
    if special not in ("odd", "wild"):
        case.bad.add(f"'memory/{name}'" if not name.isprintable() else f"memory/{name}")


BUILDERS = {"mem0": _mem0, "mcp-memory": _mcp, "letta": _letta, "markdown": _markdown}


class Watch:
    """The database as another process sees it: commits, every agent's memories, alice's blocks."""

    def __init__(self, db: Path) -> None:
        self.conn = sqlite3.connect(db)

    def version(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    # Every agent's: a mem0 row goes to its user's agent (user:alex), the others to alice.
    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def holds(self, text: str) -> bool:
        return self.conn.execute("SELECT 1 FROM chunks WHERE content = ?", (text,)).fetchone() is not None

    def block(self, key: str) -> str | None:
        found = self.conn.execute("SELECT value FROM memory_blocks WHERE agent_id = 'alice' AND key = ?", (key,))
        row = found.fetchone()
        return row[0] if row else None


def check_report(case: Case, report: dict[str, Any], watch: Watch, added: int) -> None:
    """An import wrote exactly what it reports, every good item among it, and named every bad one."""
    assert added == (0 if report["dry_run"] else report["imported"]), (case.format, added, report["imported"])
    problems = {s["where"] for s in report["skipped"] if not s["duplicate"]}
    assert case.bad <= problems, (case.format, sorted(case.bad - problems))
    assert all(s["reason"] and len(s["reason"]) < 300 and s["where"].isprintable() for s in report["skipped"])
    if case.items is not None and report["imported"] + len(report["skipped"]) != case.items:
        assert report["imported"] == 0 and report["skipped"] == [], report  # only a file of another shape
    if not report["dry_run"]:
        assert all(watch.holds(text) for text in case.good), (case.format, case.good)
        assert all(watch.block(key) == value for key, value in case.blocks.items())
    assert case.secret is None or not watch.holds(case.secret)


def make_db(tmp_path: Path) -> tuple[Path, Watch]:
    db = tmp_path / "fuzz.db"
    with hippo.open(db, agent_id="alice", embedder=FakeEmbedder()) as mem:
        mem.store_memories(["gardening: tomatoes need sun", "mem0 note 0"])
        mem.set_memory_block("human", "Name: Kris", char_limit=500)
    return db, Watch(db)


# A quarter of the calls: arguments that cannot work (None draws the generated file's own).
ODD_PATHS = st.one_of(nasty, texts, st.sampled_from(["", "/nonexistent", "a\x00b", "x" * 5_000]))
ARGUMENTS = st.one_of(st.none(), st.none(), st.none(),
                      st.tuples(ODD_PATHS, st.one_of(st.sampled_from(list(BUILDERS)), nasty, texts),
                                st.one_of(st.booleans(), nasty),
                                st.one_of(st.none(), st.just(lambda done, total: None), nasty)))


def test_generated_imports_through_python(tmp_path):
    db, watch = make_db(tmp_path)
    mem = hippo.open(db, agent_id="alice", embedder=FakeEmbedder())
    calls: list[str] = []

    @settings(max_examples=PYTHON_CALLS // 2, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data(), format=st.sampled_from(sorted(BUILDERS)), odd=ARGUMENTS)
    def run(data: st.DataObject, format: str, odd: Any) -> None:
        folder = tmp_path / f"case{next(UID)}"
        folder.mkdir()
        try:
            case = BUILDERS[format](data, folder)
            attempts = [(case.path, format, True, None), (case.path, format, False, None)] if odd is None else [odd] * 2
            reports = [_call(mem, watch, case if odd is None else None, *args) for args in attempts]
            calls.extend(_outcome(report) for report in reports)
            if odd is None and reports[0] is not None and reports[1] is not None:
                assert reports[0]["skipped"] == reports[1]["skipped"], "a dry run reports the same skips"
                assert (reports[0]["imported"], reports[0]["blocks"]) == (reports[1]["imported"], reports[1]["blocks"])
        finally:
            shutil.rmtree(folder)

    run()
    mem.close()
    assert len(calls) >= PYTHON_CALLS
    assert min(Counter(calls).values()) >= 50 and len(Counter(calls)) == 4, Counter(calls)  # none left untried


def _outcome(report: dict[str, Any] | None) -> str:
    if report is None:
        return "refused"
    if any(not s["duplicate"] for s in report["skipped"]):
        return "written, with problems" if report["imported"] or report["blocks"] else "nothing good"
    return "clean"


def _call(mem: Any, watch: Watch, case: Case | None, path: Any, format: Any, dry_run: Any, progress: Any) -> Any:
    version, count = watch.version(), watch.count()
    error, report = None, None
    try:
        report = mem.import_from(path, format, dry_run=dry_run, progress=progress).to_dict()
    except Exception as exc:  # noqa: BLE001 - the property: nothing but hippo errors
        error = exc
    hippo_error_or_none(error)
    if error is not None or report["dry_run"]:
        assert watch.version() == version, f"{format!r} {error!r} wrote to the database"[:300]
        return report
    if case is not None:
        check_report(case, report, watch, watch.count() - count)
    return report


def test_generated_imports_through_the_cli(tmp_path, monkeypatch):
    # Typer rebuilds the Click command on every invoke (60 ms of type-hint evaluation): build it once.
    built = typer.main.get_command(app)
    monkeypatch.setattr(typer.testing, "_get_command", lambda _: built)
    db, watch = make_db(tmp_path)
    runner, codes = CliRunner(), []

    @settings(max_examples=CLI_CALLS, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data(), format=st.sampled_from(sorted(BUILDERS)), dry=st.booleans(), as_json=st.booleans(),
           odd=st.one_of(st.none(), st.tuples(st.one_of(texts, st.just("-")), st.one_of(texts, st.just("hippo")))))
    def run(data: st.DataObject, format: str, dry: bool, as_json: bool, odd: Any) -> None:
        folder = tmp_path / f"case{next(UID)}"
        folder.mkdir()
        try:
            case = BUILDERS[format](data, folder)
            file, given_format = (str(case.path), format) if odd is None else odd
            if given_format == "hippo" and case.path.is_fifo():
                given_format = format  # a hippo export is read from a FIFO on purpose (hippo export | ...)
            argv = ["--db", str(db), "--embedder", "fake", "--agent", "alice", "import", file, "--format", given_format,
                    *(["--dry-run"] if dry else []), *(["--json"] if as_json else [])]
            prior, count = fingerprint(db), watch.count()
            result = runner.invoke(app, argv, env={"COLUMNS": "120"})
            codes.append(_check_cli(result, case if odd is None else None, watch, count, as_json))
            if result.exit_code or dry:
                assert fingerprint(db) == prior, f"{argv[5:]} exited {result.exit_code} but wrote"
        finally:
            shutil.rmtree(folder)

    run()
    assert len(codes) >= CLI_CALLS and {0, 1} <= set(codes), sorted(set(codes))


def _check_cli(result: Any, case: Case | None, watch: Watch, count: int, as_json: bool) -> int:
    output = result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), (result.exit_code, output[-300:])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output and "error: unexpected" not in output, output[-500:]
    if result.exit_code == 1:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), lines
    elif case is None:
        pass
    elif result.exit_code == 0 and as_json:
        check_report(case, json.loads(result.stdout), watch, watch.count() - count)
    elif result.exit_code == 0:
        assert "import" in result.stderr
        shown = [w for w in case.bad if f"skipped {w}: " not in result.stderr]
        assert not shown or "more skipped" in result.stderr, shown
    return result.exit_code
