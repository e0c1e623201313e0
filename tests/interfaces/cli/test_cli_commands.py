"""The ``hippo`` command line: help and docs, a session as a user types it, JSON output, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from cli_helpers import as_json, ok
from support import counts, sql

import hippo
from hippo.interfaces.cli import app
from hippo.interfaces.cli.groups import ALIASES

README = Path(__file__).resolve().parents[3] / "README.md"


def _commands() -> list[tuple[tuple[str, ...], object]]:
    """Every group and every command of a group, as (path, click command); the one-word names of
    earlier releases (hidden aliases) are test_cli_groups.py's, and a hidden command (what a hook
    starts in the background) is no user's."""
    found = []

    def walk(path: tuple[str, ...], command) -> None:
        ctx = command.context_class(command, info_name=path[-1] if path else "hippo")
        for name in command.list_commands(ctx):
            if path or name not in ALIASES:
                sub = command.get_command(ctx, name)
                if getattr(sub, "hidden", False):
                    continue
                found.append(((*path, name), sub))
                if hasattr(sub, "list_commands"):
                    walk((*path, name), sub)

    walk((), typer.main.get_command(app))
    return found


COMMANDS = _commands()
REQUIRED = {"store", "remember", "recall", "forget", "block", "conversation", "list", "show", "stats", "export",
            "import", "reembed", "serve", "keys", "mcp"}


def test_every_required_command_exists():
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="hippo")
    assert all(root.get_command(ctx, name) is not None for name in REQUIRED)
    block = root.get_command(ctx, "block")
    assert set(block.list_commands(ctx)) >= {"get", "set", "append", "replace"}


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=" ".join)
def test_every_command_has_help(runner, path):
    command = dict(COMMANDS)[path]
    assert (command.help or "").strip(), f"hippo {' '.join(path)} has no help text"
    for param in command.params:
        assert getattr(param, "help", None), f"hippo {' '.join(path)}: {param.name} has no help"
    result = ok(runner.invoke(app, [*path, "--help"]))
    assert "Usage" in result.stdout


