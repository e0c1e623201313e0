"""Two versions of hippo on the same benchmark questions, compared question by question.

A change to recall is measured by running the benchmark once before it and once after (each run
with its own ``PYTHONPATH``), keeping every question's score, then a paired bootstrap over the
questions of the difference (``locomo.paired_ci``: 2,000 resamples, 95%).

    # LoCoMo: locomo.py --json keeps each question's R@10 (categories 1-4 compared)
    python bench/paired.py locomo before.json after.json [--row hippo] [--after-row hippo]
    # LongMemEval: run it keeping each question's scores, then compare
    PYTHONPATH=<src> python bench/paired.py run-longmemeval [--level turn|session|both] [--try NAME=VALUE] > run.json
    python bench/paired.py longmemeval before.json after.json [--row hippo] [--after-row hippo]
    # a sweep of one version's settings (--try rows) on both files, each row against --base
    python bench/paired.py sweep --locomo run.json [...] --longmemeval run.json [...] [--base hippo]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import paired_ci  # noqa: E402


def run_longmemeval(argv: list[str]) -> int:
    """``longmemeval.py``'s run, its per-question scores kept in the JSON."""
    import longmemeval

    parser = argparse.ArgumentParser(prog="paired.py run-longmemeval")
    parser.add_argument("--data", type=Path, default=longmemeval.DEFAULT_DATA)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--level", choices=("turn", "session", "both"), default="both")
    parser.add_argument("--try", dest="variants", action="append", default=[])
    args = parser.parse_args(argv)
    embedder = longmemeval.make_embedder(args.embedder)
    out = {}
    for level in ("turn", "session") if args.level == "both" else (args.level,):
        questions = longmemeval.load(args.data, level)
        longmemeval.prepare_vectors(questions, embedder)
        out[level] = longmemeval.run_level(questions, level, embedder, args.variants)
    print(json.dumps(out, indent=2))
    return 0


def compare_locomo(before: dict, after: dict, row: str, after_row: str) -> list[str]:
    def main_r10(run: dict, name: str) -> list[float]:
        return [r for cat, r in run["rows"][name]["per_question_r10"] if cat != 5]

    lines = []
    for k in ("R@5", "R@10", "R@20"):
        lines.append(f"{k}: before {before['rows'][row][k]:.3f}  after {after['rows'][after_row][k]:.3f}")
    mean, low, high = paired_ci(main_r10(after, after_row), main_r10(before, row))
    lines.append(f"R@10 after - before, categories 1-4: {mean:+.3f} [{low:+.3f}, {high:+.3f}]")
    return lines


def compare_longmemeval(before: dict, after: dict, row: str, after_row: str) -> list[str]:
    lines = []
    for level, result in after.items():
        if level not in before:
            continue
        old, new = before[level]["rows"][row], result["rows"][after_row]
        lines.append(f"{level} level, {result['questions']} questions")
        for measure in new["per_question"]:
            mean, low, high = paired_ci(new["per_question"][measure], old["per_question"][measure])
            lines.append(f"  {measure:8} before {old[measure]:.3f}  after {new[measure]:.3f}  "
                         f"after - before {mean:+.3f} [{low:+.3f}, {high:+.3f}]")
    return lines


def _interval(values: list[float], base: list[float]) -> str:
    mean, low, high = paired_ci(values, base)
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def sweep(argv: list[str]) -> int:
    """One markdown table: every hippo row of the runs (rows of later files added), LoCoMo R@5/10/20
    and LongMemEval's turn level R@5/R@10/nDCG@10, each with its paired difference from ``--base``."""
    parser = argparse.ArgumentParser(prog="paired.py sweep")
    parser.add_argument("--locomo", type=Path, nargs="+", default=[])
    parser.add_argument("--longmemeval", type=Path, nargs="+", default=[])
    parser.add_argument("--base", default="hippo")
    args = parser.parse_args(argv)
    lo = {k: v for p in args.locomo for k, v in json.loads(p.read_text())["rows"].items()}
    lm = {k: v for p in args.longmemeval for k, v in json.loads(p.read_text())["turn"]["rows"].items()}

    def r10(name: str) -> list[float]:
        return [r for cat, r in lo[name]["per_question_r10"] if cat != 5]

    print(f"| row | LoCoMo R@5 | R@10 | R@20 | R@10 - {args.base} | LongMemEval turn R@5 | R@10 | nDCG@10 | "
          f"R@5 - {args.base} | nDCG@10 - {args.base} |")
    print("| --- " * 10 + "|")
    for name in sorted({n for n in [*lo, *lm] if n.startswith("hippo")}):
        cells = [name]
        if name in lo and args.base in lo:
            cells += [f"{lo[name][k]:.3f}" for k in ("R@5", "R@10", "R@20")] + [_interval(r10(name), r10(args.base))]
        else:
            cells += ["-"] * 4
        if name in lm and args.base in lm:
            mine, base = lm[name]["per_question"], lm[args.base]["per_question"]
            cells += [f"{lm[name][k]:.3f}" for k in ("R@5", "R@10", "nDCG@10")]
            cells += [_interval(mine[k], base[k]) for k in ("R@5", "nDCG@10")]
        else:
            cells += ["-"] * 5
        print("| " + " | ".join(cells) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run-longmemeval"]:
        return run_longmemeval(argv[1:])
    if argv[:1] == ["sweep"]:
        return sweep(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark", choices=("locomo", "longmemeval"))
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--row", default="hippo", help="the row of the first run")
    parser.add_argument("--after-row", default=None, help="the row of the second run (default: --row)")
    args = parser.parse_args(argv)
    before, after = (json.loads(p.read_text()) for p in (args.before, args.after))
    compare = compare_locomo if args.benchmark == "locomo" else compare_longmemeval
    print("\n".join(compare(before, after, args.row, args.after_row or args.row)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
