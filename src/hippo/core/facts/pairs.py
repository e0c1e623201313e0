"""Offline (no-LLM) classification of a pair of facts: duplicate, supersedes or distinct.

A multinomial logistic regression (weights in ``pair_model.json``, written by
``calibration/train_pair_model.py`` from hand-written tuning pairs) over cheap features: the sentence
cosine; which content words only one side has and how close they are to the other side by the
embedding of single words (``embed``); numbers, names, people, negations and change markers that
differ; small multilingual lexicons of relations ("lives" / "works") and closed classes ("Monday" /
"Friday"); and the verdict of :func:`hippo.core.facts.offline.relation` with its subject and slot helpers.
A wrong merge loses a fact, so ``duplicate`` needs a high probability and no veto (a differing
number, name or person, or one vector for two texts); when unsure the answer is ``distinct``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from hippo.core.facts import offline as off
from hippo.core.facts import pair_lexicon as lex
from hippo.core.facts.pair_tokens import TOKEN_FEATURES, WordStates, contextual

__all__ = ["FEATURES", "LABELS", "TRAINED_ON", "Embed", "ModelRule", "WordStates", "classify_pair", "features",
           "load_model", "offline_kind", "offline_rule", "pair_probabilities", "readable"]

Label = Literal["duplicate", "supersedes", "distinct"]
Embed = Callable[[list[str]], np.ndarray]
LABELS: tuple[Label, ...] = ("duplicate", "supersedes", "distinct")
MODEL_PATH = Path(__file__).with_name("pair_model.json")
TRAINED_ON = "local:all-MiniLM-L6-v2"  # the embedder whose cosines and word vectors the weights expect

FEATURES = (
    "cos", "cos2", "degenerate", "non_latin", "jaccard", "only_old", "only_new", "unmatched_share", "soft_f1",
    "span_cos", "clean_cos", "min_partner", "mean_partner", "weak_old", "weak_new", "num_diff", "num_same",
    "name_diff", "name_same", "neg_diff", "hedge_diff", "person_diff", "lex_same", "lex_clash", "class_clash",
    "change_new", "addition_new", "past_event", "rel_duplicate", "rel_supersedes", "rel_distinct", "rel_none",
    "subject_same", "slot_changed", "slot_same", "len_ratio", "prefix_dup", "refines", "copula_changed", "head_diff",
) + TOKEN_FEATURES

def _words(text: str) -> list[str]:
    """Content words without stop words or the subject; Thai, Chinese and Japanese: character bigrams."""
    if off.non_latin_share(text) <= 0.5:  # Thai, Chinese, Japanese write no spaces
        return list(dict.fromkeys(w for w in off.content_words(text) if w not in lex.FOREIGN_STOP and w != "user's"))
    for subject in lex.NON_LATIN_SUBJECTS:
        text = text.replace(subject, " ")
    runs = re.findall(r"[^\W\d_]+|\d+", text)
    return list(dict.fromkeys(r[i:i + 2] for r in runs for i in range(max(1, len(r) - 1))))


def _numbers(text: str) -> set[str]:
    """Numbers a fact states, normalised: "1,500" → "1500", "120k" → "120000", "4th" → "4", "thirty-four" → "34"."""
    found: set[str] = set()
    text = re.sub(r"\b(1[01]|[1-9])(?::00)?\s*pm\b", lambda m: str(int(m.group(1)) + 12), text, flags=re.IGNORECASE)
    for raw in lex.NUMBER.findall(text):
        value = re.sub(r":00$", "", re.sub(r"(?:st|nd|rd|th)$", "", raw.strip().lower()).replace(",", ""))
        value = value[:-1].strip() + "000" if value.endswith("k") else value
        found.add(value.lstrip("0") or "0")
    found |= {lex.HAN_DIGITS[h] for h in re.findall(r"([一二两三四五六七八九十])(?=[个岁只位次年天本人匹つ歳])", text)}
    low = re.sub(r"\bone (?:day|of)\b", " ", text.lower())
    for tens, unit in re.findall(r"\b(" + "|".join(lex.TENS) + r")[- ](one|two|three|four|five|six|seven|eight|nine)\b",
                                 low):
        found.add(str(lex.TENS[tens] + int(off.NUMBERS[unit])))
        low = low.replace(f"{tens}-{unit}", " ").replace(f"{tens} {unit}", " ")
    return found | {lex.NUMBER_WORDS[t] for t in re.findall(r"[^\W\d_]+", low) if t in lex.NUMBER_WORDS}


def _names(text: str) -> list[list[str]]:
    """Runs of capitalised words past the first (names, places, products), lower-cased; "User" is not a name."""
    phrases: list[list[str]] = [[]]
    for i, tok in enumerate(off.TOKEN.findall(text)):
        word = tok.lower().removesuffix("'s").removesuffix("’s")
        if i and tok[:1].isupper() and word not in ("user", "the", "i"):
            phrases[-1].append(lex.ABBREVIATIONS.get(word, lex.DEMONYMS.get(word, word)))
        elif phrases[-1]:
            phrases.append([])
    return [p for p in phrases if p]


def _phrase_covered(phrase: list[str], other_text: str) -> bool:
    """A name phrase is said by the other text: most of its words, or as an acronym ("New York City" / "NYC")."""
    tokens = re.findall(r"[^\W_]+", other_text.lower())
    initials = "".join(w[0] for w in phrase)
    if len(phrase) > 1 and any(len(t) >= 2 and initials.startswith(t) for t in tokens):
        return True
    expanded = " ".join(lex.ABBREVIATIONS.get(w, lex.DEMONYMS.get(w, w)) for w in tokens) + " " + other_text
    return 2 * sum(_covers(w, expanded) for w in phrase) >= len(phrase)


def _covers(name: str, other_text: str) -> bool:
    """The other text says the name or an abbreviation of it ("NYC", "nvim" / "Neovim", "Postgres" / "PostgreSQL")."""
    low = other_text.lower()
    for symbol, code in lex.CURRENCY.items():
        low = low.replace(symbol, code)
    initials = "".join(w[0] for w in re.findall(r"[A-Z][\w]*", other_text) if w != "User").lower()
    if re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", low) or (len(name) >= 2 and name.isalpha()
                                                                      and name in initials):
        return True

    def inside(short: str, long: str) -> bool:  # the letters of short, in order, in long
        it = iter(long)
        return all(ch in it for ch in short)
    return any(word[0] == name[0] and word != name and (
        (len(name) < len(word) and inside(name, word))  # "JS" in "JavaScript"
        or (4 <= len(word) < len(name) and name.startswith(word[:4]) and inside(word, name)))  # "Postgres"
        for word in re.findall(r"[^\W_]+", low))


def _groups(text: str) -> dict[str, set[str]]:
    """Relation groups a text names, each with the entries that matched ("live" → {"reside"})."""
    latin = off.non_latin_share(text) <= 0.5
    words = [t.lower() for t in off.TOKEN.findall(text)] if latin else []
    found: dict[str, set[str]] = {}
    for group, entries in lex.GROUPS.items():
        for key, exact in ((e.rstrip("="), e.endswith("=")) for e in entries):
            if any(w == key if exact else w.startswith(key) for w in words) if latin else key in text:
                found.setdefault(group, set()).add(key)
    negated = bool(set(re.findall(r"[\w']+", text.lower().replace("n't", " not"))) & lex.NEGATIONS)
    if negated and "like" in found and "dislike" not in found:
        found["dislike"] = {"not " + k for k in found.pop("like")}  # "doesn't like" says "dislikes"
    elif negated or "不" in text or "ない" in text:
        found.setdefault("avoid", set()).add("not")  # "doesn't eat pork" says "avoids pork"
        if lex.MEAT.search(text):
            found.setdefault("veg", set()).add("no meat")  # "doesn't eat meat" says "vegetarian"
    return found


def _swapped(old: str, new: str) -> bool:
    """The same words in another order around a comparison: "prefers tea over coffee" / "coffee over tea"."""
    seq_old, seq_new = re.findall(r"[^\W\d_]+", old.lower()), re.findall(r"[^\W\d_]+", new.lower())
    return sorted(seq_old) == sorted(seq_new) and seq_old != seq_new and bool(_COMPARISON.search(old))


_COMPARISON = re.compile(r"\b(?:over|than|instead|rather|before|after|versus|vs|from)\b", re.IGNORECASE)


def _lexicon(old: str, new: str) -> dict[str, float]:
    """Same relation in other words (``lex_same``), two relations (``lex_clash``), two members of a class."""
    g_old, g_new = _groups(old), _groups(new)
    words_old = {lex.SAME_MEMBER.get(w, w) for w in re.findall(r"[^\W\d_]+", old.lower())}
    words_new = {lex.SAME_MEMBER.get(w, w) for w in re.findall(r"[^\W\d_]+", new.lower())}
    words_old |= {off.light_form(w) for w in words_old}  # "cats" / "cat": one member
    words_new |= {off.light_form(w) for w in words_new}
    w_old, w_new = words_old - words_new, words_new - words_old
    clash = any(w_old & c and w_new & c for c in lex.CLASSES) or any(
        {m for m in c if m in old and m not in new} and {m for m in c if m in new and m not in old}
        for c in lex.CJK_CLASSES) or _swapped(old, new)
    return {"class_clash": float(clash), "lex_same": float(any(g_old[g] != g_new[g] for g in g_old.keys() & g_new)),
            "lex_clash": float(bool(g_old.keys() - g_new.keys()) and bool(g_new.keys() - g_old.keys()))}


def _person_diff(old: str, new: str) -> float:
    """1 when the facts are about different people: "User" vs "User's wife", "User's son" vs "User's daughter"."""
    def person(text: str) -> str | None:  # "User's wife" → "wife"; None for User or a thing
        owner, head = off.subject_of(text)
        head = lex.PERSON_SYNONYMS.get(head or "", head)
        return head if owner == "user" and head in lex.PEOPLE else None

    def has(text: str, who: str | None) -> bool:  # "User has a daughter called Mia" names the daughter
        low = text.lower()
        if who in lex.SPOUSES and re.search(r"\b(?:married to|spouse)\b", low):
            return True  # "User is married to Anna" names the wife
        article = r"\b(?:a|an|one|two|their|his|her)\s+(?:\w*[\d-][\w-]*\s+)?"  # "a seven-year-old son"
        return who is None or re.search(article + who, low) is not None
    p_old, p_new = person(old), person(new)
    return float(p_old != p_new and not (has(new, p_old) and has(old, p_new)))


def _partners(only: list[str], other: list[str], embed: Embed | None) -> np.ndarray:
    """For each word in ``only``, its best similarity to a word of ``other`` (by ``embed``, else 0)."""
    if not only or embed is None or not other:
        return np.ones(0) if not only else np.zeros(len(only))
    vectors = np.asarray(embed(only + other), dtype=np.float64)
    return np.clip((vectors[:len(only)] @ vectors[len(only):].T).max(axis=1), 0.0, 1.0)


def _alignment(old_w: list[str], new_w: list[str], embed: Embed | None) -> dict[str, float]:
    """Which content words differ, and how close the differing words are to the other side."""
    def key(word: str) -> str:
        return off.word_stem(lex.NUMBER_WORDS.get(word, word))
    old_k, new_k = {key(w) for w in old_w}, {key(w) for w in new_w}
    only_old, only_new = [w for w in old_w if key(w) not in new_k], [w for w in new_w if key(w) not in old_k]
    p_old, p_new = _partners(only_old, new_w, embed), _partners(only_new, old_w, embed)
    best = np.concatenate([p_old, p_new])
    span_cos = 1.0 if not (only_old or only_new) else 0.0
    if embed is not None and only_old and only_new:  # "early riser" / "wakes up early": the differing spans
        span = np.asarray(embed([" ".join(only_old), " ".join(only_new)]), dtype=np.float64)
        span_cos = float(np.clip(span[0] @ span[1], 0.0, 1.0))
    recall = (len(old_w) - len(only_old) + p_old.sum()) / max(len(old_w), 1)
    precision = (len(new_w) - len(only_new) + p_new.sum()) / max(len(new_w), 1)
    return {"jaccard": len(old_k & new_k) / max(len(old_k | new_k), 1), "span_cos": span_cos,
            "only_old": min(len(only_old), 6) / 6, "only_new": min(len(only_new), 6) / 6,
            "unmatched_share": (len(only_old) + len(only_new)) / max(len(old_w) + len(new_w), 1),
            "soft_f1": 2 * recall * precision / max(recall + precision, 1e-9),
            "min_partner": float(best.min()) if best.size else 1.0,
            "mean_partner": float(best.mean()) if best.size else 1.0,
            "weak_old": float((p_old < 0.5).sum()) / 3, "weak_new": float((p_new < 0.5).sum()) / 3}


def _changes(text: str) -> set[str]:
    """Change markers ("now", "moved", "jetzt", "现在"); capitalised words are names ("New York"), not markers."""
    toks = text.split()
    lower = " ".join(toks[:1] + [t for t in toks[1:] if not t[:1].isupper()])
    return {m.lower() for m in off.CHANGE.findall(lower)} | {m.lower() + "*" for m in lex.CHANGE_WORDS.findall(text)}


def _marks(old: str, new: str) -> dict[str, float]:
    """Numbers, names, negations, hedges and people that differ ("Lincoln Elementary" / "Roosevelt Elementary": two
    names); change and addition markers."""
    n_old, n_new = _numbers(old), _numbers(new)
    names_old, names_new = _names(old), _names(new)
    lost = [n for n in names_old if not _phrase_covered(n, new)] + [n for n in names_new if not _phrase_covered(n, old)]
    lost += [p for p in names_old for q in names_new if set(p) & set(q) and set(p) - set(q) and set(q) - set(p)]
    lw_old, lw_new = ({w for w in re.findall(r"[\w']+", re.sub(r"\bwould (?=rather|prefer)", "", t.lower())
                                                            .replace("n't", " not"))} for t in (old, new))
    return {
        "num_diff": float(bool(n_old or n_new) and n_old != n_new), "num_same": float(bool(n_old) and n_old == n_new),
        "name_diff": float(bool(lost)),
        "name_same": float(bool({w for n in names_old for w in n} & {w for n in names_new for w in n})),
        "neg_diff": float(bool(lw_old & lex.NEGATIONS) != bool(lw_new & lex.NEGATIONS)),
        "hedge_diff": float(bool(lw_old & lex.HEDGES) != bool(lw_new & lex.HEDGES)),
        "person_diff": _person_diff(old, new), "change_new": float(bool(_changes(new) - _changes(old))),
        "addition_new": float(bool(off.ADDITION.search(new))),
        "past_event": float(bool(off.PAST_EVENT.search(old)) and bool(off.PAST_EVENT.search(new))),
    }


_COPULA = re.compile(r"^(?P<key>.+?)\s+(?:is|are)\s+(?:now\s+|still\s+)?(?P<value>.+)$", re.IGNORECASE)


def _copula(old: str, new: str) -> float:
    """1 when both facts give one attribute ("User's preferred airline is ...") different values."""
    m_old, m_new = _COPULA.match(off.canonical(old)), _COPULA.match(off.canonical(new))
    if m_old is None or m_new is None:
        return 0.0
    key_old, key_new = off.content_words(m_old["key"], stem=True), off.content_words(m_new["key"], stem=True)
    if not key_old or key_old != key_new or "'s" not in m_old["key"].replace("’", "'"):
        return 0.0
    return float(set(off.content_words(m_old["value"], stem=True)) != set(off.content_words(m_new["value"], stem=True)))


def _head_diff(old: str, new: str) -> float:
    """1 when the facts are about two different things, neither named by the other side: "User's birthday is
    March 3" / "User's anniversary is March 3", "User's office ..." / "User's apartment ..."."""
    if max(off.non_latin_share(old), off.non_latin_share(new)) > 0.5:
        return 0.0
    (_, h_old), (_, h_new) = off.subject_of(old), off.subject_of(new)
    h_old, h_new = lex.PERSON_SYNONYMS.get(h_old or "", h_old), lex.PERSON_SYNONYMS.get(h_new or "", h_new)
    if h_old is None or h_new is None or h_old == h_new:
        return 0.0
    return float(h_old not in off.content_words(new, stem=True) and h_new not in off.content_words(old, stem=True))


