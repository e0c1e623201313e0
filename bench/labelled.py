"""Compaction and capture on the labelled sessions (issue 48): what a session keeps.

For each session of a split (``bench/labelled_sessions/*.json``, see its README), and for each
classifier (``meaning``, hippo's default, and ``reference``, the specification's rules):

- **types**: every message's type against its hand label; per type precision, recall and F1, and
  their macro-F1 over the five labels; **decisions recalled**: the share of labelled decisions
  classified as decisions;
- **must survive**: each listed fact is in the summary, or in the full text of a message one of the
  summary's pointers leads back to (``#N``: message N of the session; ``[id:...]``: a stored
  memory), for ``hippo.compact`` (nothing stored) and ``Memory.compact`` with a session;
- **trivial memories**: memories stored from messages labelled ephemeral, by ``Memory.compact``
  with a session and by capture (``observe`` then ``process_pending``, offline);
- compression: tokens before over the whole summary's tokens;
- where a second labeller labelled the same sessions blind (``second-labeller.json``: the test
  half), how far the two agree, scored the same way.

    python bench/labelled.py [--split dev|test|all] [--misses] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import hippo
from hippo.core.compaction.kinds import kinds
from hippo.core.memories.writer import SOURCE_IDS
from hippo.core.messages import read_messages

FOLDER = Path(__file__).resolve().parent / "labelled_sessions"
LABELS = ("decision", "user_intent", "context", "tool_result", "ephemeral")
CLASSIFIERS = ("meaning", "reference")
_PLACE = re.compile(r"(?:^|[\s(])#(\d+)(?:-#(\d+))?\b")
_ID = re.compile(r"\[id:([0-9A-Z,]+)\]")


SECOND = FOLDER / "second-labeller.json"  # the test half labelled again, blind, by a second hand


def load(split: str) -> list[dict]:
    sessions = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(FOLDER.glob("[0-9]*.json"))]
    return [s for s in sessions if split == "all" or s["split"] == split]


def agreement(sessions: list[dict]) -> dict[str, Any] | None:
    """The second labeller's labels scored against the first's, over the sessions both labelled:
    how far two careful people agree, the ceiling a classifier is measured under."""
    second = json.loads(SECOND.read_text(encoding="utf-8")) if SECOND.exists() else {}
    both = [s for s in sessions if s["id"] in second]
    if not both:
        return None
    first = [m["label"] for s in both for m in s["messages"]]
    return {"sessions": len(both), **scores(first, [label for s in both for label in second[s["id"]]])}


def messages_of(session: dict) -> list[dict]:
    """The session as a chat API holds it (the labels left out), each message with an id."""
    out = []
    for n, m in enumerate(session["messages"]):
        shaped = {k: v for k, v in m.items() if k not in ("label", "answers")}
        out.append({**shaped, "id": f"{session['id']}-{n}"})
    return out


def scores(gold: list[str], found: list[str]) -> dict[str, Any]:
    per = {}
    for label in LABELS:
        tp = sum(g == label and f == label for g, f in zip(gold, found))
        predicted, actual = found.count(label), gold.count(label)
        p = tp / predicted if predicted else 0.0
        r = tp / actual if actual else 0.0
        per[label] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0, "n": actual}
    return {"macro_f1": sum(x["f1"] for x in per.values()) / len(LABELS), "by_type": per,
            "decisions_recalled": per["decision"]["recall"], "accuracy": sum(g == f for g, f in zip(gold, found)) / len(gold)}


def reachable(summary: str, contents: list[str], stored: dict[str, str]) -> str:
    """The summary with the full text of every message or memory its pointers lead back to."""
    texts = [summary]
    for match in _PLACE.finditer(summary):
        low = int(match.group(1))
        high = int(match.group(2) or low)
        texts += [contents[i] for i in range(low, min(high, len(contents) - 1) + 1)]
    for match in _ID.finditer(summary):
        texts += [stored.get(i, "") for i in match.group(1).split(",")]
    return "\n".join(texts).lower()


def survived(session: dict, text: str) -> list[bool]:
    return [all(p.lower() in text for p in fact["probes"]) for fact in session["must_survive"]]


def compact_session(session: dict, classifier: str, folder: Path) -> dict[str, Any]:
    """Compaction without and with a session: facts that survive, trivial memories, compression."""
    shaped = messages_of(session)
    contents = [m.text for m in read_messages(shaped)]
    config = {"classifier": classifier}
    bare = hippo.compact(shaped, config)
    with hippo.open(folder / f"{session['id']}-{classifier}.db", embedder="none") as mem:
        kept = mem.compact(shaped, session_id=session["id"], config=config)
        stored = {i: mem.get_memory(i).content for e in kept.entries for i in e.memory_ids}
    labels = [m["label"] for m in session["messages"]]
    trivial = [e.index for e in kept.entries if e.memory_ids and labels[e.index] == "ephemeral"]
    return {"without_session": survived(session, reachable(bare.summary, contents, {})),
            "with_session": survived(session, reachable(kept.summary, contents, stored)),
            "trivial_stored": trivial, "tokens": bare.stats.tokens_before, "summary_tokens": bare.stats.summary_tokens}


def capture_session(session: dict, folder: Path) -> list[int]:
    """Capture offline over the session: the messages labelled ephemeral that became memories."""
    shaped = messages_of(session)
    where = {m["id"]: n for n, m in enumerate(shaped)}
    with hippo.open(folder / f"{session['id']}-capture.db", embedder="fake") as mem:
        mem.observe(shaped, session_id=session["id"])
        mem.process_pending()
        sources = [i for m in mem.list_memories(limit=1000).items for i in m.metadata.get(SOURCE_IDS, [])]
    labels = [m["label"] for m in session["messages"]]
    return sorted({where[i] for i in sources if i in where and labels[where[i]] == "ephemeral"})


def run(sessions: list[dict], misses: bool) -> dict[str, Any]:
    report: dict[str, Any] = {"sessions": [s["id"] for s in sessions],
                              "messages": sum(len(s["messages"]) for s in sessions)}
    gold = [m["label"] for s in sessions for m in s["messages"]]
    with tempfile.TemporaryDirectory() as tmp:
        for classifier in CLASSIFIERS:
            found = [k for s in sessions for k in kinds(read_messages(messages_of(s)), classifier)]
            row = scores(gold, found)
            compacted = [compact_session(s, classifier, Path(tmp)) for s in sessions]
            facts = sum(len(c["with_session"]) for c in compacted)
            row["must_survive"] = {
                "facts": facts,
                "without_session": sum(map(sum, (c["without_session"] for c in compacted))) / facts,
                "with_session": sum(map(sum, (c["with_session"] for c in compacted))) / facts}
            row["trivial_stored_by_compact"] = sum(len(c["trivial_stored"]) for c in compacted)
            row["compression"] = sum(c["tokens"] for c in compacted) / sum(c["summary_tokens"] for c in compacted)
            if misses:
                row["confusions"] = Counter(f"{g} -> {f}" for g, f in zip(gold, found) if g != f).most_common(12)
                row["lost"] = [f["fact"] for s, c in zip(sessions, compacted)
                               for f, ok in zip(s["must_survive"], c["with_session"]) if not ok]
            report[classifier] = row
        report["trivial_stored_by_capture"] = {s["id"]: capture_session(s, Path(tmp)) for s in sessions}
    report["second_labeller"] = agreement(sessions)
    return report


def _print(report: dict[str, Any]) -> None:
    print(f"{len(report['sessions'])} sessions, {report['messages']} messages")
    for classifier in CLASSIFIERS:
        row = report[classifier]
        print(f"\n{classifier}: macro-F1 {row['macro_f1']:.3f}, accuracy {row['accuracy']:.3f}, decisions recalled "
              f"{row['decisions_recalled']:.3f}; must survive {row['must_survive']['with_session']:.3f} with a "
              f"session, {row['must_survive']['without_session']:.3f} without ({row['must_survive']['facts']} facts); "
              f"trivial memories stored by compact {row['trivial_stored_by_compact']}; "
              f"compression {row['compression']:.1f}x")
        for label, x in row["by_type"].items():
            print(f"  {label:12} P {x['precision']:.3f} R {x['recall']:.3f} F1 {x['f1']:.3f} (n {x['n']})")
        for line in row.get("confusions", []):
            print("  confused", line)
        for fact in row.get("lost", []):
            print("  lost:", fact)
    second = report["second_labeller"]
    if second:
        print(f"\na second labeller against the first ({second['sessions']} sessions): macro-F1 "
              f"{second['macro_f1']:.3f}, decisions {second['decisions_recalled']:.3f}")
    captured = report["trivial_stored_by_capture"]
    print(f"\ntrivial memories stored by capture: {sum(map(len, captured.values()))} {captured}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--misses", action="store_true", help="the commonest confusions and the facts lost")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(load(args.split), args.misses)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        _print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
