"""Offline (no-LLM) fact extraction, intensity rating and tie-break rule for ``remember_facts``.

Pure functions over strings: stdlib only, no I/O. Used when no LLM is configured.

Extraction: sentences → clauses (split only where a new first-person clause
starts) → small talk, questions and requests dropped → first person rewritten
as "User" (English only; other languages are kept exactly as written). Facts
carry no final punctuation.

Intensity follows how strongly a fact is stated: signals, then calibration bands. Strong categories:
emotion (amplifiers such as shouting, "!!", "so much" count here), consequence,
absolute, effort, importance, repetition. n = number of strong categories found.

| signals found                                 | intensity                      |
| --------------------------------------------- | ------------------------------ |
| casual aside only (oh and, btw, tried, just)  | 0.15 (0.20 with opinion)       |
| none: a clear statement                       | 0.35                           |
| mild opinion (like, prefer, enjoy, think)     | 0.40                           |
| n ≥ 1 strong, or identity alone (n = 1)       | 0.60 + 0.05·n, at most 0.80    |
| identity + n ≥ 1 strong (repetition counts)   | 0.85 + 0.05·(n−1), at most 1.0 |
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ExtractedFact", "extract_facts", "non_latin_share", "relation", "summary_label"]

Label = Literal["duplicate", "supersedes", "distinct"]
Subject = tuple[str | None, str | None]  # (owner, head): "User's wife" → ("user", "wif"), "The app" → (None, "app")


@dataclass(frozen=True)
class ExtractedFact:
    """One atomic fact, its intensity in [0, 1] and the signal categories that explain the rating."""

    fact: str
    intensity: float
    signals: tuple[str, ...]


def _lex(words: str, start: bool = False) -> re.Pattern[str]:
    """Case-insensitive alternation of "|"-separated regex fragments (a space matches any whitespace).

    Matched as whole words anywhere, or with ``start`` at the beginning of the text.
    """
    body = "(?:" + words.replace(" ", r"\s+") + ")"
    return re.compile("^" + body + r"\b" if start else r"(?<![\w'’])" + body + r"(?![\w'’])", re.IGNORECASE)


# -- signals and intensity -------------------------------------------------------------------

_ROLES = ("developer|engineer|programmer|designer|manager|teacher|doctor|nurse|student|writer|scientist|researcher|"
          "founder|architect|consultant|analyst|chef|artist|musician|lawyer|dentist|accountant|lead|intern|"
          "freelancer|director|professor|pilot|journalist|photographer|admin|administrator|cto|ceo")
_SIGNALS: dict[str, re.Pattern[str]] = {name: _lex(words) for name, words in {
    "identity": rf"i(?:['’]m| am) (?:not )?an? (?:[\w-]+ ){{0,2}}?(?:person|guy|girl|type|{_ROLES})|"
                r"i(?:['’]m| am) (?:a )?(?:vegan|vegetarian|introvert(?:ed)?|extrovert(?:ed)?)|"
                r"i (?:don['’]t|do not|never) do [\w-]+|as an? [\w-]+(?: [\w-]+)?\s*,? i|i consider myself|"
                r"i identify as|who i am|i(?:['’]ve| have) always been an?",
    "emotion": r"hat(?:e|es|ed|ing)|lov(?:e|es|ed|ing)|nightmares?|incredibl[ey]|awful|terribl[ey]|horribl[ey]|"
               r"amazing|ador(?:e|es|ed)|despis(?:e|es|ed)|can['’]?t stand|cannot stand|obsessed|passionate|"
               r"furious|thrilled|disgusting|fantastic|wonderful|excited|devastated|miserable|worst|detest(?:s|ed)?|"
               r"loath(?:e|es|ed)|sick of|fed up|frustrat(?:ed|ing)|angry|heartbroken|ecstatic|terrified|"
               r"dread(?:s|ed)?",
    "consequence": r"cost (?:us|me|them|him|her|our \w+|the \w+)|broke (?:production|prod|the build)|took down \w+|"
                   r"lost (?:the|a|our|my) (?:client|customer|deal|contract|data|job)|outages?|got fired|"
                   r"crash(?:ed|es)?|downtime|data loss|breach(?:es)?|went down|post-?mortem|lawsuit|penalty",
    "absolute": r"never|always|refus(?:e|es|ed|ing)|non-negotiable|not negotiable|under no circumstances|ever again|"
                r"absolutely not|no way|at all costs|no matter what|without exception|forever",
    "effort": r"spent (?:[\w-]+ ){0,2}(?:hours|days|weeks|months|years|nights|weekends|ages)|been struggling|"
              r"struggl(?:e|ed|es|ing) with|for (?:years|months|decades|ages)|"
              r"every single (?:day|night|week|morning|time)|took (?:me|us) (?:[\w-]+ ){0,2}"
              r"(?:hours|days|weeks|months|years)|all (?:weekend|night)|countless hours|[\w-]+ years of "
              r"(?:experience|practice)",
    "importance": r"remember (?:this|that)|critical|crucial|important(?:ly)?|don['’]t forget|do not forget|"
                  r"make sure|keep in mind|never forget|note that|vital|top priority",
    "opinion": r"lik(?:e|es|ed)|prefer(?:s|red)?|enjoy(?:s|ed)?|dislik(?:e|es|ed)|think|favou?rite|"
               r"not a (?:big )?fan|rather|fan of|fond of",
    "casual": r"oh and|by the way|btw|tr(?:y|ies|ied)|just|randomly|happened to|maybe|kinda|sort of|i guess|fyi",
}.items()}
_ORDER = ("identity", "emotion", "amplifier", "consequence", "absolute", "effort", "importance", "repetition",
          "opinion", "casual")
_STRONG = frozenset({"emotion", "consequence", "absolute", "effort", "importance", "repetition"})
_LENDABLE = _STRONG | {"amplifier"}
_AMPLIFIER = _lex("so much|really really")
# Shouting counts only for real words: API, AWS or NYC in capitals are acronyms, not emphasis.
_EMPHATIC = frozenset("never always hate love really very not must all ever again nothing everything worst best "
                      "please stop seriously totally absolutely much want need huge".split())


def signals_of(text: str) -> set[str]:
    found = {name for name, rx in _SIGNALS.items() if rx.search(text)}
    words = [w for w in re.findall(r"[^\W\d_]+", text) if len(w) >= 2]
    caps = [w for w in words if w.isupper()]
    if ("!!" in text or _AMPLIFIER.search(text) or any(len(w) >= 3 and w.lower() in _EMPHATIC for w in caps)
            or (len(words) >= 3 and 2 * len(caps) > len(words))):
        found.add("amplifier")
    return found


def intensity_of(signals: set[str]) -> float:
    """Map signal categories to the calibration bands (table in the module docstring)."""
    cats = {"emotion" if s == "amplifier" else s for s in signals}
    strong = len(cats & _STRONG)
    if "identity" in cats and strong:
        value = 0.85 + 0.05 * (strong - 1)
    elif "identity" in cats or strong:
        value = min(0.8, 0.6 + 0.05 * max(strong, 1))
    elif "opinion" in cats:
        value = 0.2 if "casual" in cats else 0.4
    else:
        value = 0.15 if "casual" in cats else 0.35
    return round(min(1.0, max(0.0, value)), 2)


# -- language, sentences, clauses ---------------------------------------------------------------

_EN_WORDS = frozenset("i i'm i've i'd i'll my me the is am are was were have has had do does did don't not and but to "
                      "of for with from this that it it's we you they he she our your their very really never always "
                      "just also want like love hate user user's".split())
# Function words of the languages users also write in, plus their word for "user" in LLM-written facts.
_FOREIGN_WORDS = frozenset("""ich du er wir und oder aber nicht kein keine der das den dem des ein eine einen ist bin
    sind habe hat mein meine mich mir auch sehr wohne wohnt lebt arbeite arbeitet nutzer nutzerin benutzer je tu il elle
    nous vous et ou mais pas le la les une des du est suis ai mon ma mes très aussi chez utilisateur l'utilisateur yo él
    ella y pero el los las es soy estoy tengo mi mis muy también usuario usuaria del en io sono ho gli che
    utente""".split())


def non_latin_share(text: str) -> float:
    """The share of a text's letters outside the Latin script (Thai, Chinese, Cyrillic...)."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(not unicodedata.name(ch, "").startswith("LATIN") for ch in letters) / len(letters) if letters else 0.0


