"""Seed 004's compaction, rule by rule (the reference extension's rules, with real word-piece
tokens), the summary checked line by line against the seed's example shape, the configuration
files, the log lines, and a 150k-token session."""

from __future__ import annotations

import json
import logging
import math
import os
import re

import pytest
from support import load_bench

import hippo
from hippo.core.compaction.compact import (
    BASE_IMPORTANCE,
    Scored,
    classify,
    importance,
    retention,
    score,
)
from hippo.core.compaction.config import CompactionConfig, load_compaction_config
from hippo.core.compaction.kinds import REFERENCE_MARKERS as DECISION_MARKERS
from hippo.core.compaction.summary import fixed, index_line, summarize
from hippo.core.messages import read_messages
from hippo.core.tokens import count_tokens
from hippo.errors import ConfigError, InvalidInput

DEFAULT = CompactionConfig()
# The specification's rules and layout, which this file checks rule by rule (hippo's default
# classifier reads meaning: tests/core/test_compaction_meaning.py).
REFERENCE = CompactionConfig(classifier="reference")
SEED_JSON = {
    "decayRates": {"decision": 0.03, "user_intent": 0.05, "context": 0.12, "tool_result": 0.20,
                   "ephemeral": 0.35, "unknown": 0.15},
    "sparseThreshold": 0.25, "compressThreshold": 0.65, "retentionFloor": {"decision": 0.50, "user_intent": 0.35},
    "maxSparseIndexTokens": 2500, "debug": False, "logFile": ".pi/hippocampus.log",
}


def _type(message: dict) -> str:
    return classify(read_messages([message])[0])


def _entry(index: int, type_: str, r: float, text: str, tokens: int = 50, role: str | None = None,
           tool: str | None = None) -> Scored:
    role = role or {"user_intent": "user", "tool_result": "tool"}.get(type_, "assistant")
    preview = text if len(text) <= 120 else text[:120] + "…"
    return Scored(index, type_, role, 0.5, r, tokens, preview, text, tool)


# --- classification ---------------------------------------------------------------------------

@pytest.mark.parametrize("message", [
    {"role": "tool", "tool_call_id": "c1", "content": "Tool execution result"},
    {"role": "toolResult", "toolName": "exec", "content": [{"type": "text", "text": "done"}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42 rows"}]},
])
def test_tool_results_in_every_shape_are_tool_results(message):
    assert _type(message) == "tool_result"


@pytest.mark.parametrize("text", ["heartbeat", "HEARTBEAT_OK", "/status check", "NO_REPLY please"])
def test_a_users_heartbeat_or_status_check_is_ephemeral(text):
    assert _type({"role": "user", "content": text}) == "ephemeral"


def test_a_user_message_is_an_intent():
    assert _type({"role": "user", "content": "Please help me with this task"}) == "user_intent"


@pytest.mark.parametrize("text", ["ok", "no_reply", "OK, done.", "Looks fine, I took a look"])
def test_a_short_assistant_acknowledgement_is_ephemeral(text):
    assert len(text) < 50 and _type({"role": "assistant", "content": text}) == "ephemeral"


def test_a_long_assistant_message_with_ok_in_it_is_not_ephemeral():
    text = "ok, here is a longer answer that explains the whole thing to the user in detail"
    assert len(text) >= 50 and _type({"role": "assistant", "content": text}) == "context"


@pytest.mark.parametrize("marker", DECISION_MARKERS)
def test_each_decision_marker_makes_a_decision(marker):
    text = f"After reading the logs, here is where we stand: {marker} for the next steps of the migration."
    assert _type({"role": "assistant", "content": text}) == "decision"


def test_assistant_context_tool_calls_and_unknown_roles():
    assert _type({"role": "assistant", "content": "This is a regular response explaining something to you."}) \
        == "context"
    assert _type({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "search", "input": {}}]}) \
        == "context"
    assert _type({"role": "system", "content": "System message"}) == "unknown"