def _rule(old: str, new: str) -> dict[str, float]:
    """The offline rule's verdict and the subject and slot helpers behind it."""
    verdict = off.relation(old, new)
    feats = {f"rel_{name}": float(verdict == name) for name in LABELS} | {"rel_none": float(verdict is None)}
    old_s, new_s = off.content_words(old, stem=True), off.content_words(new, stem=True)
    old_w, new_w = off.content_words(old), off.content_words(new)
    slots_old, slots_new = off.slots_of(old), off.slots_of(new)
    shared = slots_old.keys() & slots_new.keys()
    return feats | {
        "subject_same": float(off.subject_of(old) == off.subject_of(new)), "head_diff": _head_diff(old, new),
        "slot_changed": float(any(slots_old[k][1] != slots_new[k][1] for k in shared)),
        "slot_same": float(any(slots_old[k][1] == slots_new[k][1] for k in shared)),
        "copula_changed": _copula(old, new), "prefix_dup": float(bool(new_w) and old_w[:len(new_w)] == new_w),
        "refines": float(bool(old_s) and bool(new_s) and off.refines_old(old_s, new_s))}


def _normalize(text: str) -> str:
    """Spell out unambiguous abbreviations ("NYC" → "New York City", "k8s" → "Kubernetes"; not "us", "La"), and
    occupations one way."""
    def expand(m: re.Match[str]) -> str:
        tok, full = m.group(0), lex.ABBREVIATIONS.get(m.group(0).lower())
        if full is None or (tok[1:].islower() and len(tok) <= 3 and not any(ch.isdigit() for ch in tok)):
            return tok
        return " ".join(w.capitalize() for w in full.split())
    text = re.sub(r"[^\W_]+", expand, text)
    for pattern, repl in lex.ROLE_PHRASES:
        text = pattern.sub(repl, text)
    return text


