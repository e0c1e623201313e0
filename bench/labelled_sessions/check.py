"""Check labelled session files against README.md's format: python bench/labelled_sessions/check.py [FILE ...]"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LABELS = {"decision", "user_intent", "context", "tool_result", "ephemeral"}
KINDS = {"coding", "planning", "support", "personal", "ops"}


def problems(path: Path) -> list[str]:
    out = []
    s = json.loads(path.read_text(encoding="utf-8"))
    for key in ("id", "kind", "language", "split", "description", "messages", "must_survive"):
        if key not in s:
            out.append(f"missing {key}")
    if s.get("kind") not in KINDS:
        out.append(f"kind {s.get('kind')!r}")
    if s.get("split") not in ("dev", "test"):
        out.append(f"split {s.get('split')!r}")
    messages = s.get("messages", [])
    if not 40 <= len(messages) <= 200:
        out.append(f"{len(messages)} messages (40-200)")
    calls = set()
    for n, m in enumerate(messages):
        if m.get("label") not in LABELS:
            out.append(f"message {n}: label {m.get('label')!r}")
        if m.get("role") not in ("user", "assistant", "tool"):
            out.append(f"message {n}: role {m.get('role')!r}")
        if m.get("role") == "tool" and m.get("label") != "tool_result":
            out.append(f"message {n}: a tool message is a tool_result")
        if m.get("label") == "user_intent" and m.get("role") != "user":
            out.append(f"message {n}: user_intent from {m.get('role')}")
        if not isinstance(m.get("content"), str) or not (m["content"].strip() or m.get("tool_calls")):
            out.append(f"message {n}: content must be a non-empty string (or tool calls)")
        for c in m.get("tool_calls", []):
            calls.add(c["id"])
            json.loads(c["function"]["arguments"])
        if m.get("role") == "tool" and m.get("tool_call_id") not in calls:
            out.append(f"message {n}: tool_call_id {m.get('tool_call_id')!r} answers no earlier call")
        if "answers" in m and not (isinstance(m["answers"], int) and 0 <= m["answers"] < n):
            out.append(f"message {n}: answers {m['answers']!r} is not an earlier index")
    facts = s.get("must_survive", [])
    if not 5 <= len(facts) <= 15:
        out.append(f"{len(facts)} must_survive facts (5-15)")
    for f in facts:
        i = f.get("message")
        if not isinstance(i, int) or not 0 <= i < len(messages):
            out.append(f"fact {f.get('fact')!r}: message {i!r}")
            continue
        for p in f.get("probes", []):
            if p.lower() not in messages[i]["content"].lower():
                out.append(f"fact {f.get('fact')!r}: probe {p!r} not in message {i}")
        if not 1 <= len(f.get("probes", [])) <= 3:
            out.append(f"fact {f.get('fact')!r}: 1-3 probes")
    labels = {m.get("label") for m in messages}
    if "decision" not in labels:
        out.append("no decision")
    return out


def main(paths: list[str]) -> int:
    files = [Path(p) for p in paths] or sorted(Path(__file__).parent.glob("[0-9]*.json"))
    bad = 0
    for path in files:
        found = problems(path)
        bad += bool(found)
        print(f"{path.name}: {'ok' if not found else '; '.join(found)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
