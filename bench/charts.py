"""Charts of the benchmark figures from the JSON the benchmarks print (the decision pages show them
through the links in docs/images/bench/, so mkdocs finds them inside docs/).

    python bench/locomo.py --json > bench/results/locomo.json
    python bench/scale.py --sizes 10000,100000,1000000 --json > bench/results/scale.json
    .venv-bench-mem0/bin/python bench/mem0_compare.py --json > bench/results/mem0.json
    python bench/models.py --json > bench/results/models.json
    python bench/backends.py --sizes 100000,1000000 --json > bench/results/backends.json
    python bench/contention.py --json > bench/results/contention-run1.json
    python bench/charts.py                       # writes bench/results/*.png from whichever JSON exists

matplotlib comes with the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def locomo_chart(data: dict, target: Path) -> None:
    """Evidence recall@10 by category: BM25 alone, vectors alone, hippo."""
    plt = _pyplot()
    rows = {name: data["rows"][name] for name in ("bm25", "vectors", "hippo")}
    cats = sorted({int(c) for r in rows.values() for c in r["by_category"]})
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.27
    for i, (name, row) in enumerate(rows.items()):
        values = [row["by_category"].get(str(c), row["by_category"].get(c, {})).get("R@10", 0) for c in cats]
        ax.bar([x + (i - 1) * width for x in range(len(cats))], values, width, label=name)
    ax.set_xticks(range(len(cats)), [f"{c} {CATEGORIES[c]}" for c in cats])
    ax.set_ylabel("evidence recall@10")
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo dev: recall@10 by question category")
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def scale_chart(data: dict, target: Path) -> None:
    """recall_memories p50/p95 against store size, with a bare numpy top-10 beside it."""
    plt = _pyplot()
    sizes = sorted(data["sizes"], key=int)
    n = [int(s) for s in sizes]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label, style in (("recall_p50_ms", "hippo recall_memories p50", "o-"),
                              ("recall_p95_ms", "hippo recall_memories p95", "o--"),
                              ("dated_recall_p50_ms", "questions naming a month, p50", "^-"),
                              ("numpy_top10_p50_ms", "numpy exact top-10 p50 (vectors only)", "s:")):
        if all(key in data["sizes"][s] for s in sizes):  # runs before dated questions lack that line
            ax.plot(n, [data["sizes"][s][key] for s in sizes], style, label=label)
    ax.axhline(10, color="grey", lw=0.8)
    ax.axhline(50, color="grey", lw=0.8)
    ax.text(n[0], 10.5, "target at 100k: 10 ms", fontsize=8, color="grey")
    ax.text(n[0], 52, "target at 1M: 50 ms", fontsize=8, color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the store")
    ax.set_ylabel("ms per query (embedding excluded)")
    ax.set_title("Recall latency by store size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def backends_chart(data: dict, target: Path) -> None:
    """Recall p50 (bars) and p95 (ticks) of SQLite and PostgreSQL at each size of one run, with the targets."""
    plt = _pyplot()
    sizes = sorted(data["sizes"], key=int)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.38
    for offset, backend, colour in ((-width / 2, "sqlite", "#4c72b0"), (width / 2, "postgresql", "#dd8452")):
        x = [i + offset for i in range(len(sizes))]
        p50 = [data["sizes"][s][backend]["recall_p50_ms"] for s in sizes]
        p95 = [data["sizes"][s][backend]["recall_p95_ms"] for s in sizes]
        ax.bar(x, p50, width, color=colour, label=f"{backend} p50")
        ax.scatter(x, p95, marker="_", s=400, color="black", zorder=3, label="p95" if backend == "sqlite" else None)
        for xi, value, s in zip(x, p50, sizes):
            agreement = data["sizes"][s][backend]["top10_agreement_unbounded"]
            ax.text(xi, value + 1, f"{value:.1f} ms\nagree {agreement:.3f}", ha="center", fontsize=7)
    for i, (s, goal) in enumerate(zip(sizes, (20, 50))):
        ax.hlines(goal, i - 0.45, i + 0.45, colors="grey", linestyles="dashed", lw=0.8)
        ax.text(i - 0.45, goal + 0.8, f"PostgreSQL target: {goal} ms", fontsize=7, color="grey")
    ax.set_xticks(range(len(sizes)), [f"{int(s):,} chunks" for s in sizes])
    ax.set_ylabel("recall ms per query (embedding excluded)")
    ax.set_title("SQLite beside PostgreSQL, one run\n(labels: p50, and top-10 agreement with unbounded keywords)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def mem0_chart(data: dict, target: Path) -> None:
    """hippo and mem0 side by side: adds per second and search p50, with and without embedding."""
    plt = _pyplot()
    bare = data.get("without_embedding", {})
    panels = [
        ("adds per second (higher is better)", [
            ("embedding included", data["hippo"]["add_per_s"], data["mem0"]["add_per_s"]),
            *([("embedding excluded", bare["hippo"]["add_per_s"], bare["mem0"]["add_per_s"])] if bare else []),
        ]),
        ("search p50, ms (lower is better)", [
            ("embedding included", data["hippo"]["search_p50_ms"], data["mem0"]["search_p50_ms"]),
            *([("embedding excluded", bare["hippo"]["search_p50_ms"], bare["mem0"]["search_p50_ms"])] if bare else []),
        ]),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, (title, groups) in zip(axes, panels):
        for i, (label, h, m) in enumerate(groups):
            ax.bar([i - 0.2], [h], 0.4, color="tab:blue", label="hippo" if i == 0 else None)
            ax.bar([i + 0.2], [m], 0.4, color="tab:orange", label="mem0" if i == 0 else None)
            ratio = h / m if "second" in title else m / h
            ax.text(i, max(h, m) * 1.15, f"hippo {ratio:.1f}×", ha="center", fontsize=8)
        ax.set_xticks(range(len(groups)), [g[0] for g in groups])
        ax.set_yscale("log")
        ax.set_ylim(top=max(max(h, m) for _, h, m in groups) * 2)  # room for the ratio labels
        ax.set_title(title, fontsize=10)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(target, dpi=110)
    plt.close(fig)


def models_chart(data: list, target: Path) -> None:
    """Each local model: fused LoCoMo R@10 against documents embedded per second."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for row in data:
        languages = row["languages"]
        every = all(languages["found"][k] == languages["of"][k] for k in languages["of"])
        ax.scatter(row["docs_per_s"], row["hippo"]["R@10"], s=60, marker="o" if every else "s",
                   color="tab:green" if every else "tab:blue")
        ax.annotate(row["model"].removeprefix("local:"), (row["docs_per_s"], row["hippo"]["R@10"]),
                    textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xscale("log")
    ticks = [20, 50, 100, 200, 500, 1000, 2000]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlim(min(r["docs_per_s"] for r in data) / 1.5, max(r["docs_per_s"] for r in data) * 3)
    ax.set_xlabel("LoCoMo turns embedded per second (2 cores, log)")
    ax.set_ylabel("LoCoMo R@10 through recall_memories")
    ax.set_title("Local models: recall and speed (green: passes the Thai/Chinese/German check)", fontsize=10)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def contention_chart(before: dict, after: dict, target: Path) -> None:
    """Light calls while a heavy capture runs, before and after issue 32's fixes (log scale)."""
    plt = _pyplot()
    rows = [("observe p99\n(another process)", lambda d: d["observe"]["observe"]["p99_ms"], None),
            ("/healthz p95", lambda d: d["serve"]["healthz_during"]["p95_ms"],
             lambda d: d["serve"]["healthz_idle"]["p95_ms"]),
            ("another agent's\nrecall p95", lambda d: d["serve"]["recall_during"]["p95_ms"],
             lambda d: d["serve"]["recall_idle"]["p95_ms"])]
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for i, (label, during, idle) in enumerate(rows):
        for offset, data, color, name in ((-0.2, before, "tab:red", "before"), (0.2, after, "tab:blue", "after")):
            value = during(data)
            ax.bar([i + offset], [value], 0.4, color=color, label=name if i == 0 else None)
            ax.text(i + offset, value * 1.15, f"{value:,.0f}" if value >= 10 else f"{value:.1f}", ha="center",
                    fontsize=8)
            if idle is not None:
                ax.plot([i + offset - 0.2, i + offset + 0.2], [idle(data)] * 2, color="black", linewidth=1.5,
                        label="idle p95, same run" if i == 1 and name == "before" else None)
    ax.set_xticks(range(len(rows)), [r[0] for r in rows])
    ax.set_yscale("log")
    ax.set_ylim(top=max(during(d) for _, during, _ in rows for d in (before, after)) * 12)  # room for the legend
    ax.set_ylabel("ms while 2,000 messages are processed")
    ax.set_title("Light calls beside a heavy capture (2 cores, the local model)", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", ncol=3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder with the JSON; the charts go there")
    args = parser.parse_args(argv)
    made = []
    for name, draw in (("locomo", locomo_chart), ("scale", scale_chart), ("mem0", mem0_chart),
                       ("models", models_chart), ("backends", backends_chart)):
        source = args.results / f"{name}.json"
        if source.exists():
            draw(json.loads(source.read_text()), args.results / f"{name}.png")
            made.append(f"{name}.png")
    before, after = args.results / "contention-before.json", args.results / "contention-run1.json"
    if before.exists() and after.exists():
        contention_chart(json.loads(before.read_text()), json.loads(after.read_text()), args.results / "contention.png")
        made.append("contention.png")
    print("wrote " + (", ".join(made) if made else "nothing (no results JSON found)"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
