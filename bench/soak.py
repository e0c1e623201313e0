"""A soak run (issue 50): one ``hippo serve`` on loopback under a steady mixed load for a long time,
on a SQLite file and on PostgreSQL, to show what a day of service would: memory that stops growing,
latency that does not drift, no error.

The server runs as users run it (``hippo serve``, the real local model unless ``--embedder``).
Before timing, each agent gets ``--memories`` memories through the API. Then a dispatcher issues
``--rate`` operations a second (open loop: the schedule does not wait for answers) to ``--clients``
threads, each with its own connection, for ``--minutes``. Per operation, a random agent:
recall (``POST memories/recall``), store, remember_facts (``POST facts``, the offline rules),
observe (``POST sessions/{id}/messages``) followed by process, surface, and forget (``DELETE
memories/{id}`` of a memory the soak stored). Every ``--sample-seconds`` the server's RSS and open
files (psutil) and that interval's p50/p99 per operation and errors are recorded.

Verdict, over the whole run: no error; growth of the server's own resident memory (anonymous
RSS: SQLite's memory map of the database counts in RSS too, and grows with the file, but those
pages are the page cache's) after the first five minutes, the last sample against the one at
minute 5, under 10 % (total RSS beside it); p99 of every operation pooled, last five minutes against
the first five, at most 1.5x. Results in ``bench/results/soak-{backend}.json``, the chart in
``bench/results/soak.png``.

    python bench/soak.py [--backend sqlite,postgres] [--minutes 20] [--rate 8] [--clients 8]
    python bench/soak.py --smoke --out DIR [--postgres URL]   # 20 s a backend, the fake embedder: for the tests
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import queue
import random
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

RESULTS = Path(__file__).resolve().parent / "results"
MIX = {"recall": 0.35, "store": 0.20, "remember_facts": 0.10, "observe": 0.10, "surface": 0.15, "forget": 0.10}
FACTS = ["I live in {city} now.", "My favourite food is {food}.", "I work as a {job}.", "My sister is called {name}.",
         "I moved to {city} last year.", "I stopped eating {food}.", "I started a new job as a {job}."]
FILLS = {"city": ["Lisbon", "Oslo", "Kyoto", "Denver", "Nairobi", "Lima"], "food": ["ramen", "paella", "dal", "tacos"],
         "job": ["nurse", "carpenter", "teacher", "pilot", "chemist"], "name": ["Ada", "Noor", "Ines", "Kofi"]}
GROWTH_LIMIT, DRIFT_LIMIT, WINDOW_MINUTES = 0.10, 1.5, 5.0


@dataclass
class Texts:
    """What the load says: LoCoMo's turns (stored, observed) and questions (recalled)."""

    turns: list[str]
    questions: list[str]
    _n: itertools.count = field(default_factory=itertools.count)

    @classmethod
    def load(cls) -> "Texts":
        ann = siblings.load("ann_choice")
        return cls(ann.corpus(5_000), ann.questions())

    def text(self) -> str:
        n = next(self._n)
        return f"{self.turns[n % len(self.turns)]} (#{n})"  # every text new: a store is a store, not a merge

    def fact(self, rng: random.Random) -> str:
        template = rng.choice(FACTS)
        return template.format(**{key: rng.choice(values) for key, values in FILLS.items()})


class Load:
    """The operations, over one server: each agent's stored ids (for forget) and its sessions."""

    def __init__(self, url: str, agents: list[str], texts: Texts) -> None:
        self.url, self.agents, self.texts = url, agents, texts
        self.ids: dict[str, list[str]] = {agent: [] for agent in agents}
        self._lock = threading.Lock()

    def fill(self, http: Any, per_agent: int) -> None:
        for agent in self.agents:
            for _ in range(per_agent):
                self._store(http, agent)

    def _store(self, http: Any, agent: str) -> Any:
        answer = http.post(f"/v1/agents/{agent}/memories", json={"content": self.texts.text()})
        if answer.is_success:
            with self._lock:
                self.ids[agent].append(answer.json()["id"])
        return answer

    def call(self, http: Any, op: str, agent: str, rng: random.Random) -> list[tuple[str, Any, float]]:
        """One operation; each request it made: (name, answer, seconds)."""
        base = f"/v1/agents/{agent}"
        session = f"s{rng.randrange(20)}"
        turns = [{"role": "user", "content": rng.choice(self.texts.turns)},
                 {"role": "assistant", "content": rng.choice(self.texts.turns)}]
        if op == "forget":
            with self._lock:
                held = self.ids[agent]
                memory = held.pop(rng.randrange(len(held))) if len(held) > 10 else None
            if memory is None:
                op = "store"
            else:
                return [timed("forget", lambda: http.delete(f"{base}/memories/{memory}"))]
        requests = {
            "recall": lambda: http.post(f"{base}/memories/recall",
                                        json={"query": rng.choice(self.texts.questions), "limit": 10}),
            "store": lambda: self._store(http, agent),
            "remember_facts": lambda: http.post(f"{base}/facts", json={"text": self.texts.fact(rng)}),
            "observe": lambda: http.post(f"{base}/sessions/{session}/messages", json={"messages": turns}),
            "surface": lambda: http.post(f"{base}/sessions/{session}/surface", json={"messages": turns}),
        }
        done = [timed(op, requests[op])]
        if op == "observe":
            done.append(timed("process", lambda: http.post(f"{base}/process")))
        return done