def features(existing: str, new: str, similarity: float, embed: Embed | None = None,
             states: WordStates | None = None) -> np.ndarray:
    """The feature vector of a pair, in the order of :data:`FEATURES` (``states``: the embedder's contextual
    word vectors, :mod:`hippo.core.facts.pair_tokens`)."""
    norm_old, norm_new = _normalize(existing), _normalize(new)
    if embed is not None and (norm_old, norm_new) != (existing, new) and similarity < 0.9999:
        spelled = np.asarray(embed([norm_old, norm_new]), dtype=np.float64)  # "k8s" → "Kubernetes": re-read
        similarity = max(similarity, float(spelled[0] @ spelled[1]))
    existing, new = norm_old, norm_new
    old_w, new_w = _words(existing), _words(new)
    same_text = off.strip_end(existing).casefold() == off.strip_end(new).casefold()
    feats: dict[str, float] = {
        "cos": similarity, "cos2": similarity * similarity, "degenerate": float(similarity >= 0.9999 and not same_text),
        "non_latin": max(off.non_latin_share(existing), off.non_latin_share(new)),
        "len_ratio": min(len(old_w), len(new_w)) / max(len(old_w), len(new_w), 1)}
    word_embed = None if feats["non_latin"] > 0.5 else embed
    feats |= _alignment(old_w, new_w, word_embed) | _marks(existing, new) | _lexicon(existing, new)
    feats |= _rule(existing, new) | contextual(existing, new, states, readable=feats["non_latin"] <= 0.5)
    flags = ("num_diff", "name_diff", "person_diff", "class_clash", "lex_clash", "degenerate", "neg_diff")
    feats["clean_cos"] = similarity * (1.0 - max(feats[f] for f in flags))
    return np.array([feats[name] for name in FEATURES], dtype=np.float64)


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> dict[str, Any]:
    """The weights file, read once: feature names, standardisation, weights and decision thresholds."""
    model = json.loads(path.read_text(encoding="utf-8"))
    if tuple(model["features"]) != FEATURES:
        raise ValueError(f"{path.name} was trained on other features; re-run calibration/train_pair_model.py")
    for key in ("mean", "scale", "weights", "bias"):
        model[key] = np.asarray(model[key], dtype=np.float64)
    return model


