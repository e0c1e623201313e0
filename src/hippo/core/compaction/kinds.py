"""What each message of a session is: a decision, the user's intent, context, a tool's result or
ephemeral, read as a careful person reads it.

Two classifiers. ``reference`` is the compaction specification's rules as they were written
(substring markers: an assistant message under 50 characters holding "ok" anywhere is ephemeral,
one holding "plan" anywhere a decision, every user message an intent), kept for anyone who needs
that exact output. ``meaning``, the default, reads words, not substrings:

- a tool's output is a tool result;
- a message that only acknowledges, reacts or reports trivial progress ("ok, thanks", "👍", "on
  it", "Done.", "Running the tests now.") is ephemeral, from either side;
- a decision is recognised from the user or the assistant by what settles a choice ("Decision:",
  "let's go with", "we'll use", "agreed:", "I went with", "X it is", "B. Do it.") in English,
  Spanish, German, French and Russian; never a question, and never the assistant's echo of a
  decision just made (that is ephemeral, or context when it adds something);
- a user message that asks or asks for work is an intent; one that only states something
  ("I'm allergic to peanuts", "the client is on Windows 10") is context;
- anything else the assistant says is context.

Pure: no store, no clock, no model.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

from hippo.core.compaction.wording import is_acknowledgement
from hippo.core.facts import offline
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.messages import ChatMessage

__all__ = ["classify_reference", "kinds", "open_goal", "overturned", "trivial", "worth_keeping"]

REFERENCE_MARKERS = ("decision", "decided", "will do", "plan", "approach", "strategy",
                     "решил", "план", "буду", "сделаю", "подход")


def classify_reference(message: ChatMessage) -> str:
    """The specification's rules in their order (see the module's docstring), plus one: a message
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


# Settling a choice, at a word boundary, in a sentence that is not a question.
_DECISION = re.compile(r"""(?ix)
    \b(?:decision|decided|final\ call|settled\ on|we\ settle\ on|going\ with|go\ with|goes\ with|go\ for|
       let'?s\ (?:go|use|do|keep|ship|take|pick|stick\ with|move|drop|cut|skip|switch|make|put|pin)|
       (?:we'?ll|we\ will)\ (?:go\ with|use|ship|keep|do|take|launch|move|drop|cut|skip|switch|stick|pin)|
       we\ (?:chose|picked|went\ with|agreed)|i\ (?:chose|picked|went\ with|opted\ for|settled\ on)|
       agreed\b|approved|(?:do|ship|use|merge|deploy)\ it\b|
       (?:pin|keep|use|drop|cut|scrap|kill)\ (?:it|them|the|that|this)\b|
       stick\ with|switch(?:ing)?\ to|
       \w+\ it\ is\b|\w+\ then(?:[.!,:]|\s*$)|one\ (?:change|fix|correction)\s*:|
       \b(?:is|should\ be|goes\ to|stays(?:\ at)?)\ \S+\ not\ \S+|(?:goes|go)\ to\ [$€£]?\d|stays\ [$€£]?\d|
       [^\W\d_]+\ =\ [^\W\d_]|
       (?:^|\.\s)(?:use|pin|keep|drop|cut|scrap|narrow|move|go|do|make|put|set)\b)
    |^\s*(?:ok(?:ay)?[,.]?\s+)?(?:option\ )?[a-d1-4][.)]?\s+(?:do\ it|go|please|that\ one)\b
    |\b(?:decidido|decidimos|vamos\ con|nos\ quedamos\ con|elegimos|me\ quedo\ con|lo\ descarto|lo\ dejamos|
       quedamos\ en|ya\ est[áa])\b
    |\b(?:entscheidung|entschieden|wir\ nehmen|nehmen\ wir|machen\ wir|bleiben\ bei|festgelegt|
       wir\ gehen\ mit|dann\ \w+)\b
    |\b(?:décidé|décision|on\ part\ sur|on\ garde|on\ prend)\b
    |(?:решил|решили|решение|берём|берем|выбрали|договорились)
""")
# The assistant choosing for the user: "I'll write it as a command rather than a migration".
_CHOOSES = re.compile(r"(?i)^(?:i'?ll|i\ will|i'?m\ going\ to|i\ went\ with|i'?ve\ gone\ with|\w+ing\b)[^.?!]*"
                      r"\b(?:rather\ than|instead\ of)\b", re.VERBOSE)
