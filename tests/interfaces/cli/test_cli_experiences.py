"""`hippo experience record | recall | short-term | related` and `hippo consolidate` (seed 001)."""

from __future__ import annotations

import pytest
from cli_helpers import as_json, ok


@pytest.fixture
def durable(monkeypatch):
    """The buffer in the database, so that it outlives each command (the CLI's process)."""
    monkeypatch.setenv("HIPPO_SHORT_TERM_DURABLE", "true")


def test_a_session_as_typed(cli, durable):
    seen = ok(cli("experience", "record", "observation", "The staging queue is backing up", "--context",
                  '{"roomId": "ops", "userId": "u-7"}', "--tag", "queue", "--tag", "staging"))
    assert "observation, importance 0.4, short-term" in seen.stdout and "in this process" not in seen.stdout
    decided = as_json(cli("experience", "record", "decision", "We doubled the staging workers", "--context",
                          '{"roomId": "ops", "taskId": "T-12"}', "--json"))
    assert (decided["tier"], decided["importance"], decided["context"]["taskId"]) == ("long_term", 0.8, "T-12")
    chat = as_json(cli("experience", "record", "chat", "-", "--importance", "0.65", "--json",
                       input="The user asked whether the queue recovered\n"))
    assert (chat["tier"], chat["importance"]) == ("short_term", 0.65)

    short = as_json(cli("experience", "short-term", "--json"))["items"]
    assert [e["content"] for e in short] == ["The user asked whether the queue recovered",
                                             "The staging queue is backing up"]
    assert short[1]["tags"] == ["queue", "staging"] and short[1]["durable"] is True
    table = ok(cli("experience", "short-term")).stdout
    assert "2 experiences" in table and "The staging queue is backing up" in table

    by_query = as_json(cli("experience", "recall", "--query", "staging workers", "--json"))["items"]
    assert by_query[0]["content"] == "We doubled the staging workers" and by_query[0]["relevance"] > 0
    assert "score" in ok(cli("experience", "recall", "-q", "staging workers")).stdout
    typed = as_json(cli("experience", "recall", "--type", "decision", "--type", "chat", "--json"))["items"]
    assert [e["type"] for e in typed] == ["chat", "decision"]
    assert [e["type"] for e in as_json(cli("experience", "recall", "--tag", "queue", "--json"))["items"]] == \
        ["observation"]
    assert [e["type"] for e in as_json(cli("experience", "recall", "--min-importance", "0.7", "--json"))["items"]] \
        == ["decision"]
    assert as_json(cli("experience", "recall", "--since", "1d", "--limit", "1", "--json"))["items"][0]["type"] == "chat"

    in_ops = as_json(cli("experience", "related", "--room", "ops", "--json"))["items"]
    assert {e["type"] for e in in_ops} == {"observation", "decision"}
    assert [e["type"] for e in as_json(cli("experience", "related", "--room", "ops", "--task", "T-12",
                                           "--json"))["items"]] == ["decision"]
    shown = ok(cli("experience", "related", "--user", "u-7", "--room", "ops")).stdout
    assert "1 experience" in shown and "The staging queue is backing up" in shown

    done = as_json(cli("consolidate", "--json"))
    assert (done["considered"], done["consolidated"], done["remaining"]) == (2, 1, 1)
    said = ok(cli("consolidate"))
    assert "considered 1: consolidated 0" in said.stderr
    assert [e["type"] for e in as_json(cli("experience", "short-term", "--json"))["items"]] == ["observation"]
    assert as_json(cli("experience", "short-term", "--json", agent="bob")) == {"items": []}  # agents never mix


def test_without_durability_the_buffer_lives_as_long_as_the_command(cli):
    kept = ok(cli("experience", "record", "chat", "The user prefers dark mode"))
    assert "chat, importance 0.6, short-term (in this process" in kept.stdout
    ok(cli("experience", "record", "observation", "The office is cold today"))  # 0.4: not worth keeping
    assert as_json(cli("experience", "short-term", "--json")) == {"items": []}
    recalled = as_json(cli("experience", "recall", "--json"))["items"]  # consolidated as the first command ended
    assert [(e["content"], e["tier"]) for e in recalled] == [("The user prefers dark mode", "long_term")]


def test_problems_are_one_line_and_exit_1(cli, runner, tmp_path):
    from hippo.interfaces.cli import app

    for args, message in [
        (("experience", "record", "dream", "x"), "unknown experience type 'dream'"),
        (("experience", "record", "chat", "x", "--context", "{not json"), "--context"),
        (("experience", "record", "chat", "x", "--context", "[1, 2]"), "context must be a JSON object"),
        (("experience", "record", "chat", "x", "--importance", "3"), "importance"),
        (("experience", "recall", "--type", "dream"), "unknown experience type"),
        (("experience", "related",), "needs user_id, room_id or task_id"),
    ]:
        ok(cli("store", "something to make the database"))
        result = cli(*args)
        assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    missing = runner.invoke(app, ["--db", str(tmp_path / "none.db"), "--embedder", "fake", "experience",
                                  "short-term"])
    assert missing.exit_code == 1 and "no database" in missing.stderr
    assert not (tmp_path / "none.db").exists()
    assert cli("experience", "record", "chat").exit_code == 2  # a missing argument is a usage error