def _is_english(text: str) -> bool:
    """True unless the text is mostly another script or has more foreign than English function words."""
    words = re.findall(r"[\w']+", text.lower().replace("’", "'"))
    foreign, english = sum(w in _FOREIGN_WORDS for w in words), sum(w in _EN_WORDS for w in words)
    return non_latin_share(text) <= 0.5 and foreign <= english


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？])|\s*\n\s*")
_ABBREV_ALWAYS = frozenset("e.g i.e eg ie vs cf dr mr mrs ms prof st approx".split())
_ABBREV = _ABBREV_ALWAYS | frozenset("etc a.m p.m no inc ltd jr sr min".split())


def _sentences(text: str) -> list[str]:
    """Split at . ! ? ; followed by space, and at newlines; decimals, URLs and e-mails have no space."""
    out: list[str] = []
    for piece in filter(None, (p.strip() for p in _SENTENCE_END.split(text))):
        abbrev = re.search(r"(?:^|\s)([\w.]+)\.$", out[-1]) if out else None
        word = abbrev.group(1).lower() if abbrev else ""
        if word and (word in _ABBREV_ALWAYS or (len(word) == 1 and word not in "ia")
                     or ((word in _ABBREV or "." in word) and (piece[:1].islower() or piece[:1].isdigit()))):
            out[-1] += " " + piece  # "e.g. Go", "Dr. Smith", "the U.S. and" continue the sentence
        else:
            out.append(piece)
    return out