_QUESTION = re.compile(r"\?\s*(?:[\W_]*)$")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# Short progress, greetings and trivia that say nothing to keep ("Done.", "Running the tests now.").
_TRIVIAL = re.compile(r"""(?ix)^\W*(?:(?:ok(?:ay)?|sure|alright|right|great|good|perfect|vale|perfecto|genial)
    [,.!]?\s+)?(?:
    done|on\ it|ack|brb|back|night|good\ night|lunch|working\ on\ it|will\ do|one\ (?:sec|moment)|
    hecho|listo|apuntado|erledigt|fertig|c'est\ fait|
    (?:hi|hello|hey|hola|hallo|bonjour)\b(?:\ \S+){0,3}|
    (?:you'?re\ welcome|de\ nada|gern(?:e)?\ geschehen|good\ luck|have\ a\ (?:good|great|nice)|enjoy|take\ care|
       mucho\ [áa]nimo|suerte|viel\ erfolg|bonne\ chance)\b.*
    )\W*$""")
# The assistant saying what it is about to do or just did, briefly ("Running the tests now.",
# "Let me check the invoices.", "Added to the plan.", "Lo miro.").
_PROGRESS = re.compile(r"""(?ix)^\W*(?:(?:ok(?:ay)?|sure|alright|right|great|good|perfect|vale|perfecto|genial)
    [,.!]?\s+)?(?:
    (?:let\ me|i'?ll|i\ will)\ (?:check|look|see|take\ a\ look|run|try|dig|find|pull|grab|confirm|ask)\b.*|
    (?:that|this)\ (?:pattern\ )?rings\ a\ bell.*|
    \w+ing\b(?:\ \S+){0,10}|again|full\ suite|
    (?:added|saved|noted|updated|applied|sent|changed|done|fixed)\b(?:\ [^\s._/\d]+){0,3}|
    edited\ \d+\ (?:line|file)s?|
    (?:lo|la|los|las|les|le)\ \w+o\b(?:\ \S+){0,4}|miro|busco\b(?:\ \S+){0,5}|confirmo|escribo\b.*|
    enviad[oa]s?\b.*|mache\ ich|schaue?\ ich\b.*|ich\ (?:schau|pr[üu]f)\w*\b.*
    )\W*$""")
_CLOSING = re.compile(r"(?i)^\W*(?:thanks?|thank\ you|thx|ty|gracias|danke|merci|cheers)\b.{0,60}$", re.VERBOSE)
# What asks for work or an answer: a question, a polite or modal request, an imperative opening a
# sentence, a problem reported ("every call comes back 401").
_REQUEST = re.compile(r"""(?ix)
    \?|(?:^|[.!]\s+|^(?:ok|okay|nice|great|cool|good|right|hmm|so|and|also|now|then|perfecto|vale|genial)[,.!]?\s+)
    (?:please|pls|can|could|would|will|should|shall|what|why|how|when|where|which|who|
    add|fix|make|write|check|run|look|find|show|give|tell|help|update|remove|delete|create|build|set|
    change|rename|try|explain|review|draft|book|send|compare|list|summari[sz]e|investigate|implement|
    refactor|deploy|test|prepare|organi[sz]e|remind|schedule|start|stop|revert|roll|open|commit|push|merge|
    search|get|put|draft|plan|figure|sort|clean|walk|now|next|
    puedes|podr[ií]as|ay[uú]dame|quiero|necesito|busca|mira|haz|prepara|dime|avisa|conf[ií]rma\w*|escribe|
    kannst|k[öo]nntest|bitte|mach|schau|pr[üu]f\w*|zeig)\b
    |\b(?:i\ (?:want|need|would\ like|'d\ like)|we\ (?:need|should|must|have\ to)|can\ you|could\ you|
       please|help\ me|let\ me\ know|any\ idea|porfa|por\ favor|bitte|problem|error|fails?|failing|broken|
       doesn'?t\ work|not\ working|comes?\ back\ \d{3}|keeps?\ \w+ing|rejects?|crash\w*)\b
""")
_CHOICE = re.compile(r"""(?ix)\b(?:or|shall\ i|should\ i|want\ me|do\ you\ want|would\ you\ like|which|prefer\w*|
    option|how\ many|how\ much|what\ (?:numbers?|limits?|values?|size|date|day|time)|when\ should|
    (?:a|b|1|2)\)|o|oder|welche\w*|cu[áa]l\w*|qu[ée]\ (?:d[ií]a|fecha|hora)|prefier\w*|ou|quel\w*)\b""")
