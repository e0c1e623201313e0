"""``hippo observe | process | surface | compact`` (seeds 002 and 004) on real SQLite files, with
JSON lists, JSON Lines and Claude Code transcripts, and the MCP-only capture tools."""

from __future__ import annotations

import json

from cli_helpers import as_json, ok

import hippo
from hippo.core.tools.args import TOOL_NAMES
from hippo.core.tools.capture import CAPTURE_TOOL_NAMES, capture_tools
from hippo.integrations.claude_code import load_messages, read_transcript, since_last_compaction, text_only

TALK = [{"role": "user", "id": "m1", "content": "We decided to deploy billing on Fridays only."},
        {"role": "assistant", "id": "m2", "content": "Understood: billing deploys on Fridays."}]


def transcript_lines() -> list[str]:
    """A Claude Code session transcript as it writes one: JSON Lines, a message per content block."""
    entries = [
        {"type": "summary", "summary": "Earlier work", "leafUuid": "x"},
        {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "cc-1",
         "version": "1.0.0", "type": "user", "uuid": "u-1", "timestamp": "2026-11-01T10:00:00.000Z",
         "message": {"role": "user", "content": "We decided to deploy billing on Fridays only."}},
        {"parentUuid": "u-1", "type": "assistant", "uuid": "a-1", "timestamp": "2026-11-01T10:00:02.000Z",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude", "type": "message",
                     "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                 {"type": "text", "text": "Understood: billing deploys on Fridays."}]}},
        {"parentUuid": "a-1", "type": "assistant", "uuid": "a-2", "timestamp": "2026-11-01T10:00:03.000Z",
         "message": {"id": "msg_1", "role": "assistant",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"parentUuid": "a-2", "type": "user", "uuid": "u-2", "timestamp": "2026-11-01T10:00:04.000Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                  "content": "README.md\nsrc"}]}},
        {"type": "user", "isMeta": True, "uuid": "u-3", "message": {"role": "user", "content": "<caveat>"}},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
    ]
    return [json.dumps(e) for e in entries] + ["{not json"]


def test_the_transcript_reader():
    messages = read_transcript(transcript_lines())
    assert [(m["role"], m["id"]) for m in messages] == [("user", "u-1"), ("assistant", "a-1"), ("assistant", "a-2"),
                                                        ("user", "u-2")]
    assert messages[0]["timestamp"] == "2026-11-01T10:00:00.000Z"
    assert [m["id"] for m in text_only(messages)] == ["u-1", "a-1"]
    boundary = json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "b"})
    assert [m["id"] for m in since_last_compaction([*transcript_lines()[:3], boundary, *transcript_lines()[3:]])] \
        == ["a-2", "u-2"]
    assert load_messages("\n".join(transcript_lines())) == messages
    assert load_messages(json.dumps(TALK)) == TALK
    assert load_messages("\n".join(json.dumps(m) for m in TALK)) == TALK


def test_observe_process_surface(cli, tmp_path, db_path):
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps(TALK))
    seen = as_json(cli("observe", talk, "--session", "s-1", "--json"))
    assert (seen["accepted"], seen["duplicates"]) == (2, 0)
    assert "0 already held" not in ok(cli("observe", "-", "--session", "s-1", input=json.dumps(TALK))).stdout
    again = as_json(cli("observe", "-", "--session", "s-1", "--json", input=json.dumps(TALK)))
    assert (again["accepted"], again["duplicates"]) == (0, 2)
    done = as_json(cli("process", "--json"))
    assert done["messages"] == 2 and done["memories"] >= 1
    assert "processed 0 messages" in ok(cli("process")).stderr

    shown = ok(cli("surface", "--session", "s-2", "--prompt", "We decided to deploy billing on Fridays only."))
    assert shown.stdout.startswith("Relevant memories (hippo):") and "Fridays" in shown.stdout
    assert ok(cli("surface", "--session", "s-2", "--prompt", "We decided to deploy billing on Fridays only.")) \
        .stdout == ""  # shown once per session
    found = as_json(cli("surface", "--session", "s-3", talk, "--max-tokens", "200", "--json"))
    assert found["hits"] and found["tokens"] <= 200
    assert cli("surface", "--session", "s-4").exit_code == 1  # neither FILE nor --prompt


def test_observe_a_claude_code_transcript(cli, tmp_path, db_path):
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(transcript_lines()) + "\n")
    seen = as_json(cli("observe", path, "--session", "cc-1", "--json"))
    assert seen["message_ids"] == ["u-1", "a-1"] and seen["skipped"] == 2  # the tool call and its result
    assert as_json(cli("observe", path, "--session", "cc-1", "--json"))["duplicates"] == 2


def test_compact_prints_the_summary_and_stores_with_a_session(cli, tmp_path, db_path):
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(transcript_lines()) + "\n")
    summary = ok(cli("compact", path, db=tmp_path / "never.db")).stdout
    assert summary.startswith("# Session compaction (hippo)") and "## Decisions in force\n- #0 We decided" in summary
    assert not (tmp_path / "never.db").exists()  # without --session nothing is opened
    shown = ok(cli("compact", path, "--show", "0")).stdout  # a summary's #0, whole
    assert shown.strip() == "We decided to deploy billing on Fridays only."
    far = cli("compact", path, "--show", "99")
    assert far.exit_code == 1 and "the session has" in far.stderr
    done = as_json(cli("compact", path, "--session", "cc-1", "--json"))
    ids = [i for entry in done["entries"] for i in entry["memory_ids"]]
    assert ids and all(f"[id:{i}]" in done["summary"] for i in ids)
    with hippo.open(db_path, agent_id="alice", embedder="fake") as mem:
        assert mem.get_memory(ids[0]).source == "compaction"
    assert cli("compact", tmp_path / "missing.json").exit_code == 1
    (tmp_path / "bad.json").write_text('[{"role": "robot", "content": "x"}]')
    bad = cli("compact", tmp_path / "bad.json")
    assert bad.exit_code == 1 and bad.stderr.startswith("error: message 0: role must be")


def test_the_capture_tools_are_mcp_only(tmp_path):
    assert not set(CAPTURE_TOOL_NAMES) & set(TOOL_NAMES)
    with hippo.open(tmp_path / "t.db", agent_id="alice", embedder="fake") as mem:
        tools = {t.name: t for t in capture_tools(mem)}
        seen = tools["observe_messages"].call({"session_id": "s", "messages": TALK})
        assert seen["ok"] and seen["accepted"] == 2
        mem.process_pending()
        found = tools["surface_memories"].call({"session_id": "s2", "messages": TALK[:1]})
        assert found["ok"] and found["ids"] and found["text"].startswith("Relevant memories")
        done = tools["compact_session"].call({"messages": TALK})
        assert done["ok"] and done["summary"].startswith("# Session compaction (hippo)") and done["stats"]["entries"] == 2
        bad = tools["observe_messages"].call({"session_id": "s", "messages": [{"role": "robot", "content": "x"}]})
        assert bad == {"ok": False, "error": {"code": "invalid_input", "message": bad["error"]["message"]}}