_I = r"i(?:['’](?:m|ve|d|ll))?(?![\w'’.])"
_CONJ = r"(?:(?:oh\s+)?and(?:\s+also|\s+so)?|but(?:\s+also)?|plus|also|so|btw|by\s+the\s+way)"
# Split points sit before the conjunction, so "oh and" stays visible as a casual-aside signal.
_BREAK = re.compile(rf",\s*(?=(?:{_CONJ},?\s+)?{_I})|\s+(?={_CONJ}\s+{_I})|,\s*(?=(?:(?:oh\s+)?and|but|plus|also)"
                    rf"\s+my\b)|\s+(?=(?:plus|also)\s+my\b)|\s+[-–—]+\s+(?=(?:{_CONJ}\s+)?(?:{_I}|my\b))",
                    re.IGNORECASE)
_I_START = re.compile(_I, re.IGNORECASE)
_SUBORDINATE = _lex("if|when|whenever|because|since|although|though|while|unless|once|before|after|until|whether|"
                    "even if|as soon as", start=True)


def _clauses(sentence: str) -> list[str]:
    """Split where a new first-person clause starts (", and I ...", " but I ...", " plus my ...")."""
    parts, start = [], 0
    for m in _BREAK.finditer(sentence):
        left = sentence[start:m.start()].strip()
        words = len(left.split())
        # not "My wife and I", "If I can, I ..."; but "I'm Kris, I live ..." is two clauses
        if (words >= 3 or (words == 2 and _I_START.match(left))) and not _SUBORDINATE.match(left):
            parts.append(left)
            start = m.end()
    return parts + [sentence[start:].strip()]


# -- clause → fact ---------------------------------------------------------------------------------

_FILLER = re.compile(r"^(?:(?:oh|and|but|so|well|also|plus|btw|by\s+the\s+way|anyways?|actually|honestly|ps|p\.s\.|"
                     r"please|(?:hi|hello|hey)(?:\s+there)?|um+|uh+|yeah|yes|ok|okay|lol|haha|seriously|frankly|tbh|"
                     r"to\s+be\s+honest)(?:[\s,:;!.—–]+|$)|(?:great|cool|nice|awesome|perfect|sure|alright|look|"
                     r"listen)[,!]+\s*)+", re.IGNORECASE)
_REMEMBER = re.compile(r"^(?:(?:remember|note|keep\s+in\s+mind|make\s+sure|don['’]t\s+forget|do\s+not\s+forget|"
                       r"never\s+forget|fyi)(?:\s+(?:this|that))?(?:\s*[:,\-–—]\s*|\s+|$)|(?:important|critical|"
                       r"crucial|this\s+is\s+(?:really\s+|very\s+|super\s+)?(?:critical|crucial|important))"
                       r"\s*(?:[:,\-–—]\s*|$))", re.IGNORECASE)
_NOT_A_FACT = _lex("(?:how|what|why|where|when|who|which) (?:is|are|was|were|do|does|did|can|could|would|should|"
                   "will|about)|(?:do|does|did|can|could|would|will|should|is|are|have|has) (?:you|we|it|there|i)|"
                   "help|tell|show|give|write|draft|explain|summari[sz]e|translate|generate|create|list|find|check|"
                   "fix|send|book|remind|let['’]?s|let me|make|add|update|delete|remove|search|look up|suggest|"
                   "recommend", start=True)  # questions and requests to the assistant