# An assistant message that proposes: a recommendation, alternatives, a list of options.
_PROPOSES = re.compile(r"""(?imx)
    \b(?:i'?d|i\ would|i\ recommend|i\ suggest|recommend\w*|suggest\w*|alternatives?|either|options?|
       instead\ of|rather\ than|the\ safer|te\ recomiendo|recomiendo|yo\ (?:har[íi]a|elegir[íi]a|ir[íi]a)|
       alternativa|opci[óo]n|ich\ w[üu]rde|empfehle|vorschlag|je\ (?:recommande|propose))\b
    |^\s*(?:[-*•]|\d+[.)])\s+\S
""")
_WORDS = re.compile(r"[^\W\d_]+")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.lower()) if len(w) > 2 and w not in ENGLISH_STOPWORDS}


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def _is_question(text: str) -> bool:
    return _QUESTION.search(text.strip()) is not None


def _decides(text: str) -> bool:
    """A decision marker in a sentence that is not a question."""
    return any(_DECISION.search(s) for s in _sentences(text) if not _is_question(s))


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
    progress = _PROGRESS if role == "assistant" else None
    if len(text) <= 120 and all(_acknowledges(s) or _TRIVIAL.match(s) or _CLOSING.match(s)
                                or (progress and progress.match(s)) for s in parts):
        return True
    if role == "assistant":
        return len(text) <= 120 and _NOTED.match(text) is not None
    lead = _LEAD.match(text)
    rest = text[lead.end():] if lead else ""
    if not lead or any(ch.isdigit() for ch in rest) or len(rest.split()) > 6:
        return False
    # "ok commit it": a go-ahead for what was just discussed; longer, only words of no substance
    return len(rest.split()) <= 3 or not _REQUEST.search(rest) and not _decides(rest)


# An acknowledgement opening a message: "ok cool, ...", "genial, ...", "thx. ...".
_LEAD = re.compile(r"(?i)^\W*(?:(?:ok(?:ay)?|cool|great|nice|good|perfect|thanks|thx|ty|amazing|genial|vale|gracias|"
                   r"perfecto|uff|ugh|ah|oh|danke|passt|super|merci|good call|fine)\b[\s,.!]*)+")
# The assistant noting what was just said: "Noted, Thursday 14:00.", "Updated: Team $24/seat ...".
_NOTED = re.compile(r"(?i)^\W*(?:noted|understood|updated|saved|got it|fixed in|changed|vale|apuntado|anotado|"
                    r"notiert|c'est noté)\b\s*[:,.]")


def _asks_only(text: str) -> bool:
    """An assistant's short message made only of questions and acknowledgements: what it asks is
    answered by the next message."""
    parts = _sentences(text)
    return len(text) <= 200 and any(_is_question(s) for s in parts) and all(
        _is_question(s) or _acknowledges(s) or _TRIVIAL.match(s) or _PROGRESS.match(s) for s in parts) and not any(
        ch.isdigit() for ch in text)