def timed(name: str, request: Any) -> tuple[str, Any, float]:
    began = time.perf_counter()
    answer = request()
    return name, answer, time.perf_counter() - began


Record = tuple[float, str, float, "str | None"]  # when it ended (s since start), operation, seconds, error


def drive(load: Load, rate: float, clients: int, seconds: float, sample_every: float, pid: int,
          mix: dict[str, float] = MIX) -> dict[str, Any]:
    """The timed load: operations at ``rate`` a second for ``seconds``, sampled every ``sample_every``."""
    import httpx
    import psutil

    work: queue.Queue[tuple[str, str] | None] = queue.Queue()
    records: list[Record] = []
    start = time.monotonic()

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=load.url, timeout=60) as http:
            while (job := work.get()) is not None:
                op, agent = job
                try:
                    for name, answer, took in load.call(http, op, agent, rng):
                        error = None if answer.is_success else f"{name} {answer.status_code}: {answer.text[:200]}"
                        records.append((time.monotonic() - start, name, took, error))
                except Exception as exc:  # the load generator's boundary: every failure counts, none stops it
                    records.append((time.monotonic() - start, op, 0.0, f"{op}: {type(exc).__name__}: {exc}"))

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    rng, ops, weights = random.Random(7), list(mix), list(mix.values())
    server, samples, backlog = psutil.Process(pid), [], 0
    for i in itertools.count():
        due = start + i / rate
        if due >= start + seconds:
            break
        while (now := time.monotonic()) < due:
            if now - start >= (len(samples) + 1) * sample_every:
                samples.append(sample(server, records, len(samples) * sample_every, now - start))
            time.sleep(min(0.05, due - now))
        backlog = max(backlog, work.qsize())
        work.put((rng.choices(ops, weights)[0], rng.choice(load.agents)))
    for _ in threads:
        work.put(None)
    for thread in threads:
        thread.join(timeout=120)
    samples.append(sample(server, records, len(samples) * sample_every, time.monotonic() - start))
    return {"records": records, "samples": samples, "max_backlog": backlog}


def sample(server: Any, records: list[Record], since: float, until: float) -> dict[str, Any]:
    """The server's RSS and open files now; the interval's latencies and errors."""
    window = [r for r in records if since <= r[0] < until]
    by_op: dict[str, list[float]] = {}
    for _, op, took, error in window:
        if error is None:
            by_op.setdefault(op, []).append(took * 1000)
    memory = resident(server.pid)
    return {"minute": round(until / 60, 2), "rss_mb": round(server.memory_info().rss / 2**20, 1),
            "rss_anon_mb": memory.get("RssAnon"), "rss_file_mb": memory.get("RssFile"),
            "open_files": server.num_fds(), "requests": len(window),
            "errors": sum(1 for r in window if r[3] is not None),
            "p50_ms": {op: round(float(np.percentile(v, 50)), 2) for op, v in sorted(by_op.items())},
            "p99_ms": {op: round(float(np.percentile(v, 99)), 2) for op, v in sorted(by_op.items())}}


def resident(pid: int) -> dict[str, float]:
    """The process's resident memory by kind, in MB (Linux's /proc/PID/status): ``RssAnon`` is its
    own (the heap: what a leak grows), ``RssFile`` the pages of files it maps (SQLite's memory map
    of the database, shared with the page cache and given back under pressure)."""
    found: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("RssAnon", "RssFile"):
                found[name] = round(int(value.split()[0]) / 1024, 1)
    return found


def verdict(run: dict[str, Any], minutes: float) -> dict[str, Any]:
    """The three checks over a run: errors, RSS growth after the first window, p99 drift."""
    records, samples = run["records"], run["samples"]
    window = min(WINDOW_MINUTES, minutes / 4) * 60
    end = minutes * 60
    first = [r[2] * 1000 for r in records if r[0] < window and r[3] is None]
    last = [r[2] * 1000 for r in records if r[0] >= end - window and r[3] is None]
    after = [s for s in samples if s["minute"] * 60 >= window - 1e-6] or samples
    # the process's own memory where the system tells it apart from mapped files, else all of it
    own = "rss_anon_mb" if after[0].get("rss_anon_mb") is not None else "rss_mb"
    base_rss = after[0][own]
    growth = (samples[-1][own] - base_rss) / base_rss
    total_growth = (samples[-1]["rss_mb"] - after[0]["rss_mb"]) / after[0]["rss_mb"]
    p99_first, p99_last = float(np.percentile(first, 99)), float(np.percentile(last, 99))
    errors = [r[3] for r in records if r[3] is not None]
    return {
        "requests": len(records), "errors": len(errors), "first_errors": errors[:5],
        "rss_measure": own, "rss_mb_at_window": base_rss, "rss_mb_last": samples[-1][own],
        "rss_growth": round(growth, 4), "rss_total_growth": round(total_growth, 4),
        "p99_first_ms": round(p99_first, 2), "p99_last_ms": round(p99_last, 2),
        "p99_ratio": round(p99_last / p99_first, 3), "window_minutes": round(window / 60, 2),
        "ok": not errors and growth < GROWTH_LIMIT and p99_last <= DRIFT_LIMIT * p99_first,
    }