_SMALL_TALK = _lex("thanks?|thank you|thx|cheers|bye|goodbye|good (?:morning|night|evening|afternoon)|see you|"
                   "sounds good|no worries|got it|lol|haha", start=True)
# A clause led by "it"/"that"/"they" leans on the one before: it lends its signals instead of standing alone.
_LEANING = _lex("it|it['’]s|that|that['’]s|this|these|those|they|they['’]re|he|she|you|you['’]re", start=True)
_FIRST_PERSON = _lex(rf"{_I}|my|me|mine|myself")
_POINTING = _lex("it|this|that|them|these|those")
_PLEASE = _lex("please")  # "Keep it short, please" asks the assistant for something
_TRAILING = re.compile(r"[\s,]+(?:lol|haha+|lmao|rofl|xd|tbh)$", re.IGNORECASE)


def strip_end(text: str) -> str:
    """Collapse spaces and drop final punctuation, but keep the dot of a final "3 p.m." or "the U.S."."""
    text = " ".join(text.split())
    stripped = text.rstrip(" .!?;:,…")
    return stripped + "." if text[len(stripped):].startswith(".") and re.search(r"\b\w\.\w$", stripped) else stripped


def _clause_fact(raw: str, english: bool) -> tuple[str | None, bool, bool]:
    """(the fact a clause states or None, explicit "remember that" prefix, whether a dropped clause lends signals)."""
    text = strip_end(raw)
    if not english:  # kept as written; Thai and CJK put no spaces between words, so count letters there
        long = len(text.split()) >= 3 or (non_latin_share(text) > 0.5 and sum(ch.isalpha() for ch in text) >= 4)
        return (text if long else None), False, False
    asks, text = _PLEASE.search(text), _FILLER.sub("", text)
    explicit = _REMEMBER.match(text)
    text = text[explicit.end():] if explicit else text
    if explicit and not text:
        return None, True, True  # "Remember this." on its own marks a neighbouring fact
    if (not text or (explicit and text.lower().startswith("to ")) or (asks and not explicit)
            or _NOT_A_FACT.match(text) or (_SMALL_TALK.match(text) and not _FIRST_PERSON.search(text))):
        return None, bool(explicit), False
    if _LEANING.match(text):
        return None, bool(explicit), True
    fact = _third_person(_TRAILING.sub("", text))
    fact = fact[:1].upper() + fact[1:]
    words = content_words(fact)
    if len(fact.split()) < 3 or not words or (len(words) < 2 and _POINTING.search(fact)):
        return None, bool(explicit), True  # "Never.", "I really do", "I love it" elaborate the clause before
    return fact, bool(explicit), False


_ADVERBS = ("never|really|always|just|also|still|usually|often|sometimes|rarely|seldom|actually|honestly|absolutely|"
            "totally|completely|definitely|truly|genuinely|strongly|mostly|generally|normally|typically|now|already|"
            "currently|recently|finally|even|only|literally|seriously|simply|hardly|barely|ever|occasionally|"
            r"frequently|constantly|basically|probably|personally|kinda|kind\s+of|sort\s+of|deeply|mainly|"
            r"especially|no\s+longer|once")
_CONTRACTIONS = [(re.compile(rx, re.IGNORECASE), repl) for rx, repl in [
    (r"\bi(?:['’]m|\s+am)\s+not\b", "User is not"), (r"\bi(?:['’]m|\s+am)\b", "User is"),
    (r"\bi['’]ve\b", "User has"), (r"\bi['’]d\b", "User would"), (r"\bi(?:['’]ll|\s+will)\b", "User will")]]
# "and I" is part of a plural subject ("My wife and I live ..."), so its verb keeps its form.
_I_VERB = re.compile(rf"(?<!\band\s)(?<!\bor\s)\bi\s+((?:(?:{_ADVERBS})\s+)*)([a-z]+(?:['’]t)?)\b", re.IGNORECASE)
_PRONOUNS = [(re.compile(rx, re.IGNORECASE), repl) for rx, repl in [
    (r"\bi\b(?![.'’])", "User"), (r"\bmyself\b", "themselves"), (r"\b(?:my|mine)\b", "User's"), (r"\bme\b", "User")]]
