"""An offline model score for what a message is (issue 48): does a model over a local embedder's
vectors, trained on the labelled development sessions, read decisions the markers miss?

Every message of the development half (``bench/labelled_sessions``) is embedded by a local model
(its first 500 characters). A logistic regression is then fitted leave-one-session-out: trained
on ten sessions, scored on the eleventh, so no figure comes from a session the model saw. Three
ways are scored against the hand labels, beside the ``meaning`` rules alone:

- **model**: the five types from the vectors, the role and the length alone;
- **model + rules**: the same, with the rules' type as six more features;
- **where the markers miss**: the rules' type kept, except that a message the rules call context
  or intent becomes a decision when a decision-or-not model scores it above a threshold (one
  line per threshold: the trade between decisions recalled and macro-F1).

The test half is never read. Vectors are kept in ``bench/.cache/`` between runs.

    python bench/labelled_model.py [--model local] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from hippo.core.compaction.kinds import kinds
from hippo.core.messages import read_messages
from hippo.providers.registry import create_embedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from labelled import LABELS, load, messages_of, scores  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".cache"
ROLES = ("user", "assistant", "tool")
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)


def vectors(sessions: list[dict], model: str, cache: Path) -> dict[str, np.ndarray]:
    """Each session's message vectors, from the cache when its texts are unchanged."""
    texts = {s["id"]: [(m.text or " ")[:500] for m in read_messages(messages_of(s))] for s in sessions}
    key = hashlib.sha256(json.dumps([model, texts], sort_keys=True).encode()).hexdigest()[:16]
    path = cache / f"labelled-{model.replace(':', '_')}-{key}.npz"
    if path.exists():
        with np.load(path) as cached:
            return {sid: cached[sid] for sid in texts}
    embedder = create_embedder(model)
    out = {}
    for n, (sid, batch) in enumerate(texts.items(), 1):
        out[sid] = np.asarray(embedder.embed_documents(batch), dtype=np.float32)
        print(f"  embedded {n}/{len(texts)} sessions", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, **out)
    return out


def features(session: dict, vecs: np.ndarray, with_rules: bool) -> tuple[np.ndarray, list[str], list[str]]:
    """One row per message: its vector, its role, its length, whether it ends in a question mark,
    and (``with_rules``) the rules' type; with the hand labels and the rules' types."""
    messages = read_messages(messages_of(session))
    ruled = kinds(messages)
    rows = []
    for i, message in enumerate(messages):
        text = message.text.strip()
        shape = [message.role == r for r in ROLES] + [np.log1p(len(text)) / 5, text.endswith("?")]
        rules = [3.0 * (ruled[i] == label) for label in LABELS] if with_rules else []
        rows.append(np.concatenate([vecs[i], np.array(shape + rules, dtype=np.float32)]))
    return np.array(rows), [m["label"] for m in session["messages"]], ruled


def fit(x: np.ndarray, y: np.ndarray, classes: int, l2: float = 1e-2, steps: int = 600) -> tuple[np.ndarray, ...]:
    """A softmax regression by plain gradient descent (numpy only)."""
    target = np.eye(classes)[y]
    weights, bias = np.zeros((x.shape[1], classes)), np.zeros(classes)
    for _ in range(steps):
        z = x @ weights + bias
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        grad = p - target
        weights -= 0.5 * (x.T @ grad / len(x) + l2 * weights)
        bias -= 0.5 * grad.mean(0)
    return weights, bias


def held_out(data: dict[str, tuple], target) -> np.ndarray:
    """Leave-one-session-out: for each session, a model fitted on the others scores it. ``target``
    maps a label to a class; returns the class probabilities of every message, in order."""
    out = []
    for sid, (x, _, _) in data.items():
        others = [v for k, v in data.items() if k != sid]
        train_x = np.vstack([v[0] for v in others])
        train_y = np.array([target(label) for v in others for label in v[1]])
        classes = int(train_y.max()) + 1
        weights, bias = fit(train_x, train_y, classes)
        z = x @ weights + bias
        p = np.exp(z - z.max(1, keepdims=True))
        out.append(p / p.sum(1, keepdims=True))
    return np.vstack(out)


def short(row: dict) -> dict:
    return {"macro_f1": round(row["macro_f1"], 3), "decisions_recalled": round(row["decisions_recalled"], 3),
            "decision_precision": round(row["by_type"]["decision"]["precision"], 3)}


def run(model: str, sessions: list[dict] | None = None, cache: Path = CACHE) -> dict:
    """The figures above over ``sessions`` (the development half unless given)."""
    sessions = load("dev") if sessions is None else sessions
    vecs = vectors(sessions, model, cache)
    report: dict = {"embedder": model, "sessions": len(sessions)}
    bare = {s["id"]: features(s, vecs[s["id"]], False) for s in sessions}
    ruled = {s["id"]: features(s, vecs[s["id"]], True) for s in sessions}
    gold = [label for v in bare.values() for label in v[1]]
    rules = [kind for v in bare.values() for kind in v[2]]
    report["rules"] = short(scores(gold, rules))
    for name, data in (("model", bare), ("model + rules", ruled)):
        found = held_out(data, LABELS.index).argmax(1)
        report[name] = short(scores(gold, [LABELS[k] for k in found]))
    decision = held_out(bare, lambda label: int(label == "decision"))[:, 1]
    report["where the markers miss"] = {
        str(t): short(scores(gold, ["decision" if p > t and r in ("context", "user_intent") else r
                                    for p, r in zip(decision, rules)])) for t in THRESHOLDS}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local", help="a local embedder: local, local:multilingual-e5-small")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.model)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['sessions']} development sessions, leave one session out, vectors of {report['embedder']}")
    for name in ("rules", "model", "model + rules"):
        print(f"  {name:14} {report[name]}")
    for threshold, row in report["where the markers miss"].items():
        print(f"  markers + model above {threshold}: {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