def per_operation(records: list[Record]) -> dict[str, dict[str, float]]:
    ops: dict[str, list[float]] = {}
    for _, op, took, error in records:
        if error is None:
            ops.setdefault(op, []).append(took * 1000)
    return {op: {"count": len(v), "p50_ms": round(float(np.percentile(v, 50)), 2),
                 "p99_ms": round(float(np.percentile(v, 99)), 2)} for op, v in sorted(ops.items())}


def soak(backend: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One backend's run: a fresh database, one server, the fill, the timed load, the verdict."""
    import httpx

    load_module = siblings.load("load")
    with ExitStack() as stack:
        db = str(workdir / "soak.db") if backend == "sqlite" else \
            stack.enter_context(load_module.postgres_database(args.postgres, workdir))
        (server,) = stack.enter_context(load_module.servers(db, 1, workdir, args.embedder))
        load = Load(server.url, [f"soak-{i}" for i in range(args.agents)], Texts.load())
        began = time.perf_counter()
        with httpx.Client(base_url=server.url, timeout=60) as http:
            load.fill(http, args.memories)
        filled = time.perf_counter() - began
        print(f"soak {backend}: filled {args.agents} x {args.memories} in {filled:.0f} s; "
              f"{args.minutes} min at {args.rate}/s", file=sys.stderr, flush=True)
        run = drive(load, args.rate, args.clients, args.minutes * 60, args.sample_seconds, server.proc.pid, args.mix)
    result = {"backend": backend, "verdict": verdict(run, args.minutes), "operations": per_operation(run["records"]),
              "samples": run["samples"], "max_backlog": run["max_backlog"], "fill_seconds": round(filled, 1)}
    print(f"soak {backend}: {json.dumps(result['verdict'])}", file=sys.stderr, flush=True)
    return result


def chart(results: list[dict[str, Any]], target: Path) -> None:
    """RSS and pooled p99 per sample, one line per backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rss, p99) = plt.subplots(1, 2, figsize=(10, 3.6))
    for result in results:
        minutes = [s["minute"] for s in result["samples"]]
        own = [s.get("rss_anon_mb") for s in result["samples"]]
        line = rss.plot(minutes, [s["rss_mb"] for s in result["samples"]], linestyle=":",
                        label=f"{result['backend']}, all")[0]
        if None not in own:
            rss.plot(minutes, own, marker=".", color=line.get_color(), label=f"{result['backend']}, its own")
        p99.plot(minutes, [max(s["p99_ms"].values(), default=0) for s in result["samples"]], marker=".",
                 label=result["backend"])
    rss.set(title="server RSS (MB): its own (anonymous) and all", xlabel="minute")
    p99.set(title="slowest operation's p99 per sample (ms)", xlabel="minute")
    for axis in (rss, p99):
        axis.grid(alpha=0.3)
        axis.legend()
        axis.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def _mix(text: str) -> dict[str, float]:
    """``recall=0.5,surface=0.5``: the operations to run and their weights (to tell apart what grows)."""
    try:
        mix = {name: float(weight) for name, weight in (part.split("=") for part in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(f"not operation=weight,...: {text!r}") from None
    if not mix or set(mix) - set(MIX):
        raise argparse.ArgumentTypeError(f"operations are {', '.join(MIX)}")
    return mix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="sqlite,postgres", help="sqlite, postgres or both, comma-separated")
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=8.0, help="operations a second, over every client")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--memories", type=int, default=250, help="memories per agent before timing")
    parser.add_argument("--sample-seconds", type=float, default=60.0)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--postgres", default=None, help="a server's admin URL (default: start one with pgserver)")
    parser.add_argument("--smoke", action="store_true", help="20 s a backend with the fake embedder")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of soak-BACKEND.json and soak.png")
    parser.add_argument("--mix", type=_mix, default=MIX, help="operation=weight,... (default: every operation, "
                                                                "recall 0.35, store 0.2, surface 0.15, the others 0.1)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.minutes, args.embedder, args.memories, args.sample_seconds = 1 / 3, "fake", 20, 5
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for backend in args.backend.split(","):
        with tempfile.TemporaryDirectory(prefix=f"hippo-soak-{backend}-") as workdir:
            result = soak(backend, args, Path(workdir))
        result.update(measured=datetime.now(timezone.utc).strftime("%Y-%m-%d"), settings={
            key: getattr(args, key) for key in ("minutes", "rate", "clients", "agents", "memories", "embedder", "mix")})
        results.append(result)
        (args.out / f"soak-{backend}.json").write_text(json.dumps(result, indent=1) + "\n")
    # every backend's last run in the folder, this one's or an earlier one
    chart([json.loads(path.read_text()) for path in sorted(args.out.glob("soak-*.json"))], args.out / "soak.png")
    return 0 if all(r["verdict"]["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
