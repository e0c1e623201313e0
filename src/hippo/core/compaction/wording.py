"""What compaction reads in a message's words: whether it is only an acknowledgement, and where
its sentences end, so that a shortened text keeps whole sentences.

Two additions to the original rules (:func:`hippo.core.compaction.compact.classify`), both found
trying compaction on a real session: "yes please" was kept as a user's intent (retention 0.78)
beside the work it answered, and the compressed section cut the session's key decision in the
middle of a sentence (its first 100 characters). Pure: no store, no clock.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["ACKNOWLEDGEMENTS", "MORE_ACKNOWLEDGEMENTS", "fixed", "is_acknowledgement", "js_number", "sentence_ends",
           "shortened"]

# Replies that only acknowledge, agree or thank, in lower case and letters only (punctuation and
# emoji are dropped before matching). A message made of these alone, any number of them ("ok,
# thanks!", "Sure, go ahead 👍"), is an acknowledgement; one word of substance makes it not one.
ACKNOWLEDGEMENTS = (
    "ok", "okay", "okey", "k", "kk", "alright", "all right", "yes", "yeah", "yep", "yup", "sure", "of course",
    "please", "please do", "thanks", "thank you", "a lot", "so much", "very much", "many thanks", "much appreciated",
    "appreciated", "thx", "ty", "cheers", "great", "cool", "nice", "perfect", "awesome", "excellent", "good",
    "very good", "sounds good", "looks good", "lgtm", "got it", "gotcha", "understood", "noted", "makes sense",
    "agreed", "right", "exactly", "fine", "that works", "works for me", "go ahead", "go for it", "do it", "will do",
    "no problem", "np", "no worries", "you re welcome", "welcome", "sounds like a plan",
    "ок", "окей", "ага", "угу", "да", "конечно", "спасибо", "хорошо", "понял", "поняла", "понятно", "отлично", "давай",
)
# Read only by hippo's own classifier (``classifier="meaning"``): reactions and acknowledgements in
# more words and languages, which the original rules' list leaves to the rules after it.
MORE_ACKNOWLEDGEMENTS = (
    "fine by me", "nah", "nah fine", "ugh", "uff", "oh", "oh no", "ah", "hmm", "wow", "good to know", "good call",
    "amazing", "brilliant", "lovely", "sweet", "of course", "for sure", "absolutely", "totally", "indeed",
    "talk tomorrow", "talk soon", "see you", "bye", "good night", "night", "morning", "good morning", "hi", "hello",
    "hey", "hi there", "hiii", "lol", "haha", "hahaha", "yay", "phew", "done", "ack", "roger", "copy", "yes please",
    "oof", "omg", "love it", "love that", "you re the best", "fingers crossed", "anytime", "any time",
    "congratulations", "congrats", "great choice", "good choice", "take your time", "no rush", "happy to help",
    "glad i could help", "glad to help", "my pleasure", "congratulations again", "to you both", "moin", "servus",
    "gerne", "gern", "danke schön", "bis morgen", "bis dann", "klingt gut", "alles gut", "mach ich", "kein problem",
    "genial", "gracias", "muchas gracias", "vale", "perfecto", "claro", "claro que sí", "de acuerdo", "pues nada",
    "bueno", "buenas", "hola", "buenos días", "buenas noches", "venga", "guay", "ok gracias", "sí", "si", "qué bien",
    "danke", "danke dir", "vielen dank", "passt", "alles klar", "super", "prima", "klar", "gut", "sehr gut", "ja",
    "genau", "okay danke", "perfekt", "top", "merci", "merci beaucoup", "parfait", "d accord", "d acc", "oui",
    "très bien", "entendu", "bien", "ça marche",
)


def _matcher(phrases: tuple[str, ...]) -> "re.Pattern[str]":
    return re.compile("(?:{0})(?: (?:{0}))*".format(
        "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))))


_ONLY_ACKS = _matcher(ACKNOWLEDGEMENTS)
_ONLY_MORE_ACKS = _matcher(ACKNOWLEDGEMENTS + MORE_ACKNOWLEDGEMENTS)
_WORD = re.compile(r"[^\W\d_]+")
_MAX_ACK_CHARS = 100


def is_acknowledgement(text: str, *, wide: bool = False) -> bool:
    """Whether ``text`` only acknowledges: acknowledgement phrases alone, or emoji and
    punctuation alone (a thumbs-up); never a question mark or a number. ``wide``: with
    :data:`MORE_ACKNOWLEDGEMENTS` too (hippo's own classifier)."""
    text = text.strip()
    if not text or len(text) > _MAX_ACK_CHARS or "?" in text or any(ch.isdigit() for ch in text):
        return False
    words = " ".join(_WORD.findall(text.lower().replace("’", " ").replace("'", " ")))
    return not words or (_ONLY_MORE_ACKS if wide else _ONLY_ACKS).fullmatch(words) is not None


# A sentence ends at . ! ? or … (and any closing quotes or brackets) before white space or the end,
# at 。！？, or at a line break. Not after a common abbreviation or an initial ("e.g. ", "J. ").
_END = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s|$)|[。！？]+[\"'”’»)\]]*|\n")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "st", "no", "approx", "incl"})


def sentence_ends(text: str) -> list[int]:
    """The positions where each sentence of ``text`` ends (after its punctuation; before a line
    break), in order."""
    ends = []
    for match in _END.finditer(text):
        if match.group() == "\n":
            ends.append(match.start())
            continue
        if match.group().startswith("."):
            before = text[:match.start()].rsplit(None, 1)
            word = before[-1].lower().lstrip("(\"'") if before else ""
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
        ends.append(match.end())
    return ends


def shortened(text: str, budget: int, *, longest_sentence: int) -> str:
    """``text`` within ``budget`` characters in whole sentences: the sentences that fit, followed by
    " …" when any was left out. A first sentence over the budget is kept whole up to
    ``longest_sentence`` characters; text with no sentence end by then (a log, a file) ends at the
    last word before ``budget``, marked "…"."""
    text = text.strip()
    if len(text) <= budget:
        return text
    ends = [end for end in sentence_ends(text) if text[:end].strip()]
    fits = [end for end in ends if end <= budget]
    if fits:
        return text[:fits[-1]].rstrip() + " …"
    if ends and ends[0] <= longest_sentence:
        whole = text[:ends[0]].rstrip()
        return whole if not text[ends[0]:].strip() else whole + " …"
    cut = text.rfind(" ", 0, budget + 1)
    return text[:cut if cut > budget // 2 else budget].rstrip() + "…"


def fixed(value: float, places: int) -> str:
    """JavaScript's ``toFixed``: the exact binary value rounded half up (Python's format rounds half to even)."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def js_number(value: float) -> str:
    """A number as JavaScript prints it in a template or JSON (``0.2``, ``1``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
