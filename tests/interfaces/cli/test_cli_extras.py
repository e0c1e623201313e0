"""A missing extra is one line that names it, never a traceback; one configuration vocabulary."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_helpers import as_json, ok

pytestmark = pytest.mark.sqlite_only  # the CLI runs on the SQLite file its --db names (the CLI on PostgreSQL: test_http_scaleout.py)


def test_the_command_without_the_cli_extra_names_it(tmp_path):
    from hippo.installed import install_line

    code = "import sys; sys.modules['typer'] = None; from hippo.interfaces.command import main; main()"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("error: the hippo command needs the cli extra: typer is not installed; "
                           f"install it with: {install_line('cli')}\n")


def test_serve_without_the_http_extra_names_it(cli, monkeypatch, db_path):
    from hippo.installed import install_line

    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = cli("serve")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert result.stderr == f"error: uvicorn is not installed; install it with: {install_line('http')}\n"


def test_keyword_only_memory_stores_without_a_warning(cli):
    result = ok(cli("store", "We chose SQLite", embedder="none"))
    assert result.stderr == "" and "pending" not in result.stdout
    stored = as_json(cli("store", "We chose Postgres", "--json", embedder="none"))
    assert stored["vector_pending"] is False


def test_the_agent_comes_from_the_same_variable_as_in_python(runner, db_path, monkeypatch):
    from hippo.interfaces.cli.app import app

    env = {"COLUMNS": "200", "HIPPO_AGENT_ID": "bob"}
    ok(runner.invoke(app, ["--db", str(db_path), "--embedder", "fake", "store", "Bob's note"], env=env))
    import hippo

    with hippo.open(db_path, agent_id="bob", embedder="fake") as mem:
        assert [h.content for h in mem.recall_memories("note", touch=False)] == ["Bob's note"]


def test_a_db_path_expands_home_and_variables_wherever_it_is_given(cli, tmp_path, monkeypatch):
    import hippo
    from hippo.config import load_settings

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMDIR", str(tmp_path / "mem"))
    (tmp_path / "mem").mkdir()
    assert load_settings(db="~/a.db").db == str(tmp_path / "a.db")
    assert load_settings(db="$MEMDIR/b.db").db == str(tmp_path / "mem" / "b.db")
    ok(cli("store", "kept at home", db="~/c.db"))  # as a JSON config passes it, with no shell
    with hippo.open("$MEMDIR/../c.db", agent_id="alice", embedder="fake") as mem:
        assert mem.recall_memories("home", touch=False)[0].content == "kept at home"
    assert not list(tmp_path.glob("~*")) and not (tmp_path / "$MEMDIR").exists()


def test_update_changes_text_and_tags_in_place(cli, db_path):
    from support import sql

    stored = as_json(cli("store", "The door code is 1234", "--json"))
    updated = as_json(cli("update", stored["id"], "--content", "The door code is 4711", "--tag", "home", "--json"))
    assert (updated["id"], updated["content"], updated["metadata"]) == (stored["id"], "The door code is 4711",
                                                                        {"tags": ["home"]})
    assert sql(db_path, "SELECT count(*) FROM chunks WHERE content LIKE '%1234%'") == [(0,)]
    nothing = cli("update", stored["id"])
    assert nothing.exit_code == 1 and nothing.stderr.startswith("error: nothing to update")


def test_delete_all_asks_first_and_erases_only_this_agent(cli):
    cli("store", "Alice's note")
    cli("store", "Bob's note", agent="bob")
    refused = cli("delete-all", input="n\n")
    assert refused.exit_code == 0 and "nothing deleted" in refused.stderr
    assert as_json(cli("stats", "--json"))["memories"] == 1
    assert cli("delete-all", "--json").exit_code == 1  # a program must say --yes
    done = as_json(cli("delete-all", "--yes", "--json"))
    assert (done["agent_id"], done["memories"]) == ("alice", 1)
    assert as_json(cli("stats", "--json"))["memories"] == 0
    assert as_json(cli("stats", "--json", agent="bob"))["memories"] == 1


def test_recall_where_takes_metadata_operators(cli):
    cli("store", "Ticket: login page is slow", "--meta", "priority=3")
    cli("store", "Ticket: typo in footer", "--meta", "priority=1")
    hits = as_json(cli("recall", "Ticket", "--where", '{"priority": {"$gte": 2}}', "--json"))["hits"]
    assert [h["chunk"]["content"] for h in hits] == ["Ticket: login page is slow"]
    bad = cli("recall", "Ticket", "--where", '{"priority": {"$near": 2}}')
    assert bad.exit_code == 1 and "unknown operator '$near'" in bad.stderr


def test_block_context_prints_the_prompt_section(cli):
    ok(cli("block", "set", "persona", "A patient tutor."))
    printed = ok(cli("block", "context", "--max-tokens", "100")).stdout
    assert printed == '<memory_blocks>\n<persona chars="16">\nA patient tutor.\n</persona>\n</memory_blocks>\n'


def test_remember_from_chat_messages(cli):
    import json

    chat = [{"role": "system", "content": "The user lives in Atlantis."},
            {"role": "user", "content": "I moved to Lisbon last month."}]
    learned = as_json(cli("remember", "-", "--messages", "--json", input=json.dumps(chat)))
    assert [f["action"] for f in learned["facts"]] == ["new"] and "Lisbon" in learned["facts"][0]["fact"]
    bad = cli("remember", "[{\"content\": 1}]", "--messages")
    assert bad.exit_code == 1 and "role must be one of" in bad.stderr


def test_prepare_loads_the_model_and_names_the_command(cli, db_path):
    done = ok(cli("prepare", embedder="fake"))
    lines = done.stderr.splitlines()
    assert lines[0] == "hippo: preparing the embedding model fake ..."
    assert lines[1].startswith("hippo: fake") and "is ready" in lines[1]
    assert lines[2].startswith("hippo: for MCP configs, the command is ")
    assert not db_path.exists()  # preparing opens no database
    assert ok(cli("prepare", embedder="none")).stderr == "hippo: keyword-only memory (--embedder none) needs no model\n"