def test_tool_names_come_from_the_call_a_result_answers():
    read = read_messages([
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"p": 1}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "file text"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "exec", "input": {"cmd": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "a.txt"}]},
        {"role": "tool", "tool_call_id": "orphan", "content": "x"},
        {"role": "toolResult", "toolName": "browser", "content": [{"type": "text", "text": "page"}]},
    ])
    assert read[0].calls == ('read({"p": 1})',) and read[2].calls == ('exec({"cmd":"ls"})',)
    assert [m.tool for m in read[1::2]] == ["read", "exec", "browser"] and read[4].tool == "orphan"
    assert read[3].text == "a.txt" and read[5].text == "page"


# --- importance -------------------------------------------------------------------------------

def test_base_importance_by_type():
    assert BASE_IMPORTANCE == {"decision": 0.90, "user_intent": 0.80, "context": 0.50, "tool_result": 0.30,
                               "ephemeral": 0.10, "unknown": 0.40}


def test_the_last_five_messages_get_the_recency_bonus():
    scored = score(read_messages([{"role": "user", "content": f"Message {i}"} for i in range(10)]), REFERENCE)
    assert [round(e.importance, 2) for e in scored] == [0.80] * 5 + [0.95] * 5


def _words(tokens: int) -> str:
    text = "alpha " * tokens
    assert count_tokens([text]) == [tokens]  # one word piece a word: the thresholds are real tokens
    return text


@pytest.mark.parametrize(("tokens", "expected"), [(10_000, 0.45), (10_001, 0.30), (30_000, 0.30), (30_001, 0.20)])
def test_size_penalties_over_10k_and_30k_real_tokens(tokens, expected):
    (entry,) = score(read_messages([{"role": "tool", "content": _words(tokens)}]), REFERENCE)
    assert entry.tokens == tokens and entry.importance == pytest.approx(expected)  # 0.30 + 0.15 recent - penalties


def test_the_clamps_of_each_modifier():
    assert importance("ephemeral", 9, 40_000, False) == pytest.approx(0.1)  # max(0.1, ...) twice
    assert importance("decision", 0, 10, True) == 1.0  # min(1.0, ...)
    assert importance("user_intent", 0, 10, True) == 1.0
    assert importance("context", 5, 10, False) == 0.5  # age 5 is not among the last five


def _with_filler(first: str, last: str) -> list[dict]:
    filler = [{"role": "assistant", "content": f"Working through step {n} of the rollout checklist now."}
              for n in range(6)]
    return [{"role": "user", "content": first}, *filler, {"role": "assistant", "content": last}]


def test_a_message_referred_to_later_gets_the_reference_bonus():
    first = "Deploy the billing service on Friday after the QA sign-off, never on Monday"
    needle = first[:30]
    hit = score(read_messages(_with_filler(first, f"As you said: {needle}...")), REFERENCE)[0]
    short = score(read_messages(_with_filler(first, f"As you said: {needle[:29]}")), REFERENCE)[0]
    assert hit.importance == pytest.approx(1.0) and short.importance == pytest.approx(0.8)


def test_a_short_message_is_referred_to_by_its_whole_text_and_an_empty_one_never():
    found = score(read_messages(_with_filler("use uv", "we use uv now")), REFERENCE)[0]
    assert found.importance == pytest.approx(1.0)
    calls = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}]
    empty = score(read_messages(calls + _with_filler("x", "y")), REFERENCE)[0]
    assert empty.importance == pytest.approx(0.5)  # nothing to refer to (the reference's "" matched everything)


# --- decay ------------------------------------------------------------------------------------

def test_retention_is_importance_decayed_by_the_type_rate_over_age():
    flat = CompactionConfig(retention_floor={})
    for type_, rate in DEFAULT.decay_rates.items():
        assert retention(0.6, 7, type_, flat) == pytest.approx(0.6 * math.exp(-rate * 7))
    assert retention(1.0, 0, "context", DEFAULT) == 1.0
    assert retention(0.0, 5, "context", DEFAULT) == 0.0


def test_the_floors_anchor_decisions_and_intents():
    assert retention(0.9, 100, "decision", DEFAULT) == 0.50
    assert retention(0.8, 100, "user_intent", DEFAULT) == 0.35
    assert retention(0.5, 100, "context", DEFAULT) < 0.01


