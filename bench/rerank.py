"""Fit the learned reranking stage (``hippo.core.recall.rerank``) on both development files, and measure it.

Reads the candidate pools ``bench/features.py`` dumped (LoCoMo development, categories 1-4; and
LongMemEval development, turn level), rebuilds from each what recall hands the stage (own relevance
with the default fusion and named-period preference, the best 20 candidates' conversation
neighbours joined, lengths), computes the features with the library's own ``rerank.features``, and
fits a logistic regression (numpy Newton steps, standardised features, an L2 penalty, gold and
non-gold weighted equally, each LongMemEval question weighted ``--lme-weight`` times a LoCoMo one
so that its 91 questions are not drowned by LoCoMo's 1,000).

First it reports five-fold cross-validated figures (LoCoMo folded by conversation, LongMemEval by
question; every pool scored by a model fitted without its fold) beside the default ranking of the
same pools; then it fits on everything and writes ``src/hippo/core/rerank_model.json``.

    python bench/rerank.py [--features bench/.cache/features.pkl] [--lme-weight 20] [--write] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
from pathlib import Path

import numpy as np

from hippo.core.fusion import Fusion
from hippo.core.recall.rerank import FEATURES, MODEL_PATH, SEEDS, Pool, features

FUSION = Fusion(vector_weight=0.6)
PREFERENCE = 0.2
CACHE = Path(__file__).resolve().parent / ".cache"


def pool_of(dumped: dict) -> tuple[Pool, np.ndarray, int]:
    """The stage's input as recall builds it from one dumped pool; which ids are gold; how many gold."""
    ids, pooled = dumped["ids"], dumped["pooled"]
    cos = dict(zip(ids, map(float, dumped["cos"])))
    bm25 = {i: float(b) for i, b, found in zip(ids, dumped["bm25"], dumped["has_bm25"]) if found}
    best = max(bm25.values(), default=0.0)
    preferred = frozenset(i for i, d in zip(ids, dumped["dated"]) if d)
    relevance = {}
    for i, inside in zip(ids, pooled):
        if inside:
            own = FUSION.relevance(cos[i], bm25[i] / best if i in bm25 and best > 0 else None)
            relevance[i] = min(1.0, own + PREFERENCE) if i in preferred else own
    seeds = sorted(relevance, key=lambda i: (-relevance[i], i))[:SEEDS]
    near = {s: [(o, d) for o, d, _, _ in dumped["near"].get(s, [])] for s in seeds}
    joined = [o for others in near.values() for o, _ in others if o not in relevance]
    for o in joined:
        relevance[o] = FUSION.relevance(cos.get(o, 0.0), None)
    order = [i for i, inside in zip(ids, pooled) if inside] + list(dict.fromkeys(joined))
    gold = dict(zip(ids, dumped["gold"]))
    pool = Pool(order, relevance, {i: cos[i] for i in order if i in cos}, bm25, preferred,
                {i: len(dumped["texts"].get(i, "")) for i in order}, near, frozenset(joined))
    return pool, np.array([bool(gold.get(i)) for i in order]), int(dumped["n_gold"])


def measures(scores: np.ndarray, gold: np.ndarray, n_gold: int) -> dict[str, float]:
    order = np.lexsort((np.arange(len(scores)), -scores))
    hit = gold[order]
    ideal = sum(1 / math.log2(r + 2) for r in range(min(10, n_gold)))
    out = {f"R@{k}": hit[:k].sum() / n_gold for k in (5, 10, 20)}
    out["nDCG@10"] = sum(1 / math.log2(r + 2) for r in range(min(10, len(hit))) if hit[r]) / ideal
    return out


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float = 1.0, steps: int = 25) -> tuple[np.ndarray, float]:
    """Weighted, class-balanced L2 logistic regression by Newton steps; weights on raw features."""
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / std, np.ones((len(x), 1))])
    balance = np.where(y, 0.5 / max(1e-9, (weight * y).sum()), 0.5 / max(1e-9, (weight * ~y).sum()))
    w = weight * balance * len(x)
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ beta)))
        gradient = z.T @ (w * (p - y)) + penalty * beta
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        beta -= np.linalg.solve(hessian, gradient)
    weights = beta[:-1] / std
    return weights, float(beta[-1] - (weights * mean).sum())


