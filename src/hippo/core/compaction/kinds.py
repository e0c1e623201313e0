"""What each message of a session is: a decision, the user's intent, context, a tool's result or
ephemeral, read as a careful person reads it.

Two classifiers. ``reference`` is the original rules of the compaction extension hippo replaces,
as they were written (substring markers: an assistant message under 50 characters holding "ok" anywhere is ephemeral,
one holding "plan" anywhere a decision, every user message an intent), kept for anyone who needs
that exact output. ``meaning``, the default, reads words and sentences, and the message before
(the words themselves are :mod:`hippo.core.compaction.cues`'):

- a tool's output is a tool result;
- ephemeral, from either side: a message that only acknowledges, reacts, greets or thanks ("ok,
  thanks", "👍", "vale, gracias"), an acknowledgement followed by a go-ahead or a few words of no
  substance ("ok commit it"); from the assistant also a short report of progress ("Running the
  tests now.", "edited 1 line"), a message that only asks, and its echo of the decision just made
  ("Noted: token bucket it is.");
- a decision: a sentence, not a question, that settles a choice ("Decision:", "let's go with",
  "we'll use", "X it is", "B. Do it."), in English, Spanish, German, French and Russian; a change
  of course opening a user's message ("Actually, raise the limit to 200"); a user's short reply
  to an assistant message that offered a choice or recommended one ("To the card."); the
  assistant choosing one thing over another ("I'll write it as a command rather than a
  migration");
- the user's intent: a request or a question; what the user only states is context;
- anything else the assistant says is context.

Also here: which decisions a later one overturns (:func:`overturned`), whether a message is
worth keeping at all (:func:`worth_keeping`, :func:`trivial`), which capture reads too, and a
message as compaction scored it (:class:`Scored`), which the summary and its digest read. Pure: no
store, no clock, no model.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from hippo.core.compaction import cues
from hippo.core.compaction.wording import is_acknowledgement
from hippo.core.facts import offline
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.messages import ChatMessage

__all__ = ["Scored", "classify_reference", "kinds", "open_goal", "overturned", "substance", "trivial", "worth_keeping"]


@dataclass(frozen=True, slots=True)
class Scored:
    """One message scored: its place, type, importance after the modifiers, retention after decay,
    real token count, its 120-character preview (of the tools called when there is no text),
    the full text a memory would keep, and the text the summary shows (the message's words, or the
    tools called when it has none; ``content`` when not given)."""

    index: int
    type: str
    role: str
    importance: float
    retention: float
    tokens: int
    preview: str
    content: str
    tool: str | None
    text: str = ""


REFERENCE_MARKERS = ("decision", "decided", "will do", "plan", "approach", "strategy",
                     "решил", "план", "буду", "сделаю", "подход")


def classify_reference(message: ChatMessage) -> str:
    """The original rules in their order (see the module's docstring), plus one: a message
    of the user or the assistant that only acknowledges ("yes please", "👍") is ephemeral."""
    content = message.text.lower()
    if message.role == "tool":
        return "tool_result"
    if message.role == "user":
        if "heartbeat" in content or "/status" in content or "no_reply" in content:
            return "ephemeral"
        return "ephemeral" if is_acknowledgement(message.text) else "user_intent"
    if message.role == "assistant":
        if len(content) < 50 and ("no_reply" in content or "ok" in content):
            return "ephemeral"
        if is_acknowledgement(message.text):
            return "ephemeral"
        if any(marker in content for marker in REFERENCE_MARKERS):
            return "decision"
        return "context"
    return "unknown"


_WORDS = re.compile(r"[^\W\d_]+")
_EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF]")
REPLY_REACH = 3  # a user's reply answers the assistant's offer at most this many messages back
REPLY_WORDS = 25  # a longer reply tells more than which option


def _content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.lower()) if len(w) > 2 and w not in ENGLISH_STOPWORDS}


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in cues.SENTENCE.split(text) if part.strip()]


def _is_question(text: str) -> bool:
    return cues.QUESTION.search(text.strip()) is not None


def _decides(text: str) -> bool:
    """A decision marker in a sentence that is not a question."""
    return any(cues.DECISION.search(s) for s in _sentences(text) if not _is_question(s))


def _acknowledges(text: str) -> bool:
    return is_acknowledgement(text, wide=True)


def trivial(text: str, role: str = "assistant") -> bool:
    """Whether a message (of ``role``; a tool's output reads as the assistant's) is only an
    acknowledgement, a greeting, thanks, or a short report of progress: nothing to keep."""
    return _trivial(text.strip(), role)


def _trivial(text: str, role: str) -> bool:
    """Only an acknowledgement, a greeting, thanks, or a short report of what is being done; from
    the user also an acknowledgement followed by a few words of no substance ("ok cool, I'll
    forward that to him", "genial, lo imprimo")."""
    if _acknowledges(text):
        return True
    parts = _sentences(text)
    progress = cues.PROGRESS if role == "assistant" else None
    if len(text) <= 120 and all(_acknowledges(s) or cues.TRIVIAL.match(s) or cues.CLOSING.match(s)
                                or (progress and progress.match(s)) for s in parts):
        return True
    if role == "assistant":
        return len(text) <= 120 and cues.NOTED.match(text) is not None
    if len(text.split()) <= 5 and _EMOJI.search(text) and not any(ch.isdigit() for ch in text) \
            and not _decides(text):
        return True  # a reaction: "sent!! 🥹", "en el tren!! 🚄"
    lead = cues.LEAD.match(text)
    rest = text[lead.end():] if lead else ""
    if not lead or any(ch.isdigit() for ch in rest) or len(rest.split()) > 6:
        return False
    # "ok commit it": a go-ahead for what was just discussed; longer, only words of no substance
    return len(rest.split()) <= 3 or not cues.REQUEST.search(rest) and not _decides(rest)


def _asks_only(text: str) -> bool:
    """An assistant's short message made only of questions and acknowledgements: what it asks is
    answered by the next message."""
    parts = _sentences(text)
    if len(text) > 200 or any(ch.isdigit() for ch in text) or not any(_is_question(s) for s in parts):
        return False
    return all(_is_question(s) or _acknowledges(s) or cues.TRIVIAL.match(s) or cues.PROGRESS.match(s)
               or cues.CLOSING.match(s) for s in parts)


def _echoes(message: ChatMessage, earlier: ChatMessage | None) -> bool:
    """Whether an assistant message repeats a decision the message before it made: short, and most
    of its words are the decision's."""
    if earlier is None or earlier.role == message.role or len(message.text) > 160:
        return False
    mine, theirs = _content_words(message.text), _content_words(earlier.text)
    return bool(mine) and len(mine & theirs) >= max(1, len(mine) // 2)


def _offered(earlier: Sequence[ChatMessage]) -> ChatMessage | None:
    """The assistant message a user's reply may answer: the latest within the last
    :data:`REPLY_REACH` messages, the user's own messages between them (a reply in two parts)
    skipped."""
    for message in reversed(earlier[-REPLY_REACH:]):
        if message.role == "assistant" and message.text.strip():
            return message
        if message.role != "user":
            return None
    return None


def _replies_to_a_choice(text: str, earlier: Sequence[ChatMessage]) -> bool:
    """A short user reply, not a question nor a request, to an assistant message that asked for a
    choice or offered one ("The options are US or EU." "EU region")."""
    offer = _offered(earlier)
    if offer is None or len(text.split()) > REPLY_WORDS or _is_question(text):
        return False
    asked = [s for s in _sentences(offer.text) if _is_question(s)]
    if not any(cues.CHOICE.search(s) for s in asked) and cues.PROPOSES.search(offer.text) is None:
        return False
    # it picks: it names something the offer named, or points at one ("the second one")
    return bool(_content_words(text) & _content_words(offer.text)) or cues.PICKS.search(text) is not None


def _user_kind(text: str, earlier: Sequence[ChatMessage]) -> str:
    if _decides(text) or (cues.CHANGE.match(text) or cues.THEN.match(text)) and not _is_question(text):
        return "decision"  # "Actually, raise the limit to 200", "Dann Schmidt.": a choice made
    if cues.REQUEST.search(text):
        return "user_intent"
    return "decision" if _replies_to_a_choice(text, earlier) else "context"


def _assistant_kind(message: ChatMessage, before: ChatMessage | None, before_kind: str | None) -> str:
    text = message.text.strip()
    if _asks_only(text):
        return "ephemeral"
    first = next((s for s in _sentences(text) if not _acknowledges(s)), text)
    if before is not None and before.role == "user" and before_kind == "decision":
        # the user's decision acknowledged: "Noted: token bucket it is." repeats it (ephemeral);
        # "60 max it is. It also helps with venues ..." adds to it (context)
        if _echoes(message, before):
            return "ephemeral"
        if len(first.split()) <= 8 and _content_words(first) & _content_words(before.text):
            return "context"
    return "decision" if _decides(first) or cues.CHOOSES.search(first) else "context"


def _kind(messages: Sequence[ChatMessage], i: int, before_kind: str | None) -> str:
    message = messages[i]
    text = message.text.strip()
    if message.role == "tool":
        return "tool_result"
    if message.role not in ("user", "assistant"):
        return "unknown"
    if not text or _trivial(text, message.role) or text.lower() in ("heartbeat", "/status", "no_reply"):
        return "ephemeral"  # an assistant turn made only of tool calls: the result holds what matters
    if message.role == "user":
        return _user_kind(text, messages[:i])
    return _assistant_kind(message, messages[i - 1] if i else None, before_kind)


def kinds(messages: Sequence[ChatMessage], classifier: str = "meaning") -> list[str]:
    """The type of every message of a session, by ``classifier`` (``meaning`` or ``reference``)."""
    if classifier == "reference":
        return [classify_reference(m) for m in messages]
    out: list[str] = []
    for i in range(len(messages)):
        out.append(_kind(messages, i, out[-1] if out else None))
    return out


def substance(text: str) -> str:
    """``text`` from its first sentence that is not an acknowledgement ("Ok. I went with ..." reads
    "I went with ..."); all of it when every sentence is one."""
    stripped = text.strip()
    for sentence in _sentences(stripped):
        if not _acknowledges(sentence):
            return stripped[stripped.find(sentence):]
    return stripped


def open_goal(text: str) -> bool:
    """Whether a user's intent asks for work (a goal), not only a question."""
    return not _is_question(text)


SAME_MATTER = 0.4  # the share of the word weight of the shorter of two decisions they must share


def overturned(decisions: Sequence[str]) -> set[int]:
    """Which of a session's decisions (in order) a later one overturns: a later decision that says
    it changes something and shares with the earlier one at least 0.4 of the shorter one's words, each
    weighted by how few of the session's decisions use it (a word every decision uses tells no
    matter from another)."""
    words = [_content_words(text) for text in decisions]
    count = len(words)
    df: dict[str, int] = {}
    for found in words:
        for word in found:
            df[word] = df.get(word, 0) + 1
    weight = {word: math.log(1 + count / n) for word, n in df.items()}
    out = set()
    totals = [sum(weight[w] for w in found) for found in words]
    for i, mine in enumerate(words):
        for j in range(i + 1, count):
            shorter = min(totals[i], totals[j])
            shared = sum(weight[w] for w in mine & words[j])
            if shorter and shared / shorter >= SAME_MATTER and cues.CHANGE.search(decisions[j]):
                out.add(i)
                break
    return out


def worth_keeping(text: str) -> bool:
    """The offline gate for one message: not small talk, and at least three content words (a
    text mostly in a script without spaces counts by characters)."""
    text = text.strip()
    if not text or cues.SMALL_TALK.match(text):
        return False
    if offline.non_latin_share(text) > 0.5:
        return len(text) >= 8
    return len(keyword_terms(text, stopwords=ENGLISH_STOPWORDS)) >= 3