_KEEP_FORM = frozenset("""can could will would shall should may might must ought used was had did went got made took
    saw came found gave told felt became left kept began bought brought thought knew ran ate drank wrote met paid sold
    sent spent built lost grew flew drove broke chose spoke taught caught fell forgot heard held led meant said sat
    slept stood understood won wore swam sang rode quit read put cut hit let set hurt cost beat split shut""".split())
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "be": "is", "were": "was",
              "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't"}


def _conjugate(verb: str) -> str:
    """Third-person singular present; past tense, modals and other contractions keep their form."""
    low = verb.lower().replace("’", "'")
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if (low in _KEEP_FORM or low.endswith("n't") or re.fullmatch(_ADVERBS, low)
            or (low.endswith("ed") and not low.endswith("eed"))):
        return low
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return low + "es"
    return low[:-1] + "ies" if low.endswith("y") and low[-2:-1] not in "aeiou" else low + "s"


def _third_person(text: str) -> str:
    """Rewrite English first person as "User": "I NEVER want" → "User never wants", "my" → "User's"."""
    for rx, repl in _CONTRACTIONS:
        text = rx.sub(repl, text)

    def verb(m: re.Match[str]) -> str:
        adverbs = [w.lower() if w.isupper() else w for w in m.group(1).split()]  # shouting → lower case
        word, conj = m.group(2), _conjugate(m.group(2))
        return " ".join(["User", *adverbs, conj.capitalize() if word.istitle() and len(word) > 1 else conj])

    text = _I_VERB.sub(verb, text)
    for rx, repl in _PRONOUNS:
        text = rx.sub(repl, text)
    return text


# -- extraction --------------------------------------------------------------------------------------


@dataclass
class _Draft:
    fact: str
    signals: set[str]
    words: set[str] = field(default_factory=set)


def _merge_restatements(drafts: list[_Draft]) -> list[_Draft]:
    """One fact per point: a clause whose content words another clause already holds restates it."""
    kept: list[_Draft] = []
    for draft in drafts:
        draft.words = set(content_words(draft.fact, stem=True))
        for other in kept:
            small, big = sorted((draft.words, other.words), key=len)
            if (small and small <= big and not (big - small) & _POLARITY
                    and _compatible(subject_of(draft.fact), subject_of(other.fact), draft.words, other.words)):
                other.signals |= draft.signals | {"repetition"}
                if len(draft.words) > len(other.words):
                    other.fact, other.words = draft.fact, draft.words  # keep the fuller wording
                break
        else:
            kept.append(draft)
    identity = [d for d in kept if "identity" in d.signals]
    for draft in identity if len(identity) >= 2 else []:  # identity statements elaborating one self-description
        draft.signals.add("repetition")
    return kept


def extract_facts(text: str) -> list[ExtractedFact]:
    """Rule-based extraction: atomic third-person facts with an intensity from their signals."""
    drafts: list[_Draft] = []
    pending: set[str] = set()  # signals of a leading "Remember this." for the next fact
    for sentence in _sentences(text or ""):
        if sentence.endswith(("?", "？")):
            continue
        english = _is_english(sentence)
        for raw in _clauses(sentence) if english else [sentence]:
            signals = signals_of(raw)
            fact, explicit, lends = _clause_fact(raw, english)
            signals |= {"importance"} if explicit else set()
            if fact is not None:
                drafts.append(_Draft(fact, signals | pending))
                pending = set()
            elif lends and drafts:
                drafts[-1].signals |= signals & _LENDABLE
            elif lends:
                pending |= signals & _LENDABLE
    return [ExtractedFact(d.fact, intensity_of(d.signals), tuple(s for s in _ORDER if s in d.signals))
            for d in _merge_restatements(drafts)]


# -- relation between two facts ------------------------------------------------------------------------

TOKEN = re.compile(r"[^\W_]+(?:[.,:/@'’-][^\W_]+)*")
STOP = frozenset("""a an the of to in on at for with from by as into onto about around roughly approximately per and or
    is are was were be been being am has have had do does did get gets got user users their theirs his her hers its they
    them themselves it this that these those there than then which who whom whose what very really strongly absolutely
    so truly totally quite pretty super extremely definitely genuinely deeply highly much just now new currently still
    own owns""".split())
_POLARITY = frozenset("not no never without ex former formerly previously used until stopped quit anymore longer want "
                      "plan hope might maybe would could should will soon".split())
