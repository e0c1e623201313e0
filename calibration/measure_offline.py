"""Offline conflict classification (no LLM) scored on a labelled pair file.

Each pair (existing fact, new fact, label) goes through the decision hippo makes
in ``remember_facts`` without an LLM: the embedder's recognition bands
(``hippo.core.facts.recognition.decide``, through ``offline_bands``) and, past them,
the offline classifier (``resolve_offline`` with ``--offline-pairs``: the pair
model of ``hippo.core.facts.pairs`` or the rule ``hippo.core.facts.offline.relation``). The existing
fact is the only candidate. The outcome maps to the label: duplicate
(strengthen), supersedes (replace) or distinct (keep both; "new" counts as
distinct). Reports accuracy, per-label recall and the confusion matrix.

``fact_pairs_test2.jsonl`` is the held-out test set: never use it to choose a
threshold or a rule. The tuning files are ``fact_pairs.jsonl``, ``fact_pairs_train.jsonl`` and
``fact_pairs_test.jsonl`` (the first test set, retired into tuning after four measurements).

    .venv/bin/python calibration/measure_offline.py [--pairs calibration/fact_pairs_test2.jsonl]
        [--embedder local] [--offline-pairs auto|rules|model (default: the released setting)] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from hippo.config import Settings
from hippo.core.embedding import EmbeddingService
from hippo.core.facts.offline import ExtractedFact
from hippo.core.facts.pairs import offline_kind, offline_rule
from hippo.core.facts.recognition import Candidate, Plan, decide, offline_bands, resolve_offline
from hippo.providers.registry import create_embedder
from hippo.types import Chunk

HERE = Path(__file__).resolve().parent


class _NoStore:
    """The word vectors need an EmbeddingService; nothing here is stored."""

    def embedder_record(self) -> None:
        return None

    def set_embedder_record(self, model_id: str, dimension: int | None) -> None:
        return None
LABELS = ("duplicate", "supersedes", "distinct")


def classify(existing: str, new: str, similarity: float, thresholds: Any, rule: Any) -> str:
    """The action hippo takes offline for ``new`` when ``existing`` is its one candidate."""
    now = datetime.now(timezone.utc)
    chunk = Chunk(id="0", agent_id="calibration", content=existing, kind="fact", metadata={},
                  running_intensity=0.5, encounter_count=1, access_count=0, last_accessed_at=now, created_at=now)
    plan = Plan(ExtractedFact(new, 0.5, ()), [Candidate(chunk, similarity)])
    decide(plan, offline_bands(thresholds, rule))
    if plan.band == "ambiguous":
        resolve_offline([plan], rule)
    return "distinct" if plan.action == "new" else plan.action


def measure(pairs: Path, embedder_spec: str, offline_pairs: str = Settings().offline_pairs) -> dict[str, Any]:
    rows = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    embedder = create_embedder(embedder_spec)
    offline_pairs = offline_kind(offline_pairs, embedder.model_id)
    service = EmbeddingService(embedder, _NoStore(), verify=False)
    rule = offline_rule(offline_pairs, service.words, service.word_states)  # as Memory wires it
    old = embedder.embed_documents([r["existing"] for r in rows])
    new = embedder.embed_documents([r["new"] for r in rows])
    similarities = np.sum(np.asarray(old) * np.asarray(new), axis=1)
    predicted = [classify(r["existing"], r["new"], float(s), embedder.thresholds, rule)
                 for r, s in zip(rows, similarities)]
    confusion = Counter((r["label"], p) for r, p in zip(rows, predicted))
    totals = Counter(r["label"] for r in rows)
    return {
        "pairs": str(pairs.relative_to(HERE.parent) if pairs.is_relative_to(HERE.parent) else pairs),
        "embedder": embedder.model_id,
        "offline_pairs": offline_pairs,
        "n": len(rows),
        "accuracy": round(sum(confusion[(g, g)] for g in LABELS) / len(rows), 3),
        "recall": {g: round(confusion[(g, g)] / totals[g], 3) for g in LABELS if totals[g]},
        "merged_wrongly": sum(confusion[(g, "duplicate")] for g in LABELS if g != "duplicate"),
        "confusion": {g: {p: confusion[(g, p)] for p in LABELS} for g in LABELS},
        "wrong_merges": [{"existing": r["existing"], "new": r["new"], "label": r["label"]}
                         for r, p in zip(rows, predicted) if p == "duplicate" and r["label"] != "duplicate"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=HERE / "fact_pairs_test2.jsonl")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--offline-pairs", choices=("auto", "rules", "model"), default=Settings().offline_pairs,
                        help="the offline classifier remember_facts is configured with (Settings.offline_pairs, "
                             "default the released one; auto: model with all-MiniLM-L6-v2, else rules)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    report = measure(args.pairs.resolve(), args.embedder, args.offline_pairs)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['pairs']}: {report['n']} pairs, embedder {report['embedder']}, offline (no LLM), "
          f"offline_pairs={report['offline_pairs']}")
    print(f"accuracy {report['accuracy']:.3f}; facts merged that were not duplicates: {report['merged_wrongly']}")
    for gold in LABELS:
        row = report["confusion"][gold]
        print(f"  {gold:10} recall {report['recall'][gold]:.3f}   "
              + ", ".join(f"{label}: {row[label]}" for label in LABELS))
    for pair in report["wrong_merges"]:
        print(f"  merged, labelled {pair['label']}: {pair['existing']!r} / {pair['new']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