def test_every_command_is_in_the_readme():
    """Each group is named in the README's command line section (`hippo GROUP ...`), and each of its
    commands in a code span of a bullet that names the group."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]
    assert text.index("## Use it from Python") < text.index("## Command line") < text.index("## Embedders")
    bullets = [re.findall(r"`([^`]*)`", item) for item in re.split(r"\n- ", section)]
    for path, _ in COMMANDS:
        spans = [span for found in bullets if any(s.startswith(f"hippo {path[0]}") for s in found) for span in found]
        assert spans, f"hippo {path[0]} missing from the README"
        if len(path) > 1:
            assert any(re.search(rf"(^|[ |]){path[1]}($|[ |])", span) for span in spans), \
                f"hippo {' '.join(path)} missing"


# -- a session, as typed --------------------------------------------------------------------------


def test_round_trip_as_a_user_types_it(cli, db_path, tmp_path):
    ok(cli("store", "The team decided to use SQLite instead of PostgreSQL", "--tag", "decision",
           "--meta", "priority=2"))
    ok(cli("store", "We spent two hours debugging the office router", "--intensity", "0.8"))
    ok(cli("store", "-", input="Ticket XR-7731 tracks the flaky login test\n"))
    hits = as_json(cli("recall", "SQLite PostgreSQL decided", "--json"))["hits"]
    assert hits[0]["chunk"]["content"] == "The team decided to use SQLite instead of PostgreSQL"
    assert hits[0]["chunk"]["metadata"] == {"priority": 2, "tags": ["decision"]}
    assert "SQLite" in ok(cli("recall", "SQLite")).stdout

    ok(cli("block", "set", "human", "Name: Krz"))
    ok(cli("block", "append", "human", "Likes tea"))
    ok(cli("block", "replace", "human", "Krz", "Kris"))
    assert ok(cli("block", "get", "human")).stdout == "Name: Kris\nLikes tea\n"

    answered_no = ok(cli("forget", "debugging the office router", input="n\n"))
    assert "office router" in answered_no.stdout and "nothing deleted" in answered_no.stderr
    assert counts(db_path) == (3, 1)
    ok(cli("forget", "debugging the office router", input="y\n"))
    assert counts(db_path) == (2, 1)
    assert not sql(db_path, "SELECT 1 FROM chunks WHERE content LIKE '%router%'")

    export = tmp_path / "alice.jsonl"
    ok(cli("export", export))
    fresh = tmp_path / "fresh.db"
    ok(cli("import", export, db=fresh))
    for query in ("SQLite PostgreSQL", "flaky login ticket"):
        before = as_json(cli("recall", query, "--no-touch", "--json"))["hits"]
        after = as_json(cli("recall", query, "--no-touch", "--json", db=fresh))["hits"]
        assert [h["chunk"]["id"] for h in after] == [h["chunk"]["id"] for h in before] != []
    assert ok(cli("block", "get", "human", db=fresh)).stdout == "Name: Kris\nLikes tea\n"


def test_feedback_and_provenance_as_typed(cli):
    first = as_json(cli("store", "Staging lives on db-2", "--source", "migration", "--session", "s1", "--json"))
    second = as_json(cli("store", "Staging is rebuilt nightly", "--json"))
    assert "feedback +3" in ok(cli("reinforce", second["id"])).stderr
    assert as_json(cli("demote", first["id"], "--json"))["feedback"] == -1
    hits = as_json(cli("recall", "staging", "--source", "migration", "--no-touch", "--json"))["hits"]
    assert [h["chunk"]["id"] for h in hits] == [first["id"]]
    shown = ok(cli("show", second["id"])).stdout
    assert "+3" in shown and "agent" in shown
    ok(cli("recall", "staging", "--limit", "2"))  # two joint recalls: a strong link
    ok(cli("recall", "staging", "--limit", "2"))
    links = as_json(cli("related", first["id"], "--json"))["links"]
    assert [(x["chunk"]["id"], x["strength"]) for x in links] == [(second["id"], 2.0)]
    assert second["id"] in ok(cli("related", first["id"])).stdout
    expanded = as_json(cli("recall", "db-2", "--limit", "1", "--expand", "--no-touch", "--json"))["hits"]
    assert [h["linked_from"] for h in expanded] == [None, first["id"]]
    failed = cli("reinforce", "0" * 26)
    assert failed.exit_code != 0 and "no memory" in failed.stderr


def test_maintain_archive_and_restore_as_typed(cli, monkeypatch):
    stored = as_json(cli("store", "An old note about the heron", "--json"))
    assert "no size cap" in ok(cli("maintain")).stderr
    monkeypatch.setenv("HIPPO_MAX_DB_BYTES", "1")
    result = as_json(cli("maintain", "--json"))
    assert result["archived"] == 1 and result["note"]
    assert stored["id"] in ok(cli("archive", "heron")).stdout
    hits = as_json(cli("recall", "heron", "--include-archived", "--no-touch", "--json"))["hits"]
    assert [(h["chunk"]["id"], h["archived"]) for h in hits] == [(stored["id"], True)]
    assert as_json(cli("restore", stored["id"], "--json"))["id"] == stored["id"]
    assert as_json(cli("archive", "heron", "--json"))["hits"] == []


def test_import_from_other_memory_systems_as_typed(cli, db_path):
    data = Path(__file__).resolve().parents[2] / "contract" / "data" / "imports"
    ok(cli("store", "Something to start with"))
    dry = ok(cli("import", str(data / "memory.jsonl"), "--format", "mcp-memory", "--dry-run"))
    assert "would import 7 memories" in dry.stderr and "line 6" in dry.stderr and counts(db_path) == (1, 0)
    report = as_json(cli("import", str(data / "memory.jsonl"), "--format", "mcp-memory", "--json"))
    assert (report["imported"], report["links"]) == (7, 2)
    assert "imported 0 memories" in ok(cli("import", str(data / "memory.jsonl"), "-f", "mcp-memory")).stderr
    failed = cli("import", str(data / "memory.jsonl"), "--format", "notes")
    assert failed.exit_code == 1 and "format must be one of" in failed.stderr


def test_remember_prints_the_summary_and_a_table_of_facts(cli):
    result = ok(cli("remember", "I NEVER want to use Redux again. Oh and I tried that new café on Sukhumvit."))
    assert result.stdout.startswith("Learned 2 facts")
    for column in ("action", "intensity", "similarity", "reason"):
        assert column in result.stdout
    learned = as_json(cli("remember", "I live in Berlin.", "--observed-at", "2024-05-01T10:00:00Z", "--json"))
    fact = learned["facts"][0]
    shown = as_json(cli("show", fact["id"], "--json"))
    assert shown["chunk"]["observed_at"].startswith("2024-05-01T10:00:00")
    assert shown["history"]["current"]["id"] == fact["id"]


def test_store_strengthens_the_same_text(cli):
    first = as_json(cli("store", "Krz prefers tea", "--json"))
    again = as_json(cli("store", "Krz prefers tea", "--json"))
    assert (first["action"], again["action"], again["id"]) == ("inserted", "strengthened", first["id"])
    assert "seen 3 times" in ok(cli("store", "Krz prefers tea")).stdout


def test_list_pages_through_everything(cli):
    ids = [as_json(cli("store", f"memory number {i}", "--json"))["id"] for i in range(5)]
    as_json(cli("remember", "I live in Berlin.", "--json"))
    page = as_json(cli("list", "--limit", "2", "--kind", "memory", "--json"))
    seen = [c["id"] for c in page["items"]]
    while page["next_cursor"]:
        page = as_json(cli("list", "--limit", "2", "--kind", "memory", "--cursor", page["next_cursor"], "--json"))
        seen += [c["id"] for c in page["items"]]
    assert seen == ids[::-1]
    table = ok(cli("list", "--limit", "2"))
    assert "more: hippo memories list --cursor" in table.stderr
    assert [c["kind"] for c in as_json(cli("list", "--kind", "fact", "--json"))["items"]] == ["fact"]


def test_recall_filters(cli):
    ok(cli("store", "alpha project kickoff", "--tag", "work", "--observed-at", "2020-01-01T00:00:00Z"))
    ok(cli("store", "alpha project retro", "--tag", "work"))
    ok(cli("store", "alpha hiking trip", "--tag", "personal"))
    tagged = as_json(cli("recall", "alpha", "--tag", "work", "--json"))["hits"]
    assert {h["chunk"]["content"] for h in tagged} == {"alpha project kickoff", "alpha project retro"}
    recent = as_json(cli("recall", "alpha", "--tag", "work", "--since", "30d", "--json"))["hits"]
    assert [h["chunk"]["content"] for h in recent] == ["alpha project retro"]
    old = as_json(cli("recall", "alpha", "--until", "2021-01-01", "--json"))["hits"]
    assert [h["chunk"]["content"] for h in old] == ["alpha project kickoff"]
    assert as_json(cli("recall", "alpha", "--kind", "fact", "--json"))["hits"] == []
    assert len(as_json(cli("recall", "alpha", "--limit", "1", "--json"))["hits"]) == 1


def test_forget_yes_and_nothing_matching(cli, db_path):
    ok(cli("store", "The wifi password is hunter2"))
    nothing = ok(cli("forget", "quantum chromodynamics lecture"))
    assert "nothing matches" in nothing.stderr and counts(db_path) == (1, 0)
    ok(cli("forget", "wifi password hunter2", "--yes"))
    assert counts(db_path) == (0, 0)


def test_forget_removes_the_captured_messages_that_hold_its_words_as_the_api_does(cli, db_path):
    ok(cli("store", "The wifi password is hunter2"))
    with hippo.open(db_path, agent_id="alice", embedder="fake") as mem:
        mem.observe([{"role": "user", "content": "remember: the wifi password is hunter2", "id": "m1"}],
                    session_id="s")
    ok(cli("forget", "wifi password hunter2", "--yes"))
    assert sql(db_path, "SELECT count(*) FROM observed_messages WHERE content LIKE '%hunter2%'") == [(0,)]


# -- JSON -----------------------------------------------------------------------------------------


def test_every_read_command_prints_json(cli, db_path):
    stored = as_json(cli("store", "We chose SQLite for the prototype", "--json"))
    fact = as_json(cli("remember", "I live in Berlin.", "--json"))["facts"][0]
    ok(cli("block", "set", "persona", "A helpful assistant"))
    hippo.create_messages_table(db_path)
    sql(db_path, "INSERT INTO messages(agent_id, role, content) VALUES ('alice', 'user', 'the oauth redirect broke')")

    assert as_json(cli("recall", "SQLite", "--json"))["hits"][0]["chunk"]["id"] == stored["id"]
    assert {c["id"] for c in as_json(cli("list", "--json"))["items"]} == {stored["id"], fact["id"]}
    assert as_json(cli("show", stored["id"], "--json"))["history"] is None
    assert as_json(cli("show", fact["id"], "--json"))["history"]["versions"][0]["id"] == fact["id"]
    stats = as_json(cli("stats", "--json"))
    assert (stats["facts"], stats["memories"], stats["blocks"], stats["embedder"]) == (1, 1, 1, "fake:64")
    assert as_json(cli("block", "get", "persona", "--json"))["value"] == "A helpful assistant"
    assert [b["key"] for b in as_json(cli("block", "list", "--json"))] == ["persona"]
    assert as_json(cli("conversation", "oauth", "--json"))[0]["content"] == "the oauth redirect broke"
    preview = as_json(cli("forget", "We chose SQLite for the prototype", "--json"))
    assert preview["preview"] is True and preview["deleted"][0]["id"] == stored["id"]
    assert counts(db_path) == (2, 1)  # a JSON preview deletes nothing
    assert as_json(cli("forget", "nothing like this whatsoever", "--json"))["deleted"] == []
    assert as_json(cli("reembed", "--json"))["pending"] == 0
    gone = as_json(cli("forget", "We chose SQLite for the prototype", "--json", "--yes"))
    assert gone["deleted"][0]["id"] == stored["id"] and counts(db_path) == (1, 1)


# -- errors ---------------------------------------------------------------------------------------


def _one_line_error(result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize("args, message", [
    (["store", "   "], "must not be empty"),
    (["store", "x", "--intensity", "3"], "between 0 and 1"),
    (["store", "x", "--meta", "no-equals-sign"], "key=value"),
    (["store", "x", "--observed-at", "last tuesday"], "observed_at"),
    (["store", "-"], "standard input is empty"),
    (["show", "not-an-id"], "invalid memory id"),
    (["show", "01J0000000000000000000000Z"], "no memory"),
    (["recall", "x", "--limit", "0"], "limit"),
    (["block", "get", "persona"], "no memory block 'persona'"),
    (["block", "replace", "human", "absent", "x"], "human"),
    (["block", "set", "bad key!", "x"], "invalid block key"),
    (["conversation", "anything"], "no messages table"),
    (["list", "--cursor", "nope"], "invalid memory id"),
])
def test_bad_input_is_one_line_and_changes_nothing(cli, db_path, args, message):
    ok(cli("store", "something already stored"))
    before = sql(db_path, "SELECT * FROM chunks"), sql(db_path, "SELECT * FROM memory_blocks")
    line = _one_line_error(cli(*args, input=""))
    assert message in line
    assert (sql(db_path, "SELECT * FROM chunks"), sql(db_path, "SELECT * FROM memory_blocks")) == before


def test_a_failed_command_leaves_no_new_database(cli, tmp_path):
    new = tmp_path / "new.db"
    _one_line_error(cli("store", "", db=new))
    assert "no database" in _one_line_error(cli("recall", "x", db=new))
    _one_line_error(cli("store", "x", db=new, agent="not a valid agent!"))
    assert list(tmp_path.iterdir()) == []


def test_another_embedder_on_the_database_is_a_clear_error(cli):
    ok(cli("store", "embedded with fake:64"))
    line = _one_line_error(cli("recall", "x", embedder="fake:32"))
    assert "fake:64" in line and "hippo reembed --embedder fake:32" in line


def test_unexpected_errors_are_one_line_too(cli, monkeypatch):
    ok(cli("store", "x"))

    def broken(self):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(hippo.Memory, "stats", broken)
    line = _one_line_error(cli("stats"))
    assert line == "error: unexpected RuntimeError: disk on fire (run with --verbose for details)"


@pytest.mark.parametrize("args", [["--no-such-option"], ["recall"], ["recall", "x", "--kind", "nope"],
                                  ["recall", "x", "--limit", "many"], ["no-such-command"], ["block", "frobnicate"]])
def test_usage_errors_exit_2(cli, args):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
