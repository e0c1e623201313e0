"""What peers do without an LLM, measured on hippo's three development files from the dumped pools.

Issue 47 names the methods systems with the same all-MiniLM-L6-v2 and no LLM use on LongMemEval:
a keyword-overlap boost on the cosine (MemPalace), a proper-name boost, a session's evidence beside
its turns', a preference for memories observed near the question's date, a preference statement
recognised as such; and hippo's own learned stage. Each is scored here on the same candidate pools
(``bench/features.py``: recall's own pool, a deep one, with each candidate's cosine, raw keyword
score, text, session, time of observation and gold flag) beside cosine alone, BM25 alone and hippo's
default fusion (reproduced offline as ``bench/rerank.py`` does), with paired-bootstrap intervals of
each method's margin over the best single signal of the file.

    python bench/features.py            # once: the pools (LoCoMo, LongMemEval turn and session, small stores)
    python bench/peers.py [--features bench/.cache/features.pkl] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import re
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rerank as fitted  # noqa: E402
from locomo import paired_ci  # noqa: E402

from hippo.core.recall.rerank import features, load_model  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".cache"
_WORD = re.compile(r"[a-z0-9]+")
_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b([A-Z][a-z]+(?:[A-Z][a-z]+)?)\b")
_PREFERENCE = re.compile(r"\b(i|user)\s+(really\s+)?(prefer|like|love|enjoy|hate|dislike|avoid|can't stand|"
                         r"am (?:a )?(?:big )?fan of|favou?rite)\b", re.I)

Score = Callable[[dict], np.ndarray]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def overlap(pool: dict) -> np.ndarray:
    """The share of the question's keywords (stop words out, crudely stemmed) each candidate's text holds."""
    terms = {_stem(t) for t in pool["terms"]}
    if not terms:
        return np.zeros(len(pool["ids"]))
    out = []
    for i in pool["ids"]:
        words = {_stem(w) for w in _WORD.findall(pool["texts"].get(i, "").lower())}
        out.append(len(terms & words) / len(terms))
    return np.array(out)


def names(pool: dict) -> np.ndarray:
    """Whether a candidate's text names a proper name of the question (a capitalised word not first)."""
    found = {n.lower() for n in _NAME.findall(pool["question"])}
    if not found:
        return np.zeros(len(pool["ids"]))
    return np.array([float(any(n in pool["texts"].get(i, "").lower() for n in found)) for i in pool["ids"]])


def session_best(pool: dict, base: np.ndarray) -> np.ndarray:
    """Per candidate, the best score ``base`` gives any candidate of its session (itself included)."""
    best: dict[Any, float] = {}
    sessions = [pool["sessions"].get(i) for i in pool["ids"]]
    for s, b in zip(sessions, base):
        if s is not None:
            best[s] = max(best.get(s, -1e9), float(b))
    return np.array([best.get(s, float(b)) if s is not None else float(b) for s, b in zip(sessions, base)])


def proximity(pool: dict, days: float = 30.0) -> np.ndarray:
    """exp(-|asked - observed| / days): near the question's date is near 1."""
    gap = np.array([abs(pool["asked"] - pool["observed"].get(i, pool["asked"])) for i in pool["ids"]]) / 86400.0
    return np.exp(-gap / days)


_AGO = re.compile(r"\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a couple of|a few)\s+"
                  r"(day|week|month|year)s?\s+ago\b|\blast\s+(week|month|year)\b|\b(recently|yesterday)\b", re.I)
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}
_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def offset(question: str) -> tuple[float, float] | None:
    """The time a question points back to, in days before it is asked, and a window around it
    ("four weeks ago": 28 days, 14 either side; "last month": 30, 15; "recently": 0, 30)."""
    found = _AGO.search(question)
    if not found:
        return None
    count, unit, last, word = found.groups()
    if word:
        return (1.0, 2.0) if word.lower() == "yesterday" else (0.0, 30.0)
    if last:
        return float(_DAYS[last.lower()]), _DAYS[last.lower()] / 2
    n = _COUNT.get(count.lower()) or float(count)
    return n * _DAYS[unit.lower()], max(2.0, n * _DAYS[unit.lower()] / 2)


def aimed(pool: dict) -> np.ndarray:
    """MemPalace's date boost: up to 0.4 for a memory observed at the time the question points to."""
    target = offset(pool["question"])
    if target is None:
        return np.zeros(len(pool["ids"]))
    days, window = target
    at = pool["asked"] - days * 86400
    gap = np.array([abs(pool["observed"].get(i, at) - at) for i in pool["ids"]]) / 86400.0
    return 0.4 * np.maximum(0.0, 1.0 - gap / window)


def hybrid(pool: dict, weight: float = 0.3) -> np.ndarray:
    """MemPalace's hybrid: the cosine distance cut by up to ``weight`` for keyword overlap, as a similarity."""
    return 1.0 - (1.0 - pool["cos"]) * (1.0 - weight * overlap(pool))


def preference(pool: dict) -> np.ndarray:
    return np.array([float(bool(_PREFERENCE.search(pool["texts"].get(i, "")))) for i in pool["ids"]])


def keyword(pool: dict) -> np.ndarray:
    bm = np.where(pool["has_bm25"], pool["bm25"], 0.0)
    return bm / bm.max() if bm.max() > 0 else bm


def default(pool: dict) -> np.ndarray:
    """hippo's released default on this pool (fusion, named period, context), as bench/rerank.py rebuilds it."""
    built, _, _ = fitted.pool_of(pool)
    order = {i: n for n, i in enumerate(built.ids)}
    scores = fitted.default_scores(built)
    return np.array([scores[order[i]] if i in order else -1.0 for i in pool["ids"]])