def folds(data: dict) -> dict[str, list[tuple[Pool, np.ndarray, int, np.ndarray, int]]]:
    """Per file, each question's pool, gold, gold count, features and fold (LoCoMo: contiguous
    blocks, which keep its conversations apart; LongMemEval: question number mod 5)."""
    out = {}
    for name in ("locomo", "lme_turn"):
        pools = [p for p in data[name] if p.get("category") != 5]
        rows = []
        for n, dumped in enumerate(pools):
            pool, gold, n_gold = pool_of(dumped)
            fold = n * 5 // len(pools) if name == "locomo" else n % 5
            rows.append((pool, gold, n_gold, features(pool, FUSION), fold))
        out[name] = rows
    return out


def default_scores(pool: Pool) -> np.ndarray:
    """Recall's default order of the same pool: own relevance plus what context lends."""
    x = features(pool, FUSION)
    rel, c1, c2 = (x[:, FEATURES.index(name)] for name in ("relevance", "context_1", "context_2"))
    return rel + (1 - rel) * np.minimum(1.0, 0.5 * c1 + 0.25 * c2)


def cross_validated(rows: dict, lme_weight: float, l2: float) -> dict:
    scored: dict[str, list[dict]] = {name: [] for name in rows}
    for fold in range(5):
        train = [(r, lme_weight if name == "lme_turn" else 1.0) for name in rows for r in rows[name] if r[4] != fold]
        x = np.vstack([r[3] for r, _ in train])
        y = np.concatenate([r[1] for r, _ in train])
        w = np.concatenate([np.full(len(r[1]), wt) for r, wt in train])
        weights, bias = fit(x, y, w, l2)
        for name in rows:
            for _, gold, n_gold, feats, f in rows[name]:
                if f == fold:
                    scored[name].append(measures(feats @ weights + bias, gold, n_gold))
    return {name: {k: float(np.mean([m[k] for m in ms])) for k in ms[0]} for name, ms in scored.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", type=Path, default=CACHE / "features.pkl")
    parser.add_argument("--lme-weight", type=float, default=20.0)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--write", action="store_true", help=f"fit on everything and write {MODEL_PATH.name}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = folds(pickle.loads(args.features.read_bytes()))
    report = {"default": {name: {k: float(np.mean([measures(default_scores(r[0]), r[1], r[2])[k] for r in rs]))
                                 for k in ("R@5", "R@10", "R@20", "nDCG@10")} for name, rs in rows.items()},
              "learned, 5-fold": cross_validated(rows, args.lme_weight, args.l2)}
    if args.write:
        x = np.vstack([r[3] for rs in rows.values() for r in rs])
        y = np.concatenate([r[1] for rs in rows.values() for r in rs])
        w = np.concatenate([np.full(len(r[1]), args.lme_weight if name == "lme_turn" else 1.0)
                            for name, rs in rows.items() for r in rs])
        weights, bias = fit(x, y, w, args.l2)
        MODEL_PATH.write_text(json.dumps({
            "trained_on": "local:all-MiniLM-L6-v2", "fitted_by": "bench/rerank.py",
            "lme_weight": args.lme_weight, "l2": args.l2, "features": list(FEATURES),
            "weights": [round(float(v), 6) for v in weights], "bias": round(bias, 6),
            "cross_validated": report["learned, 5-fold"]}, indent=1) + "\n", encoding="utf-8")
        report["in sample"] = {name: {k: float(np.mean([measures(r[3] @ weights + bias, r[1], r[2])[k] for r in rs]))
                                      for k in ("R@5", "R@10", "R@20", "nDCG@10")} for name, rs in rows.items()}
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for row, files in report.items():
            print(f"{row:18s} " + "   ".join(f"{name}: " + " ".join(f"{k} {v:.3f}" for k, v in m.items())
                                             for name, m in files.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
