"""Compaction's two additions to the reference rules (issue 36): a message that only acknowledges is
ephemeral, and a shortened text keeps whole sentences (the compressed section cut a session's key
decision mid-sentence); and its output speaks in hippo's own names. The reference rules themselves
stay as tests/core/test_compaction_rules.py pins them."""

from __future__ import annotations

import logging
import re

import pytest

import hippo
from hippo.core.compaction.compact import classify
from hippo.core.compaction.config import CompactionConfig
from hippo.core.compaction.summary import COMPRESSED_CHARS, KEPT_CHARS
from hippo.core.compaction.wording import is_acknowledgement, sentence_ends, shortened
from hippo.core.messages import read_messages

ACKS = ["yes please", "Yes please!", "ok", "OK.", "okay", "thanks", "Thank you so much!", "sure", "Sure, go ahead.",
        "sounds good", "Sounds good, thanks!", "👍", "👍👍", "ok, thanks 🙏", "Got it.", "lgtm", "You're welcome!",
        "Will do.", "спасибо"]
NOT_ACKS = ["Yes please, and add tests for the parser too", "Thanks, but use Postgres instead of MySQL",
            "ok?", "42", "Sure, ship it on Friday after the QA sign-off", "no", "Please deploy the billing service",
            "Use port 5433"]


def _type(role: str, text: str) -> str:
    return classify(read_messages([{"role": role, "content": text}])[0])


@pytest.mark.parametrize("text", ACKS)
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_an_acknowledgement_is_ephemeral_from_either_side(role, text):
    assert is_acknowledgement(text) and _type(role, text) == "ephemeral"


@pytest.mark.parametrize("text", NOT_ACKS)
def test_a_reply_with_substance_stays_an_intent(text):
    assert not is_acknowledgement(text) and _type("user", text) == "user_intent"


def test_the_reference_rules_come_first():
    assert _type("user", "HEARTBEAT") == "ephemeral"
    assert _type("assistant", "Looks fine, I took a look") == "ephemeral"  # "ok" inside, under 50
    assert _type("assistant", "I decided to split the export into two jobs, as planned.") == "decision"
    assert _type("assistant", "Understood, Fridays only.") == "context"  # it says what was understood
    assert _type("tool", "ok") == "tool_result"
    assert _type("system", "thanks") == "unknown"


def test_yes_please_fades_where_it_was_kept_as_an_intent():
    """The session of the report: "yes please" answered a proposal and was kept at 0.78."""
    session = [{"role": "user", "content": "The nightly export is too slow, can you look at it?"},
               {"role": "assistant", "content": "I could move the export to a queue worker. Shall I?"},
               {"role": "user", "content": "yes please"},
               *[{"role": "assistant", "content": f"Step {n} of the queue migration is done and tested."}
                 for n in range(4)]]
    entry = hippo.compact(session, CompactionConfig()).entries[2]
    assert entry.type == "ephemeral" and entry.retention < 0.25 and entry.action == "omitted"
    assert entry.importance == pytest.approx(0.25)  # 0.10 and the recency bonus, where an intent had 0.95


# -- whole sentences -------------------------------------------------------------------------------

DECISION = ("Decision: we keep PostgreSQL for the billing service and move the nightly export to a queue "
            "worker, because the export locks the invoices table for minutes. I will write the migration "
            "first. Then the worker, with its retries. Last, the dashboard for the queue's depth and age.")


def _compressed(summary: str) -> list[str]:
    return summary.split("## Compressed (mid retention — re-fetch if needed)\n")[1].split("\n\n")[0].split("\n")