NUMBERS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
# Strict equivalents only (abbreviations, spellings, exact synonyms): a looser map would merge facts that differ.
_SYNONYMS = {"reside": "live", "based": "live", "mom": "mother", "mum": "mother", "dad": "father", "favor": "prefer",
             "favour": "prefer", "favourite": "favorite", "colour": "color", "async": "asynchronous", "nvim": "neovim",
             "postgres": "postgresql", "k8s": "kubernetes", "min": "minute", "mins": "minute", "hr": "hour",
             "hrs": "hour", "req": "request", "yr": "year", "yrs": "year"}


def light_form(tok: str) -> str:
    """Plural / third-person "s" only: tense stays, since "moves" and "moved" are different facts."""
    if len(tok) > 3 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")) and not tok[-2].isdigit():
        return tok[:-1]
    return tok


def word_stem(tok: str) -> str:
    """Topic stem for overlap: also -ing / -ed and a final e ("lives", "lived", "living" → "liv")."""
    if any(ch.isdigit() for ch in tok):
        return tok
    for suffix in ("ing", "ed"):
        if tok.endswith(suffix) and len(tok) - len(suffix) >= 3:
            tok = tok[:-len(suffix)]
            if len(tok) > 3 and tok[-1] == tok[-2] and tok[-1] not in "aeiouls":
                tok = tok[:-1]  # "running" → "run", "stopped" → "stop"
            break
    return tok[:-1] if len(tok) > 3 and tok.endswith("e") else tok


def canonical(text: str) -> str:
    """"Sarah is the user's manager" → "User's manager is Sarah", so reordered copulas compare equal."""
    text = re.sub(r"\bthe\s+user\b", "User", strip_end(text), flags=re.IGNORECASE)
    m = re.fullmatch(r"(.+?)\s+(?:is|are)\s+User['’]s\s+(.+)", text, flags=re.IGNORECASE)
    return f"User's {m.group(2)} is {m.group(1)}" if m else text


def content_words(text: str, stem: bool = False) -> list[str]:
    """Content words in order: lower-cased, stop words and intensifiers dropped, negations unified."""
    words: list[str] = []
    for raw in TOKEN.findall(canonical(text)):
        tok = raw.lower().replace("’", "'")
        tok = tok.removesuffix("'s")
        tok = "not" if tok.endswith("n't") or tok == "cannot" else NUMBERS.get(tok, tok)
        if tok not in STOP:
            tok = _SYNONYMS.get(light_form(tok), light_form(tok))
            words.append(word_stem(tok) if stem else tok)
    return words


_AGENTS = frozenset(word_stem(light_form(w)) for w in """wife husband partner girlfriend boyfriend fiance fiancee
    son daughter
    kid child children baby mother father mom dad parent brother sister sibling friend boss manager colleague coworker
    roommate team company employer cat dog pet family grandmother grandfather uncle aunt cousin niece nephew older
    younger best ex skip-level""".split())
_LEAD = frozenset("these days nowadays now currently today lately recently the so also and".split())


def subject_of(text: str) -> Subject:
    """Who or what the fact is about: "User" → ("user", None), "User's wife" → ("user", "wif")."""
    toks = [t.lower().replace("’", "'") for t in TOKEN.findall(canonical(text))]
    while toks and toks[0] in _LEAD:
        toks.pop(0)
    if toks and toks[0] in ("user", "user's"):
        rest = content_words(" ".join(toks[1:]), stem=True) if toks[0] == "user's" else []
        return "user", rest[0] if rest else None
    rest = content_words(" ".join(toks), stem=True)
    return None, rest[0] if rest else None


def _compatible(a: Subject, b: Subject, a_words: set[str], b_words: set[str]) -> bool:
    """Same subject: "User" and "User's wife" are different people; "User's rent" is still about User."""
    (owner_a, head_a), (owner_b, head_b) = a, b
    if head_a == head_b:
        return True
    if owner_a == owner_b == "user" and (head_a is None or head_b is None):
        head, other = (head_b, a_words) if head_a is None else (head_a, b_words)
        return head not in _AGENTS or head in other
    return False


_VALUE_END = re.compile(r"\s+(?:with|since|because|and|but|after|before|for|from|until|as|when|where)\b|[,;]",
                        re.IGNORECASE)
