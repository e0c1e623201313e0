"""The learned stage refitted on the development halves of all three files, with keyword evidence
kept non-negative (issue 47), measured offline.

``bench/rerank.py`` fits the stage on LoCoMo and LongMemEval (turn level). This adds the small
stores' development halves (both files: lexical traps and natural overlap) to the training set,
and four features that let a model tell a small store from a large one: smallness
``max(0, ln 1000 - ln N) / ln 1000`` (N: the memories of the store) and its products with the
keyword score, the cosine and the relevance. A model fitted freely learns, from the lexical-traps
file, that in a small store a memory sharing the question's words is less likely the answer; so
the fit here can also hold every weight of keyword evidence at zero or above (an active set: a
constrained weight that comes out negative is fixed at zero and the rest refitted). LoCoMo and
LongMemEval are five-fold cross-validated as in ``bench/rerank.py``; the small stores are scored
on their test halves by models fitted without them.

    python bench/refit.py [--features bench/.cache/features.pkl] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rerank  # noqa: E402
from locomo import paired_ci  # noqa: E402

from hippo.core.recall.rerank import FEATURES, features  # noqa: E402

EXTRA = ("smallness", "keyword x smallness", "similarity x smallness", "relevance x smallness")
NAMES = FEATURES + EXTRA
KEYWORD = tuple(NAMES.index(n) for n in ("keyword", "keyword_found", "keyword_rank", "keyword x smallness"))


def row_of(dumped: dict, fold: int) -> tuple:
    pool, gold, n_gold = rerank.pool_of(dumped)
    x = features(pool, rerank.FUSION)
    small = max(0.0, math.log(1000) - math.log(max(1, dumped["store_size"]))) / math.log(1000)
    col = {n: x[:, FEATURES.index(n)] for n in ("keyword", "similarity", "relevance")}
    extra = np.stack([np.full(len(x), small), col["keyword"] * small, col["similarity"] * small,
                      col["relevance"] * small], axis=1)
    return pool, gold, n_gold, np.hstack([x, extra]), fold


def rows_of(data: dict) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for name in ("locomo", "lme_turn"):
        pools = [p for p in data[name] if p.get("category") != 5]
        out[name] = [row_of(p, n * 5 // len(pools) if name == "locomo" else n % 5) for n, p in enumerate(pools)]
    for name in ("small", "natural"):
        for split in ("dev", "test"):
            # dev cases train in every fold; test cases are scored once (fold -1: never trained on)
            out[f"{name} {split}"] = [row_of(p, 99 if split == "dev" else -1)
                                      for p in data[name] if p["split"] == split]
    return out


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, nonnegative: bool, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """rerank.fit; with ``nonnegative`` the keyword weights that come out negative are fixed at zero."""
    free = np.ones(x.shape[1], dtype=bool)
    while True:
        weights, bias = rerank.fit(x[:, free], y, w, l2)
        full = np.zeros(x.shape[1])
        full[free] = weights
        negative = [i for i in KEYWORD if free[i] and full[i] < 0] if nonnegative else []
        if not negative:
            return full, bias
        free[negative] = False


WEIGHTS = {"locomo": 1.0, "lme_turn": 20.0, "small dev": 8.0, "natural dev": 8.0}


def scored(rows: dict, nonnegative: bool, small: bool) -> tuple[dict[str, list[dict]], np.ndarray]:
    """Per file, each question's measures under a model fitted without it; and the model fitted on all."""
    train_files = [n for n in WEIGHTS if small or n in ("locomo", "lme_turn")]
    out: dict[str, list[dict]] = {name: [] for name in rows}
    columns = slice(None) if small else slice(0, len(FEATURES))
    last = None
    for fold in range(5):
        train = [(r, WEIGHTS[n]) for n in train_files for r in rows[n] if r[4] != fold]
        x = np.vstack([r[3][:, columns] for r, _ in train])
        y = np.concatenate([r[1] for r, _ in train])
        w = np.concatenate([np.full(len(r[1]), wt) for r, wt in train])
        weights, bias = fit(x, y, w, nonnegative)
        last = weights
        for name, rs in rows.items():
            for _, gold, n_gold, feats, f in rs:
                if f == fold or (f == -1 and fold == 0) or (f == 99 and fold == 0 and not small):
                    out[name].append(measures(feats[:, columns] @ weights + bias, gold, n_gold))
    return out, last


def measures(scores: np.ndarray, gold: np.ndarray, n_gold: int) -> dict[str, float]:
    m = rerank.measures(scores, gold, n_gold)
    order = np.lexsort((np.arange(len(scores)), -scores))
    m["top1"] = float(gold[order][0]) if len(order) else 0.0
    return m


SHOW = {"locomo": ("R@5", "R@10"), "lme_turn": ("R@5", "nDCG@10"), "small test": ("top1",), "natural test": ("top1",)}


def _shown(name: str, value: Any) -> str:
    return f"{name} {value:.3f}" if isinstance(value, float) else \
        f"{name} {value[0]:+.3f} [{value[1]:+.3f}, {value[2]:+.3f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", type=Path, default=rerank.CACHE / "features.pkl")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = rows_of(pickle.loads(args.features.read_bytes()))
    default = {n: [measures(rerank.default_scores(r[0]), r[1], r[2]) for r in rs] for n, rs in rows.items()}
    report: dict = {}
    for label, nonneg, small in (("two files (as released)", False, False),
                                 ("three files, free", False, True),
                                 ("three files, keyword >= 0", True, True)):
        got, weights = scored(rows, nonneg, small)
        report[label] = {n: {k: float(np.mean([m[k] for m in got[n]])) for k in SHOW[n]} for n in SHOW}
        report[label]["top-1 - default, test halves"] = {
            n: paired_ci([m["top1"] for m in got[n]], [m["top1"] for m in default[n]])
            for n in ("small test", "natural test")}
        report[label]["weights"] = dict(zip(NAMES, map(float, weights)))
    report["default (offline)"] = {n: {k: float(np.mean([m[k] for m in default[n]])) for k in SHOW[n]} for n in SHOW}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for label, files in report.items():
        print(label)
        for n, m in files.items():
            if n != "weights":
                print(f"  {n:28} " + "  ".join(_shown(k, v) for k, v in m.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