def test_decisions_decay_over_six_times_slower_than_tool_outputs():
    flat = CompactionConfig(retention_floor={})
    at = 20
    decision_rate = -math.log(retention(1.0, at, "decision", flat)) / at
    tool_rate = -math.log(retention(1.0, at, "tool_result", flat)) / at
    assert tool_rate / decision_rate >= 6
    for age in range(200):  # at every age, a decision keeps more than a tool output
        assert retention(0.9, age, "decision", DEFAULT) > retention(0.3, age, "tool_result", DEFAULT)


# --- thresholds, the sparse index cap --------------------------------------------------------

@pytest.mark.parametrize(("r", "action"), [(0.65, "kept"), (0.6499, "compressed"), (0.25, "compressed"),
                                           (0.2499, "pointer")])
def test_both_thresholds(r, action):
    result = summarize([_entry(0, "context", r, "An entry at the edge")], REFERENCE)
    assert result.entries[0].action == action


def test_the_sparse_index_stops_at_its_token_cap_and_counts_the_dropped():
    entries = [_entry(i, "tool_result", 0.1, f"Tool result {i} with some output", tool="exec") for i in range(20)]
    per_line = count_tokens([index_line(entries[0])])[0]
    cap = per_line * 3 + 1
    result = summarize(entries, CompactionConfig(max_sparse_index_tokens=cap, classifier="reference"))
    actions = [e.action for e in result.entries]
    assert actions.count("pointer") == 3 and actions.count("dropped") == 17
    assert result.stats.sparse_index_tokens <= cap and result.stats.dropped == 17
    assert "<!-- entries: 20 | sparse: 3 | compressed: 0 | kept: 0 | dropped: 17 -->" in result.summary
    assert "\n\n<!-- 17 additional entries dropped (sparse index full) -->\n" in result.summary


def test_a_zero_cap_drops_every_pointer_and_the_section():
    result = summarize([_entry(0, "ephemeral", 0.05, "HEARTBEAT_OK")], CompactionConfig(max_sparse_index_tokens=0, classifier="reference"))
    assert result.stats.dropped == 1 and "## Sparse Index" not in result.summary


# --- the summary, line by line ----------------------------------------------------------------

def test_the_summary_has_the_seeds_layout_line_by_line():
    entries = [
        _entry(0, "user_intent", 0.45, "Build a React app with TypeScript"),
        _entry(1, "decision", 0.90, "I will use Vite as the build tool"),
        _entry(2, "tool_result", 0.38, "File content preview", 1200, tool="read"),
        _entry(3, "tool_result", 0.10, "Command output", 5000, tool="exec"),
        _entry(4, "context", 0.12, "Response preview"),
    ]
    result = summarize(entries, REFERENCE, previous_summary="Earlier: the user wants a dashboard.")
    lines = ['[TOOL:exec] 5000tok → "Command output"', "[ASSISTANT] Response preview"]
    compressed = ['[USER] "Build a React app with TypeScript"', '[TOOL:read] 1200tok → "File content preview"']
    after = sum(count_tokens(lines + compressed)) + 50
    assert result.summary.split("\n") == [
        "# Session compaction (hippo)",
        '<!-- decay_λ={"decision":0.03,"user_intent":0.05,"context":0.12,"tool_result":0.2,"ephemeral":0.35,'
        '"unknown":0.15} sparse_threshold=0.25 compress_threshold=0.65 -->',
        "<!-- entries: 5 | sparse: 2 | compressed: 2 | kept: 1 | dropped: 0 -->",
        "",
        "## Goal",
        "- Build a React app with TypeScript",
        "",
        "## Prior Context",
        "Earlier: the user wants a dashboard.",
        "",
        "## Active Context (high retention)",
        "### [decision] (r=0.90)",
        "I will use Vite as the build tool",
        "",
        "## Compressed (mid retention — re-fetch if needed)",
        '• (r=0.45) [USER] "Build a React app with TypeScript"',
        '• (r=0.38) [TOOL:read] 1200tok → "File content preview"',
        "",
        "## Sparse Index (decayed — pointers only)",
        *lines,
        "",
        f"<!-- hippo compaction stats: 6350tok → {after}tok ({fixed(6350 / after, 1)}× compression) -->",
    ]
    assert (result.stats.tokens_before, result.stats.tokens_after) == (6350, after)