_NUM = r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
# (slot, pattern, fixed value or None to read the "val" group); a "key" group makes the slot "favorite:<key>".
_SLOTS = [(name, re.compile(rx, re.IGNORECASE), value) for name, rx, value in [
    ("location", (r"\b(?:lives?|living|lived|moved|moves|moving|relocated|relocates|based|resides?|residing|settled)"
                  r"\s+(?:back\s+)?(?:in|to)\s+(?P<val>.+)"), None),
    ("household", r"\blives?\s+(?P<val>alone|with\b.+)", None),
    ("employer", r"\b(?:works?|worked|working)\s+(?:at|for)\s+(?P<val>.+)", None),
    ("employer", r"\b(?:joined|employed\s+by|job\s+at|hired\s+by|now\s+at)\s+(?P<val>.+)", None),
    ("role", (rf"\b(?:works?\s+as|is\s+(?:now\s+)?|promoted\s+to|became)\s*(?:an?\s+)?"
              rf"(?P<val>(?:[\w-]+\s+){{0,2}}?(?:{_ROLES}))\b"), None),
    ("relationship", (r"\b(?P<val>single|married|divorced|engaged|separated|widowed|dating|in\s+a\s+relationship|"
                      r"girlfriend|boyfriend|fianc[eé]e?|wife|husband|broke\s+up|split\s+up)\b"), None),
    ("diet", r"(?:\bnot|n['’]t|\bnever|\bno\s+longer|\bstopped)\s+eat(?:s|ing)?\s+meat\b", "vegetarian"),
    ("diet", r"\b(?P<val>vegan|vegetarian|pescatarian|keto)(?:genic)?\b", None),
    ("diet", r"\beat(?:s|ing)?\s+(?P<val>meat|fish|chicken|beef|pork|seafood)\b", None),
    ("phone", r"\b(?:phone|mobile|cell)(?:\s+number)?\s+(?:is|to)\s+(?P<val>\S+)", None),
    ("email", r"\be-?mail(?:\s+address)?\s+(?:is|to)\s+(?P<val>\S+)", None),
    ("address", r"\b(?:home\s+)?address\s+(?:is|to)\s+(?P<val>.+)", None),
    ("favorite", r"\bfavou?rite\s+(?P<key>[\w -]+?)\s+(?:is|are)\s+(?P<val>.+)", None),
    ("age", rf"\b(?:is|are)\s+(?P<val>{_NUM})\s+(?:years?|yrs?)\s+old\b", None),
    ("age", rf"\bturned\s+(?P<val>{_NUM})\b", None)]]
_STATUS = {"girlfriend": "dating", "boyfriend": "dating", "in a relationship": "dating", "fiance": "engaged",
           "fiancee": "engaged", "fiancé": "engaged", "fiancée": "engaged", "wife": "married", "husband": "married",
           "broke up": "single", "split up": "single", "separated": "divorced"}


def slots_of(text: str) -> dict[str, tuple[Subject, str]]:
    """Slot → (subject, value) for the attributes a fact sets: where User lives, works, their phone number..."""
    found: dict[str, tuple[Subject, str]] = {}
    text = canonical(text)
    for name, rx, value in _SLOTS:
        m = rx.search(text)
        if m is None:
            continue
        key = name + (":" + " ".join(content_words(m["key"], stem=True)) if "key" in rx.groupindex else "")
        if value is None:
            raw = " ".join(m["val"].lower().split())
            value = _STATUS.get(raw) or " ".join(sorted(set(content_words(_VALUE_END.split(raw)[0], stem=True))))
        if value and key not in found:
            found[key] = (subject_of(text[:m.start()]), value)
    return found


CHANGE = _lex("now|new|no longer|anymore|these days|nowadays|moved|switched|changed|migrated|upgraded|downgraded|"
               "increased|decreased|rose|dropped|raised|went (?:up|down)|cut down|reduced|rescheduled|postponed|"
               "renewed|extended|promoted|quit|stopped|gave up|start(?:ed|s)|finished|sold|cancell?ed|broke up|"
               "divorced|passed away|transferred|renamed|graduated|turned|replaced|found")
ADDITION = _lex("also|too|as well|another|additionally|in addition")
_SWITCH = re.compile(r"\b(?:switched|migrated|changed|upgraded|converted|went)\b.*?\bfrom\s+(?P<old>.+?)\s+to\s+"
                     r"(?P<new>.+)", re.IGNORECASE)