def test_the_key_decision_is_compressed_in_whole_sentences():
    session = [{"role": "user", "content": "Find out why the nightly export is slow and fix it."},
               {"role": "assistant", "content": DECISION},
               *[{"role": "assistant", "content": f"Working through step {n} of the migration now."}
                 for n in range(15)]]
    # the reference layout compresses a decision; hippo's lists it under Decisions in force
    result = hippo.compact(session, CompactionConfig(classifier="reference"))
    assert result.entries[1].type == "decision" and result.entries[1].action == "compressed"
    (line,) = [line for line in _compressed(result.summary) if "[DECISION]" in line]
    shown = re.fullmatch(r'• \(r=0\.\d\d\) \[DECISION\] "(.+)"', line).group(1)
    assert shown == DECISION[:DECISION.index("first.") + len("first.")] + " …"  # two whole sentences fit
    assert len(DECISION) > COMPRESSED_CHARS and len(shown) > 100  # the reference showed 100 characters
    contents = [m["content"] for m in session]
    for other in _compressed(result.summary):  # every compressed line: a whole message, or whole sentences
        text = re.sub(r'^• \(r=[\d.]+\) \[[A-Z]+\] "?|"$', "", other)
        assert text in contents or (text.endswith(". …") and any(c.startswith(text[:-2]) for c in contents)), other


def test_shortened_keeps_the_sentences_that_fit():
    text = "One short sentence. A second one! A third? And a fourth that runs on for a while longer."
    assert shortened(text, 200, longest_sentence=500) == text
    assert shortened(text, 40, longest_sentence=500) == "One short sentence. A second one! …"
    assert shortened(text, 10, longest_sentence=500) == "One short sentence. …"  # the first, whole
    assert shortened("line one\nline two\nline three", 18, longest_sentence=500) == "line one\nline two …"


def test_abbreviations_and_numbers_do_not_end_a_sentence():
    text = "Use e.g. the v2.1 API, as Dr. Chen said. Then stop."
    assert [text[:end] for end in sentence_ends(text)] == ["Use e.g. the v2.1 API, as Dr. Chen said.", text]
    assert sentence_ends("决定了。明天上线。") == [4, 9]


def test_text_without_a_sentence_end_ends_at_a_word():
    log = "worker " * 200
    assert shortened(log, 40, longest_sentence=500) == ("worker " * 5).strip() + "…"
    assert shortened("y" * 600, KEPT_CHARS, longest_sentence=KEPT_CHARS) == "y" * 500 + "…"  # the reference's cut
    huge = "a" + " long clause" * 60 + ". Then more."
    assert shortened(huge, 100, longest_sentence=500).endswith("…") and len(shortened(huge, 100,
                                                                                      longest_sentence=500)) <= 101


def test_kept_entries_keep_whole_sentences_within_500_characters():
    long = " ".join(f"Sentence number {n} explains one more part of the design." for n in range(20))
    result = hippo.compact([{"role": "assistant", "content": long}], CompactionConfig())
    body = result.summary.split("### #0 [context] (r=0.65)\n")[1].split("\n\n")[0]
    assert len(body) <= KEPT_CHARS + 2 and body.endswith("of the design. …") and long.startswith(body[:-2])


# -- hippo's own names -----------------------------------------------------------------------------

def test_the_output_names_no_internal_document(tmp_path, caplog, capsys):
    config_file = tmp_path / "hippocampus.config.json"  # the reference's file is still read as it is
    config_file.write_text('{"debug": true, "logFile": "compaction.log"}', encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="hippo.compaction"):
        config = CompactionConfig.from_file(config_file)
        result = hippo.compact([{"role": "user", "content": "Deploy on Fridays only."},
                                {"role": "assistant", "content": "ok"}], config)
    written = (tmp_path / "compaction.log").read_text(encoding="utf-8")
    shown = "\n".join([result.summary, written, capsys.readouterr().err, *(r.getMessage() for r in caplog.records)])
    shown = shown.replace(str(config_file), "<the operator's file>")  # its name is the operator's to choose
    assert result.summary.startswith("# Session compaction (hippo)\n")
    assert re.search(r"<!-- hippo compaction stats: \d+tok → \d+tok", result.summary)
    assert all(" [hippo compaction] " in line for line in written.splitlines()) and written.count("\n") == 3
    assert not re.search(r"hippocampus|seed 0", shown, re.I), shown