def _echoes(message: ChatMessage, earlier: ChatMessage | None) -> bool:
    """Whether an assistant message repeats a decision the message before it made: short, and most
    of its words are the decision's."""
    if earlier is None or earlier.role == message.role or len(message.text) > 160:
        return False
    mine, theirs = _content_words(message.text), _content_words(earlier.text)
    return bool(mine) and len(mine & theirs) >= max(1, len(mine) // 2)


def _replies_to_a_choice(text: str, before: ChatMessage | None) -> bool:
    """A short user reply, not a question nor a request, to an assistant's question offering a choice."""
    if before is None or before.role != "assistant" or len(text) > 150 or _is_question(text):
        return False
    asked = [s for s in _sentences(before.text) if _is_question(s)]
    return any(_CHOICE.search(s) for s in asked) or _PROPOSES.search(before.text) is not None


def _user_kind(text: str, before: ChatMessage | None) -> str:
    if _decides(text) or _CHANGE.match(text) and not _is_question(text):
        return "decision"  # "Actually, raise the limit to 200": a change of course is a decision
    if _REQUEST.search(text):
        return "user_intent"
    return "decision" if _replies_to_a_choice(text, before) else "context"


def _kind(message: ChatMessage, before: ChatMessage | None, before_kind: str | None) -> str:
    text = message.text.strip()
    if message.role == "tool":
        return "tool_result"
    if message.role not in ("user", "assistant"):
        return "unknown"
    if not text or _trivial(text, message.role) or text.lower() in ("heartbeat", "/status", "no_reply"):
        return "ephemeral"  # an assistant turn made only of tool calls: the result holds what matters
    if message.role == "user":
        return _user_kind(text, before)
    if before_kind == "decision" and _echoes(message, before) or _asks_only(text):
        return "ephemeral"  # "Noted: token bucket it is." repeats the decision just made
    first = _sentences(text)[0]
    return "decision" if _decides(first) or _CHOOSES.search(first) else "context"


def kinds(messages: Sequence[ChatMessage], classifier: str = "meaning") -> list[str]:
    """The type of every message of a session, by ``classifier`` (``meaning`` or ``reference``)."""
    if classifier == "reference":
        return [classify_reference(m) for m in messages]
    out: list[str] = []
    for i, message in enumerate(messages):
        before = messages[i - 1] if i else None
        out.append(_kind(message, before, out[-1] if out else None))
    return out


def open_goal(text: str) -> bool:
    """Whether a user's intent asks for work (a goal), not only a question."""
    return not _is_question(text)


# A later decision that changes an earlier one says so ("actually", "switch to", "instead.").
_CHANGE = re.compile(r"""(?ix)
    \b(?:actually|change\ of\ plans?|scratch\ that|on\ second\ thought|after\ all|no\ longer|not\ \w+\ any\ ?more|
       switch(?:ed|ing)?\ (?:to|back)|revert(?:ed|ing)?|chang(?:e|ed|ing)\ (?:it|that|this|the\ \w+)?\ ?to|
       mov(?:e|ed|ing)\ (?:it\ )?to|push(?:ed)?\ (?:it\ )?(?:back|to)|postpone[ds]?|reschedul\w*|
       (?:raise|lower|bump|increase|reduce|drop)(?:d|ed|s)?\ (?:it\ |the\ \w+\ )?to|make\ it|rather|
       instead(?!\ of)|new\ plan|updated?\ (?:plan|decision)|revis\w*|overrid\w*|replac\w*)\b
    |\b(?:en\ (?:vez|lugar)|mejor|cambi\w*|al\ final|stattdessen|doch|lieber|ge[äa]ndert|[äa]nder\w*|
       verschieb\w*|verschoben|plut[ôo]t|finalement|en\ fait)\b
    |(?:передумал|вместо|лучше|перенес)
""")
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
            if shorter and shared / shorter >= SAME_MATTER and _CHANGE.search(decisions[j]):
                out.add(i)
                break
    return out


_SMALL_TALK = re.compile(
    r"^\W*(hi|hello|hey|thanks|thank you|thx|ok|okay|sure|great|cool|nice|lol|haha|bye|goodbye|yes|no|yep|nope|"
    r"got it|sounds good|you're welcome|good (morning|night|evening|afternoon)|see you|take care|wow|awesome)"
    r"(\W+\w+)?\W*$", re.I)

def worth_keeping(text: str) -> bool:
    """The offline gate for one message: not small talk, and at least three content words (a
    text mostly in a script without spaces counts by characters)."""
    text = text.strip()
    if not text or _SMALL_TALK.match(text):
        return False
    if offline.non_latin_share(text) > 0.5:
        return len(text) >= 8
    return len(keyword_terms(text, stopwords=ENGLISH_STOPWORDS)) >= 3
