"""Compaction with hippo's own classifier (issue 48): types read by words, decisions in force and
open goals in sections of their own, every line leading back to its message, nothing trivial
stored. The session of the issue's report, in its shape: a coding session of 64 messages with an
explicit decision of the user, short assistant reports holding "ok" inside words, acknowledgements
and tool output."""

from __future__ import annotations

import re

import pytest

import hippo
from hippo.core.compaction.config import CompactionConfig
from hippo.core.compaction.digest import places
from hippo.core.compaction.kinds import kinds, overturned
from hippo.core.messages import read_messages
from hippo.errors import ConfigError

LOG = "\n".join(f"tests/test_limits.py::test_bucket_{n} PASSED [{n * 3}%]" for n in range(30))


def _call(n: int, name: str, arguments: str = "{}") -> dict:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": arguments}}]}


def _result(n: int, text: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": text}


def coding_session() -> list[dict]:
    """64 messages: a rate limiter added to an API, as the issue's report had it."""
    said: list[dict] = [
        {"role": "user", "content": "We need rate limiting on the public API before Acme starts integrating."},
        {"role": "assistant", "content": "Let me look at how requests are authenticated first."},
        _call(1, "read_file", '{"path": "app/auth.py"}'), _result(1, "def get_api_key(header):\n    ..." * 20),
        {"role": "assistant", "content": "Keys arrive in X-API-Key and get_api_key resolves them. Two designs fit: a "
                                         "token bucket (bursty clients get through) or a sliding window (smoother)."},
        {"role": "user", "content": "What's the difference in practice for our partners?"},
        {"role": "assistant", "content": "Partners run bursty nightly syncs: a bucket lets 20 calls through at once, a "
                                         "window spreads them over the minute."},
        {"role": "user", "content": "Decision: token bucket, 100 requests per minute"},
        {"role": "assistant", "content": "Noted: token bucket at 100 requests per minute."},
        {"role": "user", "content": "ok"},
        _call(2, "edit_file", '{"path": "app/ratelimit.py"}'), _result(2, "edited 1 line"),
        {"role": "assistant", "content": "edited 1 line"},
        {"role": "assistant", "content": "Looked at the hook: fixed it in auth.py."},
        {"role": "user", "content": "👍"},
        _call(3, "run_tests"), _result(3, LOG),
        {"role": "assistant", "content": "Running the tests now."},
        {"role": "assistant", "content": "Fixed the broken hook in auth.py."},
        {"role": "user", "content": "Can you check the load test numbers?"},
        _call(4, "bash", '{"cmd": "k6 run load.js"}'), _result(4, "p95=182ms p99=240ms rps=410\n" * 30),
        {"role": "assistant", "content": "The p95 is 182 ms and the p99 240 ms at 410 requests per second."},
        {"role": "user", "content": "thanks!"},
        {"role": "user", "content": "Add a test for the retry path please."},
        _call(5, "edit_file", '{"path": "tests/test_retry.py"}'), _result(5, "created tests/test_retry.py"),
        {"role": "assistant", "content": "Added test_retry_after_429, which checks the Retry-After header."},
        {"role": "user", "content": "sounds good"},
        {"role": "assistant", "content": "Booked the prod deploy for Thursday 10:00 with ops."},
        {"role": "user", "content": "ok commit it"},
        _call(6, "bash", '{"cmd": "git commit"}'), _result(6, "[rate-limit 4e1c9a2] Add token bucket limiter"),
        {"role": "assistant", "content": "Committed as 4e1c9a2 on the rate-limit branch."},
    ]
    n = 7
    while len(said) < 62:  # the rest of the day: checks and their outputs, with acknowledgements between
        said += [_call(n, "run_tests"), _result(n, LOG),
                 {"role": "assistant", "content": f"Suite run {n}: all 30 limiter tests pass."},
                 {"role": "user", "content": "👍" if n % 2 else "ok thanks"}]
        n += 1
    said = said[:62]
    said += [{"role": "user", "content": "Actually, raise the limit to 200 requests per minute, Acme asked."},
             {"role": "assistant", "content": "Done."}]
    return said


@pytest.fixture(scope="module")
def session() -> list[dict]:
    made = coding_session()
    assert len(made) == 64
    return made


def _types(session: list[dict]) -> list[str]:
    return kinds(read_messages(session))


def _section(summary: str, title: str) -> list[str]:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?:\n\n|\Z)", summary, re.M | re.S)
    return found.group(1).split("\n") if found else []


