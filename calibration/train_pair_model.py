"""Train the offline pair classifier (``hippo.core.facts.pairs``) on the tuning pairs only.

Reads the tuning files: ``fact_pairs.jsonl`` (226 pairs), ``fact_pairs_train.jsonl``
(hand-written tuning pairs) and ``fact_pairs_test.jsonl`` (the first test set, retired
into tuning after it had been measured four times); computes the features of
:mod:`hippo.core.facts.pairs` with the local all-MiniLM-L6-v2 embedder (sentence cosine,
single-word vectors and contextual word vectors), fits a
multinomial logistic regression with L2 in numpy (full-batch gradient descent,
deterministic), and writes ``src/hippo/core/pair_model.json``.

Cross-validation is grouped by the existing fact (pairs that share it stay in one
fold) and repeated over fixed seeds. The decision thresholds (``duplicate_min``,
``supersedes_min``) are chosen on out-of-fold probabilities (grouped 4-fold inside
the data at hand): the pair of thresholds with the best accuracy among those that
keep wrong merges at or below ``--max-wrong-merge-rate`` (0.5%) of the non-duplicate
pairs. Duplicates are also vetoed outright when a number, a name or a person differs,
when two relations ("lives" / "works") or two members of a closed class ("Monday" /
"Friday") differ, when one fact hedges ("wants to", "plans") and the other does not, or when two
different texts share one vector.
The reported CV scores use thresholds chosen inside each training split
(nested), so they are not tuned on the fold they score; they are reported for the
model alone and through ``remember_facts``' bands as ``measure_offline.py`` applies
them (the same words: duplicate; a cosine under the ambiguous floor: distinct).
``--compare`` also reports the CV without the contextual-word features
(:data:`hippo.core.facts.pair_tokens.TOKEN_FEATURES`).

No other pair file is read here: a held-out test set must never reach this script.

    .venv/bin/python calibration/train_pair_model.py [--l2 20] [--folds 5] [--repeats 3] [--compare]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from hippo.core.facts.pair_tokens import TOKEN_FEATURES
from hippo.core.facts.pairs import FEATURES, LABELS, MODEL_PATH, decide, features, pair_probabilities
from hippo.core.facts.recognition import same_words
from hippo.providers.registry import create_embedder

HERE = Path(__file__).resolve().parent
TUNING = (HERE / "fact_pairs.jsonl", HERE / "fact_pairs_train.jsonl", HERE / "fact_pairs_test.jsonl")
VETOES = ("num_diff", "name_diff", "person_diff", "degenerate", "lex_clash", "class_clash", "hedge_diff")
DUP_GRID = np.round(np.arange(0.40, 0.96, 0.025), 3)
SUP_GRID = np.round(np.arange(0.30, 0.71, 0.05), 3)


def load_rows(paths: tuple[Path, ...]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        rows += [{**json.loads(line), "source": path.name}
                 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


def featurize(rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrix and sentence cosines with the real local embedder (words and texts cached across pairs)."""
    embedder = create_embedder("local")
    cache: dict[str, np.ndarray] = {}

    def embed(words: list[str]) -> np.ndarray:
        missing = [w for w in dict.fromkeys(words) if w not in cache]
        if missing:
            cache.update(zip(missing, np.asarray(embedder.embed_documents(missing))))
        return np.stack([cache[w] for w in words])

    word_states: dict[str, tuple[list[str], np.ndarray]] = {}

    def states(texts: list[str]) -> list[tuple[list[str], np.ndarray]]:
        missing = [t for t in dict.fromkeys(texts) if t not in word_states]
        if missing:
            for start in range(0, len(missing), 64):
                batch = missing[start:start + 64]
                word_states.update(zip(batch, embedder.word_states(batch)))
        return [word_states[t] for t in texts]

    states([t for r in rows for t in (r["existing"], r["new"])])

    old = np.asarray(embedder.embed_documents([r["existing"] for r in rows]))
    new = np.asarray(embedder.embed_documents([r["new"] for r in rows]))
    sims = np.sum(old * new, axis=1)
    x = np.stack([features(r["existing"], r["new"], float(s), embed, states) for r, s in zip(rows, sims)])
    return x, sims