def test_index_lines_by_type_with_their_lengths():
    long = "x" * 200
    assert index_line(_entry(0, "tool_result", 0.1, long, 10)) == f'[TOOL:unknown_tool] 10tok → "{"x" * 80}"'
    assert index_line(_entry(0, "user_intent", 0.1, long)) == f'[USER] "{"x" * 100}"'
    assert index_line(_entry(0, "decision", 0.1, long)) == f'[DECISION] "{"x" * 100}"'
    assert index_line(_entry(0, "ephemeral", 0.1, long)) == f"[EPHEMERAL] {'x' * 40}"
    assert index_line(_entry(0, "unknown", 0.1, long, role="system")) == f"[SYSTEM] {'x' * 80}"
    assert index_line(_entry(0, "context", 0.1, "two\nlines"), ["01A", "01B"]) == "[ASSISTANT] two lines [id:01A,01B]"


def test_goals_are_the_intents_still_above_the_sparse_threshold():
    entries = [_entry(0, "user_intent", 0.8, "Build a React application"),
               _entry(1, "user_intent", 0.7, "Make it responsive\nand accessible"),
               _entry(2, "user_intent", 0.2, "This goal should not appear"),
               _entry(3, "user_intent", 0.9, "ten chars!")]
    summary = summarize(entries, REFERENCE).summary
    goal = summary[summary.index("## Goal"):summary.index("## Active")]
    assert goal == "## Goal\n- Build a React application\n- Make it responsive and accessible\n\n"


def test_kept_entries_show_500_characters_and_numbers_print_as_javascript_does():
    result = summarize([_entry(0, "context", 0.7, "y" * 600, 300)], REFERENCE)
    assert f"### [context] (r=0.70)\n{'y' * 500}…\n" in result.summary
    assert fixed(0.125, 2) == "0.13" and fixed(2.25, 1) == "2.3"  # toFixed rounds half up
    empty = hippo.compact([], REFERENCE)
    assert empty.summary.endswith("<!-- hippo compaction stats: 0tok → 0tok (∞× compression) -->")
    assert empty.stats.ratio is None and "entries: 0" in empty.summary