def test_the_users_decision_is_a_decision_and_reports_with_ok_inside_words_are_not_ephemeral(session):
    types = _types(session)
    assert types[7] == "decision"  # "Decision: token bucket, 100 requests per minute"
    for i in (13, 18, 29):  # "Looked at the hook", "Fixed the broken hook", "Booked the prod deploy"
        assert types[i] == "context", session[i]["content"]
    assert types[8] == "ephemeral"  # the assistant's echo of the decision just made
    for i in (9, 14, 23, 28, 30):  # "ok", "👍", "thanks!", "sounds good", "ok commit it"
        assert types[i] == "ephemeral", session[i]["content"]
    assert types[12] == "ephemeral" and types[17] == "ephemeral"  # "edited 1 line", "Running the tests now."
    assert types[24] == "user_intent" and types[19] == "user_intent"  # a request, a question
    assert types[62] == "decision"  # "Actually, raise the limit to 200 ...": a change of course


def test_the_reference_classifier_keeps_the_specifications_rules(session):
    types = kinds(read_messages(session), "reference")
    assert types[7] == "user_intent"  # every user message is an intent there
    assert types[18] == "ephemeral"  # under 50 characters and "ok" inside "broken"


def test_the_summary_lists_decisions_in_force_and_goals_once(session):
    summary = hippo.compact(session).summary
    decisions = _section(summary, "Decisions in force")
    assert [line.split()[1] for line in decisions] == ["#7", "#62"]  # #62 changes the number, not the bucket
    goals = _section(summary, "Goal")
    assert [line.split()[1] for line in goals] == ["#0", "#24"]  # requests for work, not the questions
    shown = re.findall(r"^(?:- |• |### )?#(\d+)\b", summary, re.M)
    assert len(shown) == len(set(shown))  # no message is shown twice
    assert "token bucket at 100" not in summary  # the echo is left out


def test_every_message_is_reachable_from_the_summary(session):
    result = hippo.compact(session)
    pointed = set(map(int, re.findall(r"^(?:- |• |### )?#(\d+)\b", result.summary, re.M)))
    for line in re.findall(r"^(?:\d+ more|left out, acknowledgements and trivia): (.+)$", result.summary, re.M):
        for item in line.split(", "):
            low, _, high = item.partition("-")
            pointed.update(range(int(low[1:]), int((high or low)[1:]) + 1))
    assert pointed == set(range(64))
    assert "hippo compact FILE --show N" in result.summary and "Nothing was stored" in result.summary


def test_no_trivial_memory_is_stored_with_a_session(tmp_path, session):
    with hippo.open(tmp_path / "m.db", embedder="none") as mem:
        result = mem.compact(session, session_id="rate-limit")
        stored = [mem.get_memory(i).content for e in result.entries for i in e.memory_ids]
    assert stored and not {"ok", "👍", "edited 1 line", "Running the tests now.", "ok commit it", "Done."} & set(stored)
    assert all(e.action == "omitted" and not e.memory_ids for e in result.entries if e.type == "ephemeral")
    assert "[id:" in result.summary and "kept in session rate-limit" in result.summary
    assert "Nothing was stored" not in result.summary


def test_a_later_decision_overturns_an_earlier_one_on_the_same_matter_only():
    decisions = ["Decision: rate limit is 100 requests per minute per key.", "We'll use Redis for the counters.",
                 "Actually, raise the limit to 200 requests per minute."]
    assert overturned(decisions) == {0}
    templated = [f"Decision: keep the {part} interface and move the retry logic into a helper."
                 for part in ("auth", "search", "billing")]
    assert overturned(templated) == set()  # the same words, different matters, no change said


def test_places_are_ranges():
    assert places([4, 5, 6, 9, 12, 13]) == "#4-#6, #9, #12-#13"
    assert places([]) == ""


def test_the_classifier_is_a_setting():
    assert CompactionConfig().classifier == "meaning"
    assert CompactionConfig.from_mapping({"classifier": "reference"}).classifier == "reference"
    with pytest.raises(ConfigError, match="classifier must be one of meaning, reference"):
        CompactionConfig(classifier="smart")