def through_bands(rows: list[dict[str, Any]], sims: np.ndarray, pred: list[str], floor: float) -> list[str]:
    """What ``remember_facts`` does offline with the model's verdicts: the same words merge, a cosine under
    the ambiguous floor is a new fact, the rest is the model's (it also reads the pairs above the duplicate
    band, ``recognition.offline_bands``)."""
    return ["duplicate" if same_words(r["existing"], r["new"]) else "distinct" if s < floor else p
            for r, s, p in zip(rows, sims, pred)]


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 3000, lr: float = 0.5) -> dict[str, Any]:
    """Multinomial logistic regression on standardised features (gradient descent from zeros)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    xs = (x - mean) / scale
    onehot = np.eye(len(LABELS))[y]
    w, b = np.zeros((len(LABELS), x.shape[1])), np.zeros(len(LABELS))
    for _ in range(steps):
        z = xs @ w.T + b
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(y)
        w -= lr * (g.T @ xs + l2 * w / len(y))
        b -= lr * g.sum(axis=0)
    return {"mean": mean, "scale": scale, "weights": w, "bias": b, "vetoes": VETOES,
            "duplicate_min": 0.5, "supersedes_min": 0.5}


def predict(x: np.ndarray, model: dict[str, Any]) -> list[str]:
    probs = pair_probabilities(x, model)
    return [decide(xi, pi, model) for xi, pi in zip(x, probs)]


def scores(y: np.ndarray, pred: list[str]) -> dict[str, Any]:
    gold = [LABELS[i] for i in y]
    conf = {g: {p: sum(1 for a, b in zip(gold, pred) if a == g and b == p) for p in LABELS} for g in LABELS}
    return {"accuracy": sum(conf[g][g] for g in LABELS) / len(gold),
            "recall": {g: conf[g][g] / max(sum(conf[g].values()), 1) for g in LABELS},
            "merged_wrongly": conf["supersedes"]["duplicate"] + conf["distinct"]["duplicate"],
            "confusion": conf}


def group_folds(rows: list[dict[str, Any]], folds: int, seed: int) -> np.ndarray:
    """Fold index per pair; every pair with the same existing fact lands in the same fold."""
    keys = sorted({r["existing"] for r in rows})
    order = np.random.default_rng(seed).permutation(len(keys))
    fold_of = {keys[i]: n % folds for n, i in enumerate(order)}
    return np.array([fold_of[r["existing"]] for r in rows])


def inner_oof(x: np.ndarray, y: np.ndarray, rows: list[dict[str, Any]], l2: float, seed: int) -> np.ndarray:
    """Out-of-fold probabilities inside a training split (for choosing its thresholds)."""
    folds = group_folds(rows, 4, seed + 1000)
    probs = np.zeros((len(y), len(LABELS)))
    for k in range(4):
        m = fit(x[folds != k], y[folds != k], l2)
        probs[folds == k] = pair_probabilities(x[folds == k], m)
    return probs


def cross_validate(x: np.ndarray, y: np.ndarray, rows: list[dict[str, Any]],
                   args: argparse.Namespace) -> tuple[list[int], list[str]]:
    """Nested grouped CV: thresholds chosen on inner out-of-fold scores of each training split.

    Returns (row index, predicted label) for every held-out prediction of every repeat.
    """
    index: list[int] = []
    pred: list[str] = []
    for rep in range(args.repeats):
        folds = group_folds(rows, args.folds, args.seed + rep)
        for k in range(args.folds):
            tr, te = folds != k, folds == k
            sub_rows = [r for r, t in zip(rows, tr) if t]
            model = fit(x[tr], y[tr], args.l2)
            choose_on_probs(x[tr], y[tr], inner_oof(x[tr], y[tr], sub_rows, args.l2, args.seed + rep), model,
                            args.max_wrong_merge_rate)
            index += list(np.where(te)[0])
            pred += predict(x[te], model)
    return index, pred


def choose_on_probs(x: np.ndarray, y: np.ndarray, probs: np.ndarray, model: dict[str, Any], max_rate: float) -> None:
    """Like :func:`choose_thresholds`, on given (out-of-fold) probabilities."""
    allowed = max_rate * int((y != 0).sum())
    best: tuple[float, float, float] | None = None
    for dup in DUP_GRID:
        for sup in SUP_GRID:
            model["duplicate_min"], model["supersedes_min"] = float(dup), float(sup)
            s = scores(y, [decide(xi, pi, model) for xi, pi in zip(x, probs)])
            if s["merged_wrongly"] <= allowed and (best is None or s["accuracy"] > best[0] + 1e-9):
                best = (s["accuracy"], float(dup), float(sup))
    model["duplicate_min"], model["supersedes_min"] = (best[1], best[2]) if best else (1.01, 0.5)


def report(title: str, s: dict[str, Any], n: int) -> None:
    print(f"{title}: {n} predictions, accuracy {s['accuracy']:.3f}; merged wrongly {s['merged_wrongly']}")
    for g in LABELS:
        row = s["confusion"][g]
        print(f"  {g:10} recall {s['recall'][g]:.3f}   " + ", ".join(f"{p}: {row[p]}" for p in LABELS))


def cv_report(x: np.ndarray, y: np.ndarray, sims: np.ndarray, rows: list[dict[str, Any]], args: argparse.Namespace,
              title: str) -> None:
    index, pred = cross_validate(x, y, rows, args)
    report(f"{title}, model alone", scores(y[index], pred), len(pred))
    banded = through_bands([rows[i] for i in index], sims[index], pred, args.floor)
    report(f"{title}, through the bands (floor {args.floor})", scores(y[index], banded), len(pred))
    for source in TUNING:
        keep = [k for k, i in enumerate(index) if rows[i]["source"] == source.name]
        report(f"{title}, through the bands, held-out pairs of {source.name}",
               scores(y[[index[k] for k in keep]], [banded[k] for k in keep]), len(keep))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--l2", type=float, default=20.0)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-wrong-merge-rate", type=float, default=0.005)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--floor", type=float, default=0.45, help="the embedder's ambiguous band floor")
    parser.add_argument("--compare", action="store_true", help="also report the CV without the token features")
    args = parser.parse_args(argv)
    rows = load_rows(TUNING)
    y = np.array([LABELS.index(r["label"]) for r in rows])
    x, sims = featurize(rows)
    title = f"grouped {args.folds}-fold CV x{args.repeats}, nested thresholds, {len(rows)} pairs"
    if args.compare:
        base = [i for i, name in enumerate(FEATURES) if name not in TOKEN_FEATURES]
        cv_report(x[:, base], y, sims, rows, args, f"{title}, without token features")
    cv_report(x, y, sims, rows, args, title)
    model = fit(x, y, args.l2)
    probs = inner_oof(x, y, rows, args.l2, args.seed)
    choose_on_probs(x, y, probs, model, args.max_wrong_merge_rate)
    print(f"final thresholds: duplicate_min {model['duplicate_min']}, supersedes_min {model['supersedes_min']}")
    report("in-sample (final model)", scores(y, predict(x, model)), len(y))
    if not args.no_write:
        out = {"features": list(FEATURES), "labels": list(LABELS), "l2": args.l2, "trained_on": len(rows),
               **{k: (v.round(6).tolist() if isinstance(v, np.ndarray) else v) for k, v in model.items()}}
        out["vetoes"] = list(VETOES)
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