def test_compact_reads_openai_and_anthropic_sessions_alike():
    openai = [{"role": "user", "content": "List the files please, I need the full listing"},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "exec", "arguments": '{"cmd":"ls"}'}}]},
              {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"}]
    anthropic = [openai[0],
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "exec",
                                                    "input": {"cmd": "ls"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a.txt\nb.txt"}]}]
    one, two = hippo.compact(openai, REFERENCE), hippo.compact(anthropic, REFERENCE)
    assert [e.type for e in one.entries] == [e.type for e in two.entries] == ["user_intent", "context", "tool_result"]
    assert one.summary == two.summary
    assert re.search(r'^• \(r=0\.45\) \[TOOL:exec\] \d+tok → "a\.txt b\.txt"$', one.summary, re.M)
    assert re.search(r'^• \(r=0\.58\) \[ASSISTANT\] exec\(\{"cmd":"ls"\}\)$', one.summary, re.M)
    with pytest.raises(InvalidInput):
        hippo.compact([{"role": "robot", "content": "x"}], REFERENCE)


# --- configuration ----------------------------------------------------------------------------

def test_the_seeds_json_is_read_as_is(tmp_path):
    path = tmp_path / "hippocampus.config.json"
    path.write_text(json.dumps(SEED_JSON), encoding="utf-8")
    config = CompactionConfig.from_file(path)
    assert config == CompactionConfig(log_file=str(tmp_path / ".pi/hippocampus.log"))
    path.write_text(json.dumps({"sparseThreshold": 0.3, "debug": True, "decayRates": {"decision": 0.02},
                                "retentionFloor": {"user_intent": 0.4}}), encoding="utf-8")
    merged = CompactionConfig.from_file(path)
    assert merged.sparse_threshold == 0.3 and merged.debug and merged.compress_threshold == 0.65
    assert merged.decay_rates == {**DEFAULT.decay_rates, "decision": 0.02}
    assert merged.retention_floor == {"decision": 0.5, "user_intent": 0.4} and merged.log_file is None


@pytest.mark.parametrize("values", [
    {"sparseThreshold": 1.5}, {"compressThreshold": -0.1}, {"sparseThreshold": 0.7, "compressThreshold": 0.6},
    {"decayRates": {"decision": -1}}, {"decayRates": {"memo": 0.1}}, {"decayRates": 0.1},
    {"retentionFloor": {"decision": 2}}, {"maxSparseIndexTokens": 2.5}, {"maxSparseIndexTokens": -1},
    {"debug": "yes"}, {"logFile": ""}, {"sparse": 0.2}, {"decayRates": {"decision": float("nan")}},
])
def test_values_that_cannot_work_are_config_errors(values):
    with pytest.raises(ConfigError):
        CompactionConfig.from_mapping(values)


def test_an_unreadable_json_file_is_a_config_error(tmp_path):
    path = tmp_path / "hippocampus.config.json"
    path.write_text("invalid json {", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read compaction config"):
        CompactionConfig.from_file(path)
    with pytest.raises(ConfigError):
        CompactionConfig.from_file(tmp_path / "missing.json")


def test_hippo_toml_compaction_section(tmp_path, monkeypatch):
    toml = tmp_path / "hippo.toml"
    toml.write_text('db = "x.db"\n[compaction]\nsparse_threshold = 0.2\nmaxSparseIndexTokens = 900\n'
                    '[compaction.decay_rates]\ntool_result = 0.4\n', encoding="utf-8")
    config = load_compaction_config(toml)
    assert (config.sparse_threshold, config.max_sparse_index_tokens, config.decay_rates["tool_result"]) == \
        (0.2, 900, 0.4)
    assert config.decay_rates["decision"] == 0.03
    assert load_compaction_config() == DEFAULT  # HIPPO_CONFIG names no file here
    monkeypatch.setenv("HIPPO_CONFIG", str(toml))
    session = [{"role": "tool", "content": "out"}] + [{"role": "user", "content": f"m {i}"} for i in range(8)]
    assert hippo.compact(session).entries[0].action == "pointer"  # r = 0.3 e^-3.2: a pointer either way
    assert hippo.compact(session).stats.summary_tokens > 0
    toml.write_text("[compaction]\nsparse_threshold = 'high'\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        hippo.compact(session)


# --- logging ----------------------------------------------------------------------------------

def test_the_seeds_log_lines_go_to_the_logger_and_the_log_file(tmp_path, caplog):
    log_file = tmp_path / "hippocampus.log"
    session = [{"role": "user", "content": f"Message number {i}"} for i in range(12)]
    with caplog.at_level(logging.INFO, logger="hippo.compaction"):
        result = hippo.compact(session, CompactionConfig(log_file=str(log_file), classifier="reference"))
    messages = [r.getMessage() for r in caplog.records if r.name == "hippo.compaction"]
    stats = result.stats
    assert (stats.sparse, stats.compressed, stats.kept) == (0, 7, 5)
    assert messages == [
        f'🔬 Compaction triggered {{"messages":12,"tokensBefore":{stats.tokens_before}}}',
        f'📊 Scoring complete {{"total":12,"sparse":0,"compressed":7,"kept":5,"totalTokens":{stats.tokens_before}}}',
        f'📝 Summary built {{"summaryTokens":{stats.summary_tokens},'
        f'"compressionRatio":"{fixed(stats.tokens_before / stats.summary_tokens, 1)}"}}',
    ]
    written = log_file.read_text(encoding="utf-8").splitlines()
    assert len(written) == 3
    assert all(re.fullmatch(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] \[hippo compaction\] .+", line)
               for line in written)
    assert written[0].endswith(messages[0])


@pytest.mark.parametrize("values", [{"logFile": "x.log"}, {"log_file": "x.log"}, {"debug": True},
                                    {"sparseThreshold": 0.2, "logFile": "/tmp/x.log"}, {"sparse": 0.2},
                                    {"sparseThreshold": 10**400}, {"decayRates": {"decision": -(10**400)}}])
def test_a_calls_settings_never_name_a_file_and_are_checked(tmp_path, monkeypatch, values):
    monkeypatch.chdir(tmp_path)
    session = [{"role": "user", "content": f"Message number {i}"} for i in range(3)]
    with pytest.raises(InvalidInput):
        hippo.compact(session, values)
    assert list(tmp_path.iterdir()) == []


def test_a_calls_numbers_go_over_the_operators_settings_and_log_file(tmp_path, monkeypatch):
    (tmp_path / "hippo.toml").write_text('[compaction]\nlog_file = "ops.log"\nsparse_threshold = 0.1\n',
                                         encoding="utf-8")
    monkeypatch.setenv("HIPPO_CONFIG", str(tmp_path / "hippo.toml"))
    session = [{"role": "user", "content": f"Message number {i}"} for i in range(12)]
    result = hippo.compact(session, {"compressThreshold": 0.99, "decayRates": {"user_intent": 0.5}})
    assert result.stats.kept == 0  # the call's threshold: nothing reaches 0.99
    assert len((tmp_path / "ops.log").read_text(encoding="utf-8").splitlines()) == 3  # the operator's file


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_as_the_log_file_never_holds_compaction_up(tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    session = [{"role": "user", "content": f"Message number {i}"} for i in range(3)]
    assert hippo.compact(session, CompactionConfig(log_file=str(fifo), classifier="reference")).stats.kept == 3


def test_loading_a_config_file_logs_the_loaded_line(tmp_path, caplog):
    path = tmp_path / "hippocampus.config.json"
    path.write_text("{}", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="hippo.compaction"):
        CompactionConfig.from_file(path)
    assert caplog.records[-1].getMessage().startswith("🧠 compaction settings loaded")


# --- a 150k-token session ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_session() -> list[dict]:
    return load_bench("compaction_session").session(150_000)


def test_a_150k_token_session(long_session):
    result = hippo.compact(long_session, REFERENCE)
    stats = result.stats
    assert stats.tokens_before >= 150_000 and stats.entries == len(long_session)
    assert stats.sparse_index_tokens <= DEFAULT.max_sparse_index_tokens and stats.dropped > 0
    assert stats.ratio is not None and stats.ratio > 10 and stats.summary_tokens < stats.tokens_before / 10
    sparse = result.summary.split("## Sparse Index (decayed — pointers only)\n")[1].split("\n\n")[0].split("\n")
    assert len(sparse) == stats.sparse and sum(count_tokens(sparse)) == stats.sparse_index_tokens


def test_the_goal_lines_are_the_users_intents(long_session):
    result = hippo.compact(long_session, REFERENCE)
    goals = result.summary.split("## Goal\n")[1].split("\n\n")[0].split("\n")
    asks = [m["content"] for m in long_session if m["role"] == "user" and m["content"] != "HEARTBEAT"]
    assert len(goals) == len(asks)  # every intent stays above the sparse threshold (its floor is 0.35)
    for goal, ask in zip(goals, asks):
        assert goal == "- " + (ask if len(ask) <= 120 else ask[:120] + "…")


def test_decisions_outlive_tool_outputs_of_the_same_age(long_session):
    result = hippo.compact(long_session, REFERENCE)
    total = len(result.entries)
    decisions = [e for e in result.entries if e.type == "decision"]
    tools = [e for e in result.entries if e.type == "tool_result"]
    assert decisions and tools
    assert all(e.action in ("kept", "compressed") for e in decisions)
    assert all(e.action in ("pointer", "dropped") for e in tools if total - 1 - e.index > 5)
    for decision in decisions:  # against every tool output at most two messages younger
        age = total - 1 - decision.index
        rivals = [t for t in tools if age - 2 <= total - 1 - t.index <= age]
        assert all(decision.retention > t.retention for t in rivals)
