"""Compaction of a 150k-token session (issue 21, seed 004), offline.

Builds the session of ``bench/compaction_session.py`` (user intents, decisions, tool calls with
large outputs, heartbeats; tokens are real all-MiniLM-L6-v2 word pieces) and measures:

1. ``hippo.compact``: the median of several runs (target under 1 s), beside a baseline timed in
   the same process, counting the session's tokens alone (the tokenizer pass compaction cannot
   skip); the sparse index's tokens against ``maxSparseIndexTokens``; the compression ratio of the
   stats comment and of the whole summary text; what became of the messages by type.
2. ``Memory.compact`` on a SQLite file with no embedder (``embedder="none"``): the same, plus
   storing every faded entry through the writer; the first run inserts, the others find the same
   content and keep its ids.

    python bench/compaction.py [--tokens 150000] [--runs 7] [--json]
    python bench/compaction.py --smoke        # small: for the test suite
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo
from hippo.core.compaction.compact import content_of
from hippo.core.compaction.config import CompactionConfig
from hippo.core.messages import read_messages
from hippo.core.tokens import count_tokens, tokenizer_name

HERE = Path(__file__).resolve().parent


def _timed(fn: Callable[[], Any], runs: int) -> tuple[dict[str, float], Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return {"p50": round(statistics.median(times), 1), "min": round(min(times), 1), "max": round(max(times), 1),
            "n": runs}, result


def _report(result: hippo.Compaction, config: CompactionConfig) -> dict[str, Any]:
    stats = result.stats
    return {
        "entries": stats.entries, "tokens_before": stats.tokens_before, "tokens_after": stats.tokens_after,
        "ratio": round(stats.ratio or 0.0, 1), "summary_tokens": stats.summary_tokens,
        "summary_ratio": round(stats.tokens_before / max(stats.summary_tokens, 1), 1),
        "sparse_index_tokens": stats.sparse_index_tokens, "max_sparse_index_tokens": config.max_sparse_index_tokens,
        "sections": {"kept": stats.kept, "compressed": stats.compressed, "sparse": stats.sparse,
                     "omitted": stats.omitted,
                     "dropped": stats.dropped},
        "by_type": {f"{t}:{a}": n for (t, a), n in sorted(Counter((e.type, e.action) for e in result.entries).items())},
    }


def run(tokens: int, runs: int) -> dict[str, Any]:
    config = CompactionConfig()
    messages = siblings.load("compaction_session").session(tokens)
    hippo.compact(messages[:10], config)  # load the tokenizer outside the timings
    baseline, _ = _timed(lambda: count_tokens([content_of(m) for m in read_messages(messages)]), runs)
    library, result = _timed(lambda: hippo.compact(messages, config), runs)
    out: dict[str, Any] = {"tokenizer": tokenizer_name(), "messages": len(messages),
                           "compact_ms": library, "baseline_count_tokens_ms": baseline,
                           "ratio_to_baseline": round(library["p50"] / max(baseline["p50"], 0.001), 2),
                           **_report(result, config)}
    with tempfile.TemporaryDirectory() as folder:
        mem = hippo.open(str(Path(folder) / "bench.db"), agent_id="bench", embedder="none")
        try:
            first, stored = _timed(lambda: mem.compact(messages, session_id="bench", config=config), 1)
            again, repeat = _timed(lambda: mem.compact(messages, session_id="bench", config=config), runs)
            out["memory_compact"] = {
                "first_ms": first, "again_ms": again,
                "memories": mem.stats().memories,
                "same_ids": [e.memory_ids for e in repeat.entries] == [e.memory_ids for e in stored.entries],
                "sparse_index_tokens": stored.stats.sparse_index_tokens, "dropped": stored.stats.dropped,
            }
        finally:
            mem.close()
    return out


def _print(out: dict[str, Any]) -> None:
    lib, mc = out["compact_ms"], out["memory_compact"]
    print(f"session: {out['messages']} messages, {out['tokens_before']} tokens ({out['tokenizer']})")
    print(f"hippo.compact: p50 {lib['p50']} ms (min {lib['min']}, max {lib['max']}, n {lib['n']}); "
          f"baseline count_tokens p50 {out['baseline_count_tokens_ms']['p50']} ms "
          f"(x{out['ratio_to_baseline']})")
    print(f"sparse index: {out['sparse_index_tokens']} of {out['max_sparse_index_tokens']} tokens; "
          f"sections {out['sections']}")
    print(f"compression: {out['tokens_before']} -> {out['tokens_after']} tokens ({out['ratio']}x, stats comment); "
          f"summary text {out['summary_tokens']} tokens ({out['summary_ratio']}x)")
    print(f"Memory.compact (SQLite, no embedder): first {mc['first_ms']['p50']} ms, "
          f"again p50 {mc['again_ms']['p50']} ms, {mc['memories']} memories, same ids: {mc['same_ids']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--smoke", action="store_true", help="a small session and two runs")
    args = parser.parse_args(argv)
    out = run(5_000 if args.smoke else args.tokens, 2 if args.smoke else args.runs)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