def pair_probabilities(x: np.ndarray, model: dict[str, Any]) -> np.ndarray:
    """Softmax probabilities over :data:`LABELS` for one feature vector (or a matrix of them)."""
    z = ((x - model["mean"]) / model["scale"]) @ model["weights"].T + model["bias"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def decide(x: np.ndarray, probs: np.ndarray, model: dict[str, Any]) -> Label:
    """Label from the probabilities, with the model's caution: distinct unless the evidence is clear."""
    p = dict(zip(LABELS, probs))
    vetoed = any(x[FEATURES.index(name)] > 0.5 for name in model.get("vetoes", ()))
    if not vetoed and p["duplicate"] >= model["duplicate_min"] and p["duplicate"] == max(p.values()):
        return "duplicate"
    if p["supersedes"] >= model["supersedes_min"] and p["supersedes"] >= p["distinct"]:
        return "supersedes"
    return "distinct"


def classify_pair(existing: str, new: str, similarity: float, embed: Embed | None = None,
                  model_path: Path = MODEL_PATH, states: WordStates | None = None) -> Label | None:
    """Classify a new fact against one existing fact without an LLM.

    ``similarity`` is the cosine of the two facts under the current embedder (trained on
    all-MiniLM-L6-v2's). ``embed`` maps texts to unit vectors (``embedder.embed_documents``) and
    is used for single words; ``states`` gives the contextual vectors of each text's words
    (``LocalEmbedder.word_states``). Without them only equal words align and paraphrases mostly
    come out ``distinct``. Returns None when a side is empty.
    """
    if not existing.strip() or not new.strip():
        return None
    if off.strip_end(existing).casefold() == off.strip_end(new).casefold():
        return "duplicate"
    model = load_model(model_path)
    x = features(existing, new, similarity, embed, states)
    return decide(x, pair_probabilities(x, model), model)


Rule = Callable[[str, str, "float | None"], "Label | None"]


class ModelRule:
    """:func:`classify_pair` with the embedder's word vectors; the rules for a pair whose cosine is unknown
    (vector pending) and for a pair with a side mostly outside the Latin script. It also decides the pairs
    above the duplicate band: the cosine alone merges a changed number or a flipped negation ("1,200" /
    "1,500 followers" at 0.98), the model's vetoes do not.

    MiniLM reads Thai and most Chinese as ``[UNK]`` and other scripts letter by letter, so there the
    model's word features are zeros and its verdict would rest on a cosine that cannot tell "the user's
    father has high blood pressure" from "the user has": the rules keep both facts instead."""

    decides_duplicates = True

    def __init__(self, embed: Embed | None, states: WordStates | None = None) -> None:
        self.embed = embed
        self.states = states

    def __call__(self, existing: str, new: str, similarity: float | None) -> Label | None:
        if similarity is None or not readable(existing) or not readable(new):
            return off.relation(existing, new)
        return classify_pair(existing, new, similarity, self.embed, states=self.states)


def readable(text: str) -> bool:
    """Whether the pair model can read ``text``: mostly Latin letters (what MiniLM's vocabulary covers)."""
    return off.non_latin_share(text) <= 0.5


def offline_kind(setting: str, model_id: str | None) -> str:
    """``Settings.offline_pairs`` for an embedder: ``auto`` is ``model`` with the embedder the weights were
    trained on (:data:`TRAINED_ON`, the default) and ``rules`` with any other."""
    if setting == "auto":
        return "model" if model_id == TRAINED_ON else "rules"
    return setting


def offline_rule(kind: str, embed: Embed | None, states: WordStates | None = None) -> Rule:
    """The offline classifier ``remember_facts`` uses for ambiguous pairs (``Settings.offline_pairs``
    resolved by :func:`offline_kind`): ``rules`` is :func:`hippo.core.facts.offline.relation`; ``model`` is a
    :class:`ModelRule` over the embedder's single-word vectors (``embed``) and contextual word vectors
    (``states``)."""
    if kind == "rules":
        return lambda existing, new, _similarity: off.relation(existing, new)
    return ModelRule(embed, states)
