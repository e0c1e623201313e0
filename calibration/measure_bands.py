"""Measure the recognition bands (seed 000, "Recognition") for one embedder.

Every hand-labelled pair in ``fact_pairs.jsonl`` (existing fact, new fact,
label duplicate | supersedes | distinct) is embedded and scored by cosine
similarity. On a grid 0.50..0.99 (step 0.01) two thresholds are chosen:

* ``duplicate`` - the lowest t such that, among pairs with cosine >= t, at least
  ``--dup-precision`` (default 0.95) are labelled duplicate. At or above it a
  new fact is auto-classified DUPLICATE.
* ``ambiguous`` - the highest t such that, among pairs with cosine < t, at least
  ``--new-precision`` (default 0.95) are labelled distinct. Below it a new fact
  is auto-classified NEW; between the two an LLM decides.

A target no grid value meets is reported as ``met: false``: the DUPLICATE band
is then closed (threshold 1.01, never auto-merge, so nothing is lost) and
``ambiguous`` falls back to the grid floor (``--grid-min``). Pairs whose two
different texts get the same vector (cosine >= 0.9999; e.g. Thai, which MiniLM
tokenizes to a single [UNK]) are counted and can be left out with
``--exclude-degenerate``.

The three-band classifier is scored on the file (auto-DUPLICATE and auto-NEW
precision and counts, share sent to the LLM, accuracy of the offline fallback
that treats the ambiguous band as DISTINCT) next to the seed's bands 0.93/0.78
(set for text-embedding-3-small). Stratified k-fold cross-validation (choose on
k-1 folds, score the held-out fold, average) shows how much is fit to the file.

    .venv/bin/python calibration/measure_bands.py [--embedder local] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hippo.core.facts.offline import relation
from hippo.core.facts.recognition import same_words
from hippo.providers.registry import create_embedder

PAIRS = Path(__file__).with_name("fact_pairs.jsonl")
LABELS = ("duplicate", "supersedes", "distinct")
CLOSED = 1.01  # a duplicate threshold no cosine reaches
SEED_BANDS = (0.93, 0.78)
QUANTILES = ("min", "q1", "median", "q3", "max")


def grid(lo: float) -> list[float]:
    """Thresholds lo..0.99 in steps of 0.01 (default lo 0.50)."""
    return [round(x, 2) for x in np.arange(round(lo * 100), 100) / 100]


@dataclass
class Report:
    duplicate: float
    ambiguous: float
    dup_count: int
    dup_precision: float | None  # share labelled duplicate among cosine >= duplicate
    new_count: int
    new_precision: float | None  # share labelled distinct among cosine < ambiguous
    llm_share: float  # share of pairs in [ambiguous, duplicate)
    fallback_accuracy: float  # ambiguous band treated as DISTINCT, no LLM
    perfect_llm_accuracy: float  # ambiguous band resolved correctly by an ideal LLM


def load_pairs(path: Path) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = [r for r in rows if r.get("label") not in LABELS]
    if bad:
        raise SystemExit(f"unknown labels in {path}: {bad[:3]}")
    return rows


def cosines(embedder: Any, rows: list[dict[str, str]]) -> np.ndarray:
    texts = sorted({r["existing"] for r in rows} | {r["new"] for r in rows})
    vecs = np.asarray(embedder.embed_documents(texts), dtype=np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = {t: i for i, t in enumerate(texts)}
    return np.array([float(vecs[index[r["existing"]]] @ vecs[index[r["new"]]]) for r in rows])


def _share(mask: np.ndarray, labels: np.ndarray, label: str) -> float | None:
    return float(np.mean(labels[mask] == label)) if mask.any() else None


def choose(
    sims: np.ndarray, labels: np.ndarray, dup_p: float, new_p: float, lo: float = 0.5
) -> tuple[float, float, bool, bool]:
    """Grid-search both thresholds; returns (duplicate, ambiguous, dup_met, new_met)."""
    g = grid(lo)
    dup = next((t for t in g if (p := _share(sims >= t, labels, "duplicate")) is not None and p >= dup_p), None)
    amb = max((t for t in g if (p := _share(sims < t, labels, "distinct")) is not None and p >= new_p), default=None)
    d = CLOSED if dup is None else dup
    return d, min(g[0] if amb is None else amb, d), dup is not None, amb is not None


def evaluate(sims: np.ndarray, labels: np.ndarray, dup: float, amb: float) -> Report:
    auto_dup, auto_new = sims >= dup, sims < amb
    middle = ~auto_dup & ~auto_new
    fallback = np.where(auto_dup, "duplicate", "distinct")
    perfect = (auto_dup & (labels == "duplicate")) | (auto_new & (labels == "distinct")) | middle
    dup_n, dup_p = int(auto_dup.sum()), _share(auto_dup, labels, "duplicate")
    new_n, new_p = int(auto_new.sum()), _share(auto_new, labels, "distinct")
    accuracy = float(np.mean(fallback == labels))
    return Report(dup, amb, dup_n, dup_p, new_n, new_p, float(middle.mean()), accuracy, float(perfect.mean()))


DEGENERATE = 0.9999  # different texts, one vector: never auto-DUPLICATE (hippo.core.facts.recognition)


def as_hippo_runs(rows: list[dict[str, str]], sims: np.ndarray, dup: float, amb: float) -> dict[str, Any]:
    """Decide every pair the way ``remember_facts`` does without an LLM, and score it.

    Same words -> duplicate; cosine >= dup (and not a degenerate 1.0) -> duplicate;
    cosine < amb -> new (a distinct insert); in between the offline rule
    (``hippo.core.facts.offline.relation``), distinct when it cannot read the pair.
    """
    decided: list[str] = []
    how: list[str] = []
    for row, sim in zip(rows, sims):
        if same_words(row["existing"], row["new"]):
            decided.append("duplicate"), how.append("text")
        elif dup <= sim < DEGENERATE:
            decided.append("duplicate"), how.append("band")
        elif sim < amb:
            decided.append("distinct"), how.append("band")
        else:
            decided.append(relation(row["existing"], row["new"]) or "distinct"), how.append("offline")
    got, want = np.array(decided), np.array([r["label"] for r in rows])
    confusion = {w: {g: int(((want == w) & (got == g)).sum()) for g in LABELS} for w in LABELS}
    lost = int(((got == "duplicate") & (want != "duplicate")).sum())
    in_band = np.array(how) == "offline"
    return {
        "duplicate": dup,
        "ambiguous": amb,
        "accuracy": float(np.mean(got == want)),
        "recall": {w: float(np.mean(got[want == w] == w)) for w in LABELS},
        "confusion": confusion,
        "lost_by_merge": lost,  # a change or a different fact merged into an old one
        "offline_share": float(in_band.mean()),
        "offline_accuracy": float(np.mean(got[in_band] == want[in_band])) if in_band.any() else None,
        # the same bands with a perfect LLM instead of the offline rule in between
        "perfect_llm_accuracy": float(np.mean((got == want) | in_band)),
    }


def print_hippo(title: str, d: dict[str, Any]) -> None:
    print(f"\n{title}: DUPLICATE at cosine >= {d['duplicate']:.3f}, NEW below {d['ambiguous']:.3f}, "
          "offline rule in between")
    print(f"  accuracy {_pct(d['accuracy'])}; recall " + ", ".join(
        f"{k} {_pct(v).strip()}" for k, v in d["recall"].items()))
    print(f"  ambiguous band decided by the offline rule: {_pct(d['offline_share'])} of pairs, "
          f"accuracy there {_pct(d['offline_accuracy'])}")
    print(f"  with a perfect LLM instead of the offline rule: accuracy {_pct(d['perfect_llm_accuracy'])}")
    print(f"  facts lost by a wrong merge (labelled supersedes/distinct, decided duplicate): {d['lost_by_merge']}")
    print("  confusion (rows: label, columns: decision)   " + "  ".join(f"{g:>10}" for g in LABELS))
    for w, row in d["confusion"].items():
        print(f"    {w:<41}" + "  ".join(f"{row[g]:10d}" for g in LABELS))


def cross_validate(
    sims: np.ndarray, labels: np.ndarray, dup_p: float, new_p: float, folds: int, seed: int, lo: float
) -> dict[str, float | None]:
    """Stratified k-fold: choose on k-1 folds, score on the rest, average per field."""
    fold_of, rng = np.empty(len(labels), dtype=int), random.Random(seed)
    for label in LABELS:
        idx = [i for i in range(len(labels)) if labels[i] == label]
        rng.shuffle(idx)
        fold_of[idx] = np.arange(len(idx)) % folds
    reports: list[dict[str, float | None]] = []
    met = [0, 0]
    for k in range(folds):
        train, test = fold_of != k, fold_of == k
        dup, amb, dup_met, new_met = choose(sims[train], labels[train], dup_p, new_p, lo)
        met = [met[0] + dup_met, met[1] + new_met]
        reports.append(asdict(evaluate(sims[test], labels[test], dup, amb)))
    out: dict[str, float | None] = {"folds_dup_met": met[0], "folds_new_met": met[1]}
    for key in reports[0]:
        values = [v for r in reports if (v := r[key]) is not None]
        out[key] = statistics.fmean(values) if values else None
    return out


def distribution(sims: np.ndarray, labels: np.ndarray) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for label in LABELS:
        qs = np.quantile(sims[labels == label], [0, 0.25, 0.5, 0.75, 1])
        out[label] = {"n": int((labels == label).sum()), **dict(zip(QUANTILES, map(float, qs)))}
    return out


def curve(sims: np.ndarray, labels: np.ndarray, lo: float) -> list[dict[str, float | int | None]]:
    """Precision of each auto band at every 0.05 step, to see how far a target is."""
    return [
        {
            "t": t,
            "n_at_or_above": int((sims >= t).sum()),
            "dup_share": _share(sims >= t, labels, "duplicate"),
            "n_below": int((sims < t).sum()),
            "distinct_share": _share(sims < t, labels, "distinct"),
        }
        for t in grid(lo)
        if round(t * 100) % 5 == 0
    ]


def _pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:5.1f}%"


def print_report(title: str, d: dict[str, float | None]) -> None:
    closed = " (closed: never auto-DUPLICATE)" if (d["duplicate"] or 0) > 1 else ""
    print(f"\n{title}: DUPLICATE at cosine >= {d['duplicate']:.3f}{closed}, NEW below {d['ambiguous']:.3f}")
    print(f"  auto-DUPLICATE: {d['dup_count']:6.1f} pairs, precision {_pct(d['dup_precision'])}")
    print(f"  auto-NEW:       {d['new_count']:6.1f} pairs, precision {_pct(d['new_precision'])} (share distinct)")
    print(f"  ambiguous band (to the LLM): {_pct(d['llm_share'])} of pairs")
    print(f"  offline fallback accuracy (ambiguous -> DISTINCT): {_pct(d['fallback_accuracy'])}")
    print(f"  accuracy with a perfect LLM in the ambiguous band:  {_pct(d['perfect_llm_accuracy'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", default="local", help="embedder spec (local, fake, openai:...)")
    ap.add_argument("--pairs", type=Path, default=PAIRS)
    ap.add_argument("--dup-precision", type=float, default=0.95)
    ap.add_argument("--new-precision", type=float, default=0.95)
    ap.add_argument("--grid-min", type=float, default=0.50, help="lowest threshold searched")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exclude-degenerate", action="store_true", help="drop pairs whose texts embed identically")
    ap.add_argument("--json", action="store_true", help="print a machine-readable summary")
    ap.add_argument("--bands", type=float, nargs=2, metavar=("DUPLICATE", "AMBIGUOUS"),
                    help="score these bands as hippo runs them (default: the embedder's own thresholds)")
    args = ap.parse_args(argv)

    rows = load_pairs(args.pairs)
    embedder = create_embedder(args.embedder)
    sims = cosines(embedder, rows)
    bands = tuple(args.bands) if args.bands else (embedder.thresholds.duplicate, embedder.thresholds.ambiguous)
    degenerate = [r for r, c in zip(rows, sims) if c >= 0.9999 and r["existing"] != r["new"]]
    if args.exclude_degenerate:
        keep = sims < 0.9999
        rows, sims = [r for r, k in zip(rows, keep) if k], sims[keep]
    labels = np.array([r["label"] for r in rows])
    dup, amb, dup_met, new_met = choose(sims, labels, args.dup_precision, args.new_precision, args.grid_min)
    cv = cross_validate(sims, labels, args.dup_precision, args.new_precision, args.folds, args.seed, args.grid_min)
    targets = {"dup_precision": args.dup_precision, "new_precision": args.new_precision, "grid_min": args.grid_min}
    summary: dict[str, Any] = {
        "embedder": args.embedder,
        "pairs": len(rows),
        "degenerate_pairs": len(degenerate),
        "degenerate_excluded": args.exclude_degenerate,
        "targets": {**targets, "dup_met": dup_met, "new_met": new_met},
        "distribution": distribution(sims, labels),
        "chosen": asdict(evaluate(sims, labels, dup, amb)),
        "seed_bands": asdict(evaluate(sims, labels, *SEED_BANDS)),
        "cross_validated": {"folds": args.folds, "seed": args.seed, **cv},
        "curve": curve(sims, labels, args.grid_min),
        "hippo": as_hippo_runs(rows, sims, *bands),
    }
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
        return 0
    print(f"embedder {args.embedder}: {len(rows)} pairs from {args.pairs.name}")
    if degenerate:
        gone = "excluded" if args.exclude_degenerate else "kept; --exclude-degenerate drops them"
        print(
            f"WARNING: {len(degenerate)} pairs of different texts embed identically ({gone}), e.g. "
            f"{degenerate[0]['existing']!r} / {degenerate[0]['new']!r}"
        )
    print(f"\ncosine by label    {'n':>4} {'min':>6} {'q1':>6} {'median':>6} {'q3':>6} {'max':>6}")
    for label, d in summary["distribution"].items():
        cols = " ".join(f"{d[k]:6.3f}" for k in QUANTILES)
        print(f"  {label:<16} {d['n']:4d} {cols}")
    print("\n   t   n>=t  dup share   n<t  distinct share")
    for c in summary["curve"]:
        print(
            f"  {c['t']:.2f} {c['n_at_or_above']:5d}  {_pct(c['dup_share'])}  "
            f"{c['n_below']:5d}  {_pct(c['distinct_share'])}"
        )
    met = f"duplicate target {'met' if dup_met else 'NOT met'}, NEW target {'met' if new_met else 'NOT met'}"
    print_report(f"chosen (targets {args.dup_precision:.2f}/{args.new_precision:.2f}; {met})", summary["chosen"])
    print_report("seed bands (0.93/0.78)", summary["seed_bands"])
    print_report(
        f"{args.folds}-fold cross-validated (means over held-out folds; counts are per fold; targets met "
        f"on {cv['folds_dup_met']}/{args.folds} and {cv['folds_new_met']}/{args.folds} training sets)",
        summary["cross_validated"],
    )
    source = "--bands" if args.bands else f"{args.embedder}'s thresholds"
    print_hippo(f"as remember_facts runs without an LLM ({source})", summary["hippo"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