def learned(pool: dict) -> np.ndarray:
    built, _, _ = fitted.pool_of(pool)
    order = {i: n for n, i in enumerate(built.ids)}
    scores = load_model().probability(features(built, fitted.FUSION))
    return np.array([scores[order[i]] if i in order else -1.0 for i in pool["ids"]])


def keyword_as(pool: dict, side: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """hippo's default with its keyword side replaced by ``side(scaled BM25, overlap)``."""
    made = side(keyword(pool), overlap(pool))
    return default({**pool, "bm25": made, "has_bm25": np.asarray(pool["has_bm25"]) | (made > 0)})


def fused(pool: dict) -> np.ndarray:
    """hippo's fusion without context: 0.6 cosine + 0.4 keyword scaled against the pool's best."""
    return 0.6 * pool["cos"] + 0.4 * keyword(pool)


METHODS: dict[str, Score] = {
    "cosine": lambda p: p["cos"],
    "bm25": lambda p: np.where(p["has_bm25"], p["bm25"], -1.0),
    "hippo default": default,
    "hippo learned": learned,
    "fusion, no context": fused,
    "cosine x (1 + 0.3 overlap)": lambda p: p["cos"] * (1 + 0.3 * overlap(p)),
    "MemPalace hybrid (w 0.3)": hybrid,
    "MemPalace hybrid (w 0.5)": lambda p: hybrid(p, 0.5),
    "MemPalace hybrid + date aim": lambda p: 1.0 - (1.0 - hybrid(p)) * (1.0 - aimed(p)),
    "default + date aim": lambda p: default(p) + aimed(p) / 2,
    "cosine + 0.3 overlap": lambda p: p["cos"] + 0.3 * overlap(p),
    "cosine + 0.3 overlap + 0.1 name": lambda p: p["cos"] + 0.3 * overlap(p) + 0.1 * names(p),
    "default + 0.1 name": lambda p: default(p) + 0.1 * names(p),
    "cosine + 0.5 session best": lambda p: p["cos"] + 0.5 * session_best(p, p["cos"]),
    "default + 0.3 session best": lambda p: default(p) + 0.3 * session_best(p, fused(p)),
    "overlap boost + 0.3 session": lambda p: (lambda b: b + 0.3 * session_best(p, b))(
        p["cos"] * (1 + 0.3 * overlap(p))),
    "default + 0.1 proximity": lambda p: default(p) + 0.1 * proximity(p),
    "overlap boost + 0.1 proximity": lambda p: p["cos"] * (1 + 0.3 * overlap(p)) + 0.1 * proximity(p),
    "default + 0.1 preference": lambda p: default(p) + 0.1 * preference(p),
    "default + overlap boost": lambda p: default(p) + 0.3 * overlap(p) * (1 - p["cos"]),
    "default, keyword side = overlap": lambda p: keyword_as(p, lambda kw, ov: ov),
    "default, keyword side = BM25 x overlap": lambda p: keyword_as(p, lambda kw, ov: kw * ov),
}


def measures(scores: np.ndarray, gold: np.ndarray, n_gold: int) -> dict[str, float]:
    order = np.lexsort((np.arange(len(scores)), -scores))
    hit = np.asarray(gold, dtype=bool)[order]
    first = int(np.argmax(hit)) + 1 if hit.any() else None
    ideal = sum(1 / math.log2(r + 2) for r in range(min(10, n_gold)))
    return {"R@5": hit[:5].sum() / n_gold, "R@10": hit[:10].sum() / n_gold,
            "nDCG@10": sum(1 / math.log2(r + 2) for r in range(min(10, len(hit))) if hit[r]) / ideal,
            "top1": float(first == 1), "MRR": 1.0 / first if first else 0.0}


FILES = {"locomo": ("R@5", "R@10"), "lme_turn": ("R@5", "nDCG@10"), "lme_session": ("R@5", "R@10"),
         "small dev": ("top1", "MRR"), "small test": ("top1", "MRR"),
         "natural dev": ("top1", "MRR"), "natural test": ("top1", "MRR")}


def pools_of(data: dict) -> dict[str, list[dict]]:
    out = {"locomo": [p for p in data.get("locomo", []) if p.get("category") != 5],
           "lme_turn": data.get("lme_turn", []), "lme_session": data.get("lme_session", [])}
    for name in ("small", "natural"):
        for split in ("dev", "test"):
            out[f"{name} {split}"] = [p for p in data.get(name, []) if p["split"] == split]
    return {name: pools for name, pools in out.items() if pools}


def run(data: dict) -> dict[str, dict[str, Any]]:
    report: dict[str, dict[str, Any]] = {}
    for name, pools in pools_of(data).items():
        per = {m: [measures(score(p), p["gold"], p["n_gold"]) for p in pools] for m, score in METHODS.items()}
        first = FILES[name][0]
        best = max(("cosine", "bm25"), key=lambda m: np.mean([x[first] for x in per[m]]))
        report[name] = {"questions": len(pools), "best single": best, "methods": {
            m: {**{k: float(np.mean([x[k] for x in xs])) for k in FILES[name]},
                f"{first} - {best}": paired_ci([x[first] for x in xs], [x[first] for x in per[best]])}
            for m, xs in per.items()}}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", type=Path, default=CACHE / "features.pkl")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(pickle.loads(args.features.read_bytes()))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for name, r in report.items():
        first = FILES[name][0]
        print(f"\n{name} ({r['questions']} questions; margin over {r['best single']}, paired bootstrap)")
        for m, x in r["methods"].items():
            mean, low, high = x[f"{first} - {r['best single']}"]
            print(f"  {m:34} " + "  ".join(f"{k} {x[k]:.3f}" for k in FILES[name])
                  + f"   {mean:+.3f} [{low:+.3f}, {high:+.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
