"""Contextual word alignment of two facts for the offline pair classifier (:mod:`hippo.core.facts.pairs`).

BERTScore-style: each content word of one fact is matched greedily to the word of the other fact whose
contextual vector (the sentence model's last hidden states, word pieces averaged per word: an embedder's
``word_states``) is closest. A paraphrase matches every word well ("resides" / "lives"); a fact that differs
in one detail leaves one word poorly matched ("early" / "long" meetings, "account" at a bank / "works" for
it). The words that only one side says are also matched among themselves (a substitution) and counted when
nothing on the other side comes close (an addition). No new weights: the vectors come from the embedder
the rest of the features already use.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from hippo.core.facts import offline as off
from hippo.core.facts import pair_lexicon as lex

__all__ = ["TOKEN_FEATURES", "WordStates", "contextual"]

WordStates = Callable[[list[str]], "list[tuple[list[str], np.ndarray]]"]
TOKEN_FEATURES = ("tok_precision", "tok_recall", "tok_f1", "tok_min", "tok_min_old", "tok_min_new", "tok_weak",
                  "tok_diff_min", "tok_diff_mean", "tok_sub_min", "tok_sub_mean", "tok_added_old", "tok_added_new",
                  "tok_only_old", "tok_only_new")
_STOP = off.STOP | lex.FOREIGN_STOP | {"s", "user's"}
_WEAK = 0.6  # a content word matched below this is poorly matched
_ADDED = 0.5  # a word only one side says, with nothing on the other side this close, adds information
_NONE = dict.fromkeys(TOKEN_FEATURES, 0.0)  # no evidence: a script the model cannot read, or no vectors


def _content(words: list[str]) -> np.ndarray:
    return np.array([bool(re.search(r"\w", w)) and w.lower() not in _STOP for w in words], dtype=bool)


def _only(words: list[str], mask: np.ndarray, other: list[str]) -> list[int]:
    """Indexes of the content words the other side does not say (case aside)."""
    said = {w.lower() for w in other}
    return [i for i, (w, m) in enumerate(zip(words, mask)) if m and w.lower() not in said]


def _substitution(sim: np.ndarray, only_old: list[int], only_new: list[int]) -> tuple[float, float]:
    """How close the words only the old fact says are to the words only the new one says (1: none differ)."""
    if not only_old and not only_new:
        return 1.0, 1.0
    if not only_old or not only_new:
        return 0.0, 0.0
    sub = sim[np.ix_(only_old, only_new)]
    return (float(min(sub.max(axis=1).min(), sub.max(axis=0).min())),
            float((sub.max(axis=1).mean() + sub.max(axis=0).mean()) / 2))


def _align(old: tuple[list[str], np.ndarray], new: tuple[list[str], np.ndarray]) -> dict[str, float]:
    (w_old, v_old), (w_new, v_new) = old, new
    m_old, m_new = _content(w_old), _content(w_new)
    if not m_old.any() or not m_new.any():
        return _NONE | {"tok_precision": 1.0, "tok_recall": 1.0, "tok_f1": 1.0, "tok_min": 1.0, "tok_min_old": 1.0,
                        "tok_min_new": 1.0, "tok_diff_min": 1.0, "tok_diff_mean": 1.0, "tok_sub_min": 1.0,
                        "tok_sub_mean": 1.0}
    sim = np.asarray(v_old, dtype=np.float64) @ np.asarray(v_new, dtype=np.float64).T
    best_old, best_new = sim.max(axis=1), sim.max(axis=0)
    recall, precision = float(best_old[m_old].mean()), float(best_new[m_new].mean())
    both = np.concatenate([best_old[m_old], best_new[m_new]])
    only_old, only_new = _only(w_old, m_old, w_new), _only(w_new, m_new, w_old)
    differing = np.concatenate([best_old[only_old], best_new[only_new]]) if only_old or only_new else np.ones(1)
    sub_min, sub_mean = _substitution(sim, only_old, only_new)
    return {"tok_precision": precision, "tok_recall": recall,
            "tok_f1": 2 * precision * recall / max(precision + recall, 1e-9), "tok_min": float(both.min()),
            "tok_min_old": float(best_old[m_old].min()), "tok_min_new": float(best_new[m_new].min()),
            "tok_weak": float((both < _WEAK).sum()) / 3, "tok_diff_min": float(differing.min()),
            "tok_diff_mean": float(differing.mean()), "tok_sub_min": sub_min, "tok_sub_mean": sub_mean,
            "tok_added_old": float((best_old[only_old] < _ADDED).sum()) / 3,
            "tok_added_new": float((best_new[only_new] < _ADDED).sum()) / 3,
            "tok_only_old": len(only_old) / 6, "tok_only_new": len(only_new) / 6}


def contextual(existing: str, new: str, states: WordStates | None, readable: bool) -> dict[str, float]:
    """The alignment features of a pair; "no evidence" (zeros) without ``states``, when the model cannot read
    the script (``readable`` false), or when the embedder is down (``states`` gives no answer)."""
    if states is None or not readable:
        return dict(_NONE)
    found = states([existing, new])
    return _align(found[0], found[1]) if len(found) == 2 else dict(_NONE)