PAST_EVENT = _lex("was|were|went|visited|attended|travell?ed|did|had|met|saw|won|lost|born")


def _changed(existing: str, new: str, old_s: list[str], new_s: list[str]) -> bool:
    """Whether the new fact replaces the old one (their subjects already match)."""
    if ADDITION.search(new):  # "User also likes Rust" adds to "User likes Python"
        return refines_old(old_s, new_s)
    old_set, new_set = set(old_s), set(new_s)
    old_slots, new_slots = slots_of(existing), slots_of(new)
    for key in old_slots.keys() & new_slots.keys():
        (subject_a, value_a), (subject_b, value_b) = old_slots[key], new_slots[key]
        if value_a != value_b and _compatible(subject_a, subject_b, old_set, new_set):
            return True  # same slot, new value: "lives in Berlin" → "moved to Lisbon"
    switch = _SWITCH.search(new)
    if switch:  # "switched from npm to pnpm" replaces "uses npm"
        before, after = set(content_words(switch["old"], stem=True)), set(content_words(switch["new"], stem=True))
        if before and before <= old_set and not after <= old_set:
            return True
    if ([w for w in old_s if w not in _POLARITY] == [w for w in new_s if w not in _POLARITY]
            and old_set & _POLARITY != new_set & _POLARITY):
        return True  # "likes olives" → "doesn't like olives"
    old_w, new_w = content_words(existing), content_words(new)
    if (len(old_w) == len(new_w) and old_w != new_w and not PAST_EVENT.search(existing + " " + new)
            and all(a == b or (any(c.isdigit() for c in a) and any(c.isdigit() for c in b))
                    for a, b in zip(old_w, new_w))):
        return True  # only a number differs: "React 17" → "React 18" (not past events: both visits happened)
    markers = {m.lower() for m in CHANGE.findall(new)} - {m.lower() for m in CHANGE.findall(existing)}
    shared = old_set & new_set
    common = set(content_words(" ".join(t for t in TOKEN.findall(existing) if t.islower()), stem=True))
    if markers and 2 * len(shared) >= len(old_set) and (len(shared) >= 2 or shared & common):
        return True  # an explicit change on the same topic: "now works at Stripe", "moved to 10:00"
    return refines_old(old_s, new_s)


def refines_old(old_s: list[str], new_s: list[str]) -> bool:
    """The new fact keeps every word of the old one, in order: "has a dog" → "has a dog named Biscuit"."""
    it = iter(new_s)
    return len(new_s) > len(old_s) and old_s[0] == new_s[0] and all(w in it for w in old_s)


def relation(existing: str, new: str) -> Label | None:
    """Offline tie-break for a pair in the ambiguous similarity band; never merges a fact that adds information.

    duplicate:  the new fact's content words are the old fact's leading content words (nothing added, and
                nothing negated or hedged in what it leaves out).
    supersedes: same subject, and the same slot with a new value, an explicit change ("now", "moved to",
                "switched from X to Y"), a flipped negation, a changed number, or a refinement of the old fact.
    distinct:   anything else. None: non-English text, which these rules cannot read.
    """
    if strip_end(existing).casefold() == strip_end(new).casefold():
        return "duplicate"
    if not (_is_english(existing) and _is_english(new)):
        return None
    old_w, new_w = content_words(existing), content_words(new)
    if not old_w or not new_w:
        return None
    if old_w[:len(new_w)] == new_w and not set(old_w[len(new_w):]) & _POLARITY:
        return "duplicate"
    old_s, new_s = content_words(existing, stem=True), content_words(new, stem=True)
    if not _compatible(subject_of(existing), subject_of(new), set(old_s), set(new_s)):
        return "distinct"
    return "supersedes" if _changed(existing, new, old_s, new_s) else "distinct"


def summary_label(fact: str, max_words: int = 6) -> str:
    """Short parenthetical for summaries: "User tried a café on Sukhumvit" → "tried a café on Sukhumvit"."""
    text = strip_end(fact)
    text = re.sub(r"^(?:the\s+)?user(?:['’]s)?\s+", "", text, flags=re.IGNORECASE) or text
    words = text.split()
    if len(words) > max_words:
        head = re.split(r"[,;:]\s|\s[-–—]\s", text)[0].split()  # the first clause carries the point
        words = head if len(head) >= 2 else words
    cut = len(words) > max_words
    return strip_end(" ".join(words[:max_words])) + ("…" if cut else "")
