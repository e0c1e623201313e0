"""Servers under load (issue 34): one and three ``hippo serve`` on one PostgreSQL, and one on a
SQLite file, in the same run, under a mixed workload from N concurrent HTTP clients.

100 agents hold 1,000 memories each (100k in all), filled before timing through the library with
real all-MiniLM-L6-v2 vectors from ``bench/scale.py``'s on-disk cache; the databases record the
local model, so the servers embed every query, stored text and new text with the real model, as
they do for users. Each client (a thread with its own keep-alive connection, spread round-robin
over the servers) picks a random agent per request: 70% recall (``GET memories?q=``, the default
``touch``; each query is a LoCoMo question made unique with a number, so no server answers it from
its query cache), 20% store (``POST memories``, a corpus text no agent holds), 5% update (``PATCH
memories/{id}``, a new text) and 5% forget (``DELETE memories/{id}``). Servers are started afresh
for each configuration and client count, warmed with one recall each, then driven for a warm-up
and a timed window.

Reported per configuration and client count: throughput (operations completed in the window per
second), p50/p95/p99 per operation, errors (non-2xx answers and exceptions, warm-up included), and
what bounds it: CPU of the server processes, of PostgreSQL's processes, of this process (the load
generator) and of the machine, sampled with psutil (the busiest other processes are named);
PostgreSQL's connections by server (each server's pool holds at most ``POOL_SIZE``) and their wait
events (``pg_stat_activity``); and the servers' request threads by state (the model, in PostgreSQL,
waiting for the pool, for the store's lock or for the retrieval writer), from ``py-spy dump`` every
few seconds when py-spy is installed beside Python. ``name_bound`` says which of these it is.
Beside it, per operation: the database's work (transactions, index scans, rows and pages read, from
PostgreSQL's cumulative statistics), each group's context switches (voluntary and involuntary,
over all its threads) and the kernel's share of its CPU: whether a configuration does more work or
pays more for the same work.

    python bench/load.py [--clients 8,32] [--seconds 60] [--warmup 10] [--configs pg1,pg3,sqlite]
                         [--postgres URL] [--json PATH]
    python bench/load.py --smoke [--postgres URL]    # 2 agents, 200 memories, fake vectors: for the tests
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import siblings  # bench/ is on sys.path when its scripts run (siblings.py)

import hippo

HIPPO = str(Path(sys.executable).with_name("hippo"))
MIX = {"recall": 0.70, "store": 0.20, "update": 0.05, "forget": 0.05}
CONFIGS = {"pg1": ("postgresql", 1), "pg3": ("postgresql", 3), "sqlite": ("sqlite", 1)}  # in the order run
POOL_SIZE = 10  # PostgresStore's connections per server (its default pool_size)
FRESH = 30_000  # corpus texts past the stored ones, for stores and updates
SAMPLE_EVERY = 0.25  # seconds between two samples of CPU and pg_stat_activity


def agent_name(i: int) -> str:
    return f"agent-{i:03d}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


# -- data and fill -------------------------------------------------------------------------------


@dataclass
class Corpus:
    texts: list[str]
    vectors: np.ndarray
    questions: list[str]
    fresh: list[str]
    model_id: str


def load_corpus(n: int, smoke: bool) -> Corpus:
    scale, ann = siblings.load("scale"), siblings.load("ann_choice")
    texts, vectors, questions, _ = scale.corpus_and_vectors(n, smoke)
    fresh = ann.corpus(n + (200 if smoke else FRESH))[n:]  # the corpus grows by appending: new texts
    return Corpus(texts, vectors, questions, fresh, "fake:384" if smoke else scale.LOCAL_MODEL)


def fill(db: str, corpus: Corpus, agents: int, per_agent: int) -> tuple[dict[str, list[str]], float]:
    """Every agent's memories stored in batches through the library; their ids and the seconds taken."""
    lookup = siblings.load("scale").LookupEmbedder(corpus.texts, corpus.vectors, model_id=corpus.model_id)
    ids: dict[str, list[str]] = {}
    began = time.perf_counter()
    with hippo.open(db, agent_id=agent_name(0), embedder=lookup) as base:
        for a in range(agents):
            mem = base.for_agent(agent_name(a))  # the same store
            batch = corpus.texts[a * per_agent:(a + 1) * per_agent]
            ids[agent_name(a)] = [r.id for r in mem.store_memories(batch)]
            if (a + 1) % 10 == 0 or a + 1 == agents:
                print(f"  filled {a + 1}/{agents} agents ({(a + 1) * per_agent:,} memories, "
                      f"{time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)
    return ids, time.perf_counter() - began


@contextlib.contextmanager
def postgres_database(url: str | None, workdir: Path) -> Iterator[str]:
    """An empty database on the given server, or on one started here (stopped at the end)."""
    import psycopg

    backends = siblings.load("backends")
    db = next(backends.fresh_postgres(url, workdir))
    try:
        yield db
    finally:
        name = db.split("?", 1)[0].rsplit("/", 1)[1]
        admin = url or db.replace(f"/{name}?", "/postgres?", 1)
        with contextlib.suppress(psycopg.Error), psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if url is None:
            import pgserver
            from pgserver._commands import pg_ctl

            server = pgserver.get_server(workdir / "pg", cleanup_mode="stop")
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


# -- servers ---------------------------------------------------------------------------------------


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    url: str
    log: Path
    errors: list[str] = field(default_factory=list)  # the warming recall's, counted with the run's


def named(db: str, name: str) -> str:
    """A PostgreSQL URL whose connections carry ``name`` (pg_stat_activity.application_name)."""
    if not db.startswith("postgresql://"):
        return db
    return f"{db}{'&' if '?' in db else '?'}application_name={name}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def servers(db: str, count: int, workdir: Path, embedder: str) -> Iterator[list[Server]]:
    """``count`` ``hippo serve`` processes on ``db``, each answering and warm; stopped at the end."""
    started: list[Server] = []
    try:
        for i in range(count):
            name, port = f"load-{i + 1}", free_port()
            log = workdir / f"{name}.log"
            env = {**os.environ, "HIPPO_DB": named(db, name), "HIPPO_CONFIG": str(workdir / "none.toml"),
                   "HIPPO_EMBEDDER": embedder}
            with log.open("w") as out:
                proc = subprocess.Popen([HIPPO, "serve", "--port", str(port)], env=env, stdout=out, stderr=out,
                                        start_new_session=True)
            started.append(Server(name, proc, f"http://127.0.0.1:{port}", log))
        for server in started:
            warm(server)
        yield started
    finally:
        for server in started:
            server.proc.terminate()
        for server in started:
            try:
                server.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.proc.kill()
                server.proc.wait()


def warm(server: Server) -> None:
    """Wait for ``/healthz``, then one recall (the model loads now, not in the timed window)."""
    import httpx

    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited: {server.log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                answer = httpx.get(f"{server.url}/v1/agents/{agent_name(0)}/memories", params={"q": "warm up"},
                                   timeout=120)
                if not answer.is_success:
                    server.errors.append(f"warming recall {answer.status_code}: {answer.text[:300]}")
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"{server.name} did not answer at {server.url}: {server.log.read_text()[-2000:]}")


# -- the workload ----------------------------------------------------------------------------------


class Workload:
    """What the clients share on one database: each agent's memory ids, new texts, the questions."""

    def __init__(self, ids: dict[str, list[str]], corpus: Corpus) -> None:
        self.ids = {agent: list(held) for agent, held in ids.items()}
        self.agents = sorted(ids)
        self.questions, self.fresh = corpus.questions, corpus.fresh
        self._lock = threading.Lock()
        self._asked, self._written = itertools.count(), itertools.count()

    def query(self, rng: random.Random) -> str:
        return f"{rng.choice(self.questions)} (#{next(self._asked)})"

    def text(self) -> str:
        n = next(self._written)
        base = self.fresh[n % len(self.fresh)]
        return base if n < len(self.fresh) else f"{base} (#{n})"

    def take(self, agent: str, rng: random.Random) -> str | None:
        """One of the agent's ids, held by this client alone until given back."""
        with self._lock:
            held = self.ids[agent]
            if not held:
                return None
            i = rng.randrange(len(held))
            held[i], held[-1] = held[-1], held[i]
            return held.pop()

    def give(self, agent: str, memory_id: str) -> None:
        with self._lock:
            self.ids[agent].append(memory_id)


def call(http: Any, op: str, agent: str, work: Workload, rng: random.Random) -> tuple[str, Any]:
    """One operation over the HTTP API: what it was (an agent with no id left recalls) and the answer."""
    path = f"/v1/agents/{agent}/memories"
    memory = work.take(agent, rng) if op in ("update", "forget") else None
    if op == "recall" or (op in ("update", "forget") and memory is None):
        return "recall", http.get(path, params={"q": work.query(rng), "limit": 10})
    if op == "store":
        answer = http.post(path, json={"content": work.text()})
        if answer.is_success:
            work.give(agent, answer.json()["id"])
        return op, answer
    assert memory is not None
    try:
        answer = http.patch(f"{path}/{memory}", json={"content": work.text()}) if op == "update" \
            else http.delete(f"{path}/{memory}")
    except Exception:
        work.give(agent, memory)
        raise
    if op == "update" or not answer.is_success:
        work.give(agent, memory)
    return op, answer


Record = tuple[str, float, float, "str | None"]  # operation, start, end, error


def client(url: str, work: Workload, seed: int, until: float, records: list[Record]) -> None:
    """Requests back to back until ``until`` (monotonic), each recorded."""
    import httpx

    rng = random.Random(seed)
    ops, weights = list(MIX), list(MIX.values())
    with httpx.Client(base_url=url, timeout=60) as http:
        while time.monotonic() < until:
            op, agent = rng.choices(ops, weights)[0], rng.choice(work.agents)
            began = time.monotonic()
            try:
                op, answer = call(http, op, agent, work, rng)
                error = None if answer.is_success else f"{op} {answer.status_code}: {answer.text[:300]}"
            except Exception as exc:  # the load generator's boundary: every failure counts, none stops it
                error = f"{op}: {type(exc).__name__}: {exc}"
            records.append((op, began, time.monotonic(), error))


def model_cost(corpus: Corpus, n: int = 100) -> dict[str, float]:
    """CPU milliseconds of the local model per query and per stored text, one at a time as the
    servers embed them (this process, the embedder's own settings): the model's share of an operation."""
    from hippo.providers.local import LocalEmbedder

    embedder = LocalEmbedder()
    embedder.embed_query("warm up")
    out = {}
    for kind, texts in (("query", corpus.questions[:n]), ("document", corpus.fresh[-n:])):
        began = time.process_time()
        for i, text in enumerate(texts):
            embedder.embed_documents([f"{text} (#{i})"])
        out[f"{kind}_cpu_ms"] = (time.process_time() - began) * 1000 / len(texts)
    out["per_op_cpu_ms"] = MIX["recall"] * out["query_cpu_ms"] + (MIX["store"] + MIX["update"]) * out["document_cpu_ms"]
    return out


# -- what bounds it --------------------------------------------------------------------------------


@dataclass
class Sampler:
    """CPU seconds by group of processes, the machine's CPU, and PostgreSQL's client connections,
    sampled from ``start`` to ``end`` (monotonic) in a thread."""

    groups: dict[str, Any]  # name -> a function giving that group's psutil processes now
    pg_url: str | None
    start: float
    end: float
    cpu: dict[str, dict[int, list[float]]] = field(default_factory=dict)  # group -> pid -> [first, last]
    activity: list[list[tuple[str, str, str, str]]] = field(default_factory=list)
    machine: list[Any] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    everyone: list[dict[int, tuple[float, str]]] = field(default_factory=list)  # every process, first and last
    work: list[dict[str, float]] = field(default_factory=list)  # the database's counters, first and last
    switches: dict[str, dict[int, list[tuple[int, int]]]] = field(default_factory=dict)  # group -> pid -> [first, last]
    kernel: dict[str, dict[int, list[float]]] = field(default_factory=dict)  # system CPU seconds, as ``cpu``

    def run(self) -> threading.Thread:
        thread = threading.Thread(target=self._loop, daemon=True)
        thread.start()
        return thread

    def _loop(self) -> None:
        import psutil

        conn = None
        if self.pg_url is not None:
            import psycopg

            conn = psycopg.connect(self.pg_url, autocommit=True)
        time.sleep(max(0.0, self.start - time.monotonic()))
        try:
            while True:
                last = time.monotonic() >= self.end
                self._tick(psutil, conn, census=last or not self.times)
                if last:
                    return
                time.sleep(min(SAMPLE_EVERY, max(0.0, self.end - time.monotonic())))
        finally:
            if conn is not None:
                conn.close()

    def _census(self, psutil: Any) -> None:
        """What else runs on the machine: every process's CPU seconds and command line."""
        found = {}
        for proc in psutil.process_iter(["cpu_times", "cmdline", "name", "nice"]):
            times, words = proc.info["cpu_times"], proc.info["cmdline"] or [proc.info["name"] or "?"]
            if times is not None:
                line = " ".join(" ".join(words).split())[:120]
                found[proc.pid] = (times.user + times.system, f"[nice {proc.info['nice']}] {line}")
        self.everyone.append(found)

    def _tick(self, psutil: Any, conn: Any, *, census: bool) -> None:
        first = not self.times
        if census:  # at the window's two ends
            self._census(psutil)
            if conn is not None:
                self.work.append(database_work(conn))
        self.times.append(time.monotonic())
        self.machine.append(psutil.cpu_times())
        for group, processes in self.groups.items():
            seen, switched = self.cpu.setdefault(group, {}), self.switches.setdefault(group, {})
            kernel = self.kernel.setdefault(group, {})
            for proc in processes():
                with contextlib.suppress(psutil.Error):
                    times = proc.cpu_times()
                    used = times.user + times.system
                    seen.setdefault(proc.pid, [used if first else 0.0, used])[1] = used
                    kernel.setdefault(proc.pid, [times.system if first else 0.0, times.system])[1] = times.system
                    if census:  # reading every thread's counters is not free: at the two ends only
                        now = thread_switches(proc.pid)  # (a process started between counts from 0)
                        switched.setdefault(proc.pid, [now if first else (0, 0), now])[1] = now
        if conn is not None:
            self.activity.append([tuple(row) for row in conn.execute(
                "SELECT application_name, state, coalesce(wait_event_type, ''), coalesce(wait_event, '') "
                "FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' "
                "AND pid <> pg_backend_pid()").fetchall()])


# What PostgreSQL did for the database (its cumulative statistics; each backend reports its own at
# most once a second, so the window's two ends are blurred by about that much).
_WORK = ("SELECT d.xact_commit + d.xact_rollback, t.idx_scan, t.seq_scan, t.idx_tup_fetch, d.blks_hit + d.blks_read, "
         "d.tup_returned, d.tup_inserted + d.tup_updated + d.tup_deleted FROM pg_stat_database d, "
         "(SELECT sum(idx_scan) AS idx_scan, sum(seq_scan) AS seq_scan, sum(idx_tup_fetch) AS idx_tup_fetch "
         "FROM pg_stat_user_tables) t WHERE d.datname = current_database()")
WORK_NAMES = ("transactions", "index_scans", "table_scans", "rows_by_index", "pages", "rows_read", "rows_written")


def database_work(conn: Any) -> dict[str, float]:
    return dict(zip(WORK_NAMES, (float(v or 0) for v in conn.execute(_WORK).fetchone())))


def work_per_op(work: list[dict[str, float]], done: int) -> dict[str, float]:
    """The database's work per completed operation in the window: transactions (a statement outside
    a transaction is one), index and table scans, rows fetched through an index, pages read
    (shared buffers or disk), rows read and written."""
    if len(work) < 2:
        return {}
    return {name: (work[-1][name] - work[0][name]) / max(1, done) for name in WORK_NAMES}


def thread_switches(pid: int) -> tuple[int, int]:
    """A process's voluntary and involuntary context switches summed over its threads (Linux:
    ``/proc/<pid>/status`` counts only the main thread's); a thread that ended is not counted."""
    voluntary = involuntary = 0
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/status") as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches"):
                        voluntary += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        involuntary += int(line.split()[1])
    return voluntary, involuntary


def per_op(counters: dict[str, dict[int, list[Any]]], done: int) -> dict[str, np.ndarray]:
    """Each group's counters (per process, first and last) summed over its processes, per completed
    operation; the servers' groups as one."""
    out: dict[str, np.ndarray] = {}
    for group, pids in counters.items():
        name = "servers" if group.startswith("load-") else group
        for first, last in pids.values():
            out[name] = out.get(name, 0.0) + np.subtract(last, first, dtype=float) / max(1, done)
    return out


def kernel_ms_per_op(sampler: Sampler, done: int) -> dict[str, float]:
    """The part of each group's CPU per operation spent in the kernel (system time)."""
    return {name: float(seconds) * 1000 for name, seconds in per_op(sampler.kernel, done).items()}


def switches_per_op(sampler: Sampler, done: int) -> dict[str, dict[str, float]]:
    """Context switches per completed operation by group of processes (their threads'):
    voluntary (a thread waited: for the database, a lock, a reply) and involuntary (the kernel
    took its core for another)."""
    return {name: {"voluntary": float(n[0]), "involuntary": float(n[1])}
            for name, n in per_op(sampler.switches, done).items()}


def cpu_summary(sampler: Sampler) -> dict[str, Any]:
    """Cores used on average by each group, and by the machine (``nice``: niced work, such as a
    background job; ``other``: the rest of the busy time, other processes' and the kernel's)."""
    wall = sampler.times[-1] - sampler.times[0]
    cores: dict[str, float] = {group: sum(last - first for first, last in pids.values()) / wall
                               for group, pids in sampler.cpu.items()}
    before, after = sampler.machine[0], sampler.machine[-1]
    spent = {name: getattr(after, name) - getattr(before, name) for name in before._fields}
    idle = {"idle", "iowait", "guest", "guest_nice"}  # guest time is counted in user and nice already
    busy = sum(v for name, v in spent.items() if name not in idle) / wall
    servers = sum(v for k, v in cores.items() if k.startswith("load-"))
    ours = {pid for pids in sampler.cpu.values() for pid in pids}
    first, last = sampler.everyone[0], sampler.everyone[-1]
    others = sorted(((used - first.get(pid, (0.0, ""))[0]) / wall, line) for pid, (used, line) in last.items()
                    if pid not in ours)
    nice = spent.get("nice", 0.0) / wall
    return {"wall_s": wall, "cores": os.cpu_count(), "machine_busy": busy, "nice": nice,
            "servers": servers, "per_server": {k: v for k, v in cores.items() if k.startswith("load-")},
            "postgres": cores.get("postgres", 0.0), "client": cores.get("client", 0.0),
            "other": busy - nice - servers - cores.get("postgres", 0.0) - cores.get("client", 0.0),
            "other_processes": [{"cores": round(c, 3), "process": line} for c, line in others[::-1][:5] if c >= 0.02]}


def pg_summary(activity: list[list[tuple[str, str, str, str]]], names: list[str]) -> dict[str, Any]:
    """Connections in use by server (running a statement or inside a transaction), how often a
    server's pool was all in use, and what the connections waited on."""
    if not activity:
        return {}
    busy = {name: [sum(1 for app, state, _, _ in rows if app == name and state in ("active", "idle in transaction"))
                   for rows in activity] for name in names}
    waits = collections.Counter(f"{kind}:{event}" for rows in activity for _, state, kind, event in rows
                                if state == "active" and kind and kind != "Client")
    locks = [sum(1 for _, _, kind, _ in rows if kind == "Lock") for rows in activity]
    return {"samples": len(activity),
            "in_use_mean": {n: float(np.mean(v)) for n, v in busy.items()},
            "in_use_max": {n: max(v) for n, v in busy.items()},
            "pool_full_share": {n: sum(1 for x in v if x >= POOL_SIZE) / len(v) for n, v in busy.items()},
            "lock_waiters_mean": float(np.mean(locks)),
            "waits_per_sample": {k: c / len(activity) for k, c in waits.most_common(6)}}


def name_bound(cpu: dict[str, Any], pg: dict[str, Any], threads: dict[str, float]) -> str:
    """The resource that bounds the run, read from the samples (thresholds in the text). A queue
    comes first (connections waiting on a lock, request threads waiting for the store or the pool):
    it holds work back whatever else is busy; then the CPU."""
    cores, ours = cpu["cores"], cpu["machine_busy"] - cpu["nice"]  # niced work yields the cores
    split = (f"machine {ours / cores:.0%} busy without niced work: hippo serve {cpu['servers']:.2f}, PostgreSQL "
             f"{cpu['postgres']:.2f}, load generator {cpu['client']:.2f}, other processes {cpu['other']:.2f}, "
             f"niced {cpu['nice']:.2f} cores")
    waiting = pg.get("lock_waiters_mean", 0.0)
    if waiting >= 1.0:
        kinds = ", ".join(k for k in pg["waits_per_sample"] if k.startswith("Lock:"))
        return f"locks in PostgreSQL: {waiting:.1f} connections waiting on average ({kinds}); {split}"
    store = threads.get("waiting for the store's lock", 0.0)
    if store >= 1.0:
        return (f"the store's lock (one SQLite connection for every read and write): {store:.1f} request threads "
                f"waiting for it on average; {split}")
    behind = threads.get("waiting for the retrieval writer", 0.0)
    if behind >= 1.0:
        return (f"the retrieval writer (one per server; a read first waits for the queued recall bookkeeping to be "
                f"written): {behind:.1f} request threads waiting for it on average; {split}")
    pool = threads.get("waiting for the pool", 0.0)
    if pool >= 1.0:
        return f"the pool: {pool:.1f} request threads waiting for a connection on average; {split}"
    if ours >= 0.85 * cores:
        return f"CPU: {split}"
    hottest = max(cpu["per_server"].values(), default=0.0)
    if hottest >= 0.9 and len(cpu["per_server"]) == 1:
        return f"one server process: {hottest:.2f} cores, about all one Python interpreter runs; {split}"
    return f"nothing saturated: no queue on a lock or the pool; {split}"


PY_SPY = Path(sys.executable).with_name("py-spy")
STACKS_EVERY = 3.0  # seconds between two dumps of a server's threads (each pauses it for a few ms)


def thread_state(stack: list[str]) -> str | None:
    """What a request thread of ``hippo serve`` is doing, from its stack (innermost frame first);
    None for a thread that serves no request (the event loop, the queue's writer)."""
    if not any(frame.startswith("WorkerThread.run") for frame in stack):
        return None
    top = stack[0]
    if top.startswith("Queue.get") or (top.startswith("Condition.wait") and stack[1].startswith("Queue.get")):
        return "idle"
    if top.startswith("Session.run"):
        return "the model"
    if any("getconn" in frame for frame in stack):
        return "waiting for the pool"
    if top.startswith(("RetrievalQueue.flush", "RetrievalQueue.write_agent")) or any(  # a write of its agent
            frame.startswith("RetrievalQueue._claim") for frame in stack[:2]):  # under way, or the store's lock
        return "waiting for the retrieval writer"
    if top.startswith(("SQLiteStore._reading", "SQLiteStore.transaction")):
        return "waiting for the store's lock"
    if "psycopg/" in top:
        return "in PostgreSQL"
    return "Python"


def thread_census(pid: int) -> collections.Counter[str]:
    """One ``py-spy dump`` of a server: its request threads by state."""
    dump = subprocess.run([str(PY_SPY), "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30)
    states: collections.Counter[str] = collections.Counter()
    for block in dump.stdout.split("\nThread ")[1:]:
        stack = [line.strip() for line in block.splitlines()[1:] if line.startswith("    ")]
        state = thread_state(stack) if stack else None
        if state is not None:
            states[state] += 1
    return states


def sample_threads(started: list[Server], start: float, end: float, out: dict[str, Any]) -> None:
    """Request threads by state, averaged over dumps of every server from ``start`` to ``end``."""
    if not PY_SPY.exists():
        return
    total: collections.Counter[str] = collections.Counter()
    dumps = 0
    time.sleep(max(0.0, start - time.monotonic()))
    while time.monotonic() < end:
        for server in started:
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                total.update(thread_census(server.proc.pid))
        dumps += 1
        time.sleep(STACKS_EVERY)
    out.update({state: count / dumps for state, count in total.most_common()} if dumps else {})


# -- one run ---------------------------------------------------------------------------------------


def process_groups(started: list[Server], pg_url: str | None) -> dict[str, Any]:
    import psutil

    groups: dict[str, Any] = {"client": lambda: [psutil.Process()]}
    for server in started:
        proc = psutil.Process(server.proc.pid)
        groups[server.name] = lambda proc=proc: [proc, *proc.children(recursive=True)]
    if pg_url is not None:
        import psycopg

        with psycopg.connect(pg_url) as conn:  # its backend is a child of the postmaster while it lives
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            postmaster = psutil.Process(psutil.Process(backend).ppid())  # a PostgreSQL on this machine
        groups["postgres"] = lambda: [postmaster, *postmaster.children()]
    return groups


def drive(started: list[Server], work: Workload, clients: int, warmup: float, seconds: float,
          pg_url: str | None) -> dict[str, Any]:
    """``clients`` threads on the servers round-robin; the timed window's results."""
    records: list[Record] = []
    t0 = time.monotonic() + warmup
    t1 = t0 + seconds
    sampler = Sampler(process_groups(started, pg_url), pg_url, t0, t1)
    sampling = sampler.run()
    threads_by_state: dict[str, float] = {}
    spying = threading.Thread(target=sample_threads, args=(started, t0, t1, threads_by_state), daemon=True)
    spying.start()
    threads = [threading.Thread(target=client, args=(started[i % len(started)].url, work, 1000 * clients + i, t1,
                                                     records), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        time.sleep(min(10.0, max(0.5, seconds / 6)))
        phase = "warm-up" if time.monotonic() < t0 else "timed"
        print(f"    {phase}: {len(records):,} operations, {sum(1 for r in records if r[3]):,} errors",
              file=sys.stderr, flush=True)
    for thread in threads:
        thread.join()
    sampling.join(timeout=30)
    spying.join(timeout=60)
    warming = [error for server in started for error in server.errors]
    return summarize(records, t0, t1, sampler, [s.name for s in started], warming, threads_by_state)


def summarize(records: list[Record], t0: float, t1: float, sampler: Sampler, names: list[str],
              warming: list[str], threads: dict[str, float]) -> dict[str, Any]:
    timed = [r for r in records if t0 <= r[2] <= t1]
    errors = warming + [r[3] for r in records if r[3]]
    ops: dict[str, Any] = {}
    for op in MIX:
        ms = [(end - start) * 1000 for name, start, end, error in timed if name == op and not error]
        ops[op] = {"n": len(ms), "p50_ms": pct(ms, 0.50), "p95_ms": pct(ms, 0.95), "p99_ms": pct(ms, 0.99)}
    cpu = cpu_summary(sampler)
    pg = pg_summary(sampler.activity, names)
    done = sum(1 for r in timed if not r[3])
    return {"seconds": t1 - t0, "operations": done, "throughput": done / (t1 - t0), "ops": ops,
            "errors": len(errors), "error_samples": list(dict.fromkeys(errors))[:5], "all_operations": len(records),
            "cpu": cpu, "postgres_activity": pg, "request_threads": threads,
            "cpu_ms_per_op": {"servers": cpu["servers"] * cpu["wall_s"] * 1000 / max(1, done),
                              "postgres": cpu["postgres"] * cpu["wall_s"] * 1000 / max(1, done)},
            "database_work_per_op": work_per_op(sampler.work, done),
            "context_switches_per_op": switches_per_op(sampler, done),
            "kernel_cpu_ms_per_op": kernel_ms_per_op(sampler, done),
            "bound": name_bound(cpu, pg, threads)}


# -- report ----------------------------------------------------------------------------------------


def table(runs: list[dict[str, Any]]) -> str:
    lines = ["| configuration | clients | round | ops/s | recall p50 / p95 / p99 | store p50 / p95 / p99 | "
             "update p50 / p95 / p99 | forget p50 / p95 / p99 | errors | CPU cores: machine / hippo serve / "
             "PostgreSQL / load generator / other processes | PostgreSQL connections in use (mean) |",
             "| --- | ---: | ---: | ---: | --- | --- | --- | --- | ---: | --- | --- |"]
    for run in runs:
        cells = [" / ".join(f"{run['ops'][op][k]:.0f}" for k in ("p50_ms", "p95_ms", "p99_ms")) + " ms" for op in MIX]
        cpu, pg = run["cpu"], run["postgres_activity"]
        in_use = ", ".join(f"{v:.1f}" for v in pg.get("in_use_mean", {}).values()) or "-"
        lines.append(f"| {run['configuration']} | {run['clients']} | {run['round']} | {run['throughput']:.1f} | "
                     f"{' | '.join(cells)} | {run['errors']} | {cpu['machine_busy']:.2f} / {cpu['servers']:.2f} / "
                     f"{cpu['postgres']:.2f} / {cpu['client']:.2f} / {cpu['other'] + cpu['nice']:.2f} | {in_use} |")
    lines.append("")
    for run in runs:
        states = ", ".join(f"{state} {n:.1f}" for state, n in run["request_threads"].items() if state != "idle")
        lines.append(f"- {run['configuration']}, {run['clients']} clients, round {run['round']}: {run['bound']}"
                     + (f". Request threads (mean, py-spy): {states}" if states else ""))
    return "\n".join(lines)


def comparisons(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Three servers' throughput over one server's, at each client count: over all rounds, and each."""
    out: dict[str, Any] = {}
    for n in dict.fromkeys(r["clients"] for r in runs):
        one = [r["throughput"] for r in runs if r["clients"] == n and r["configuration"] == "postgresql x1"]
        three = [r["throughput"] for r in runs if r["clients"] == n and r["configuration"] == "postgresql x3"]
        if one and len(one) == len(three):
            out[str(n)] = {"all_rounds": sum(three) / sum(one), "rounds": [b / a for a, b in zip(one, three)]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", help="comma-separated client counts (8,32)")
    parser.add_argument("--seconds", type=float, help="timed window per run (60)")
    parser.add_argument("--warmup", type=float, help="untimed seconds before each window (10)")
    parser.add_argument("--agents", type=int, help="(100)")
    parser.add_argument("--per-agent", type=int, help="memories per agent (1000)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every configuration, in turn, per client count")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated, of: pg1, pg3, sqlite")
    parser.add_argument("--postgres", help="a PostgreSQL URL with pgvector, on this machine (default: start one)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--smoke", action="store_true",
                        help="fake vectors and, unless given, 2 agents of 100 memories, 2 clients, seconds")
    args = parser.parse_args(argv)
    defaults = ("2", 1.5, 0.5, 2, 100) if args.smoke else ("8,32", 60.0, 10.0, 100, 1000)
    for name, default in zip(("clients", "seconds", "warmup", "agents", "per_agent"), defaults):
        if getattr(args, name) is None:
            setattr(args, name, default)
    results = run_all(args)
    results["command"] = " ".join(["python bench/load.py", *(sys.argv[1:] if argv is None else argv)])
    print(table(results["runs"]) + "\n")
    for n, ratio in results["three_over_one"].items():
        rounds = ", ".join(f"{r:.2f}" for r in ratio["rounds"])
        print(f"three servers / one server, throughput at {n} clients: {ratio['all_rounds']:.2f} (rounds: {rounds})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


def code_state() -> dict[str, Any]:
    """The commit run and the source files changed beside it (others may be editing the tree)."""
    def git(*words: str) -> str:
        found = subprocess.run(["git", *words], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                               text=True, check=False)
        return found.stdout.strip()

    return {"commit": git("rev-parse", "HEAD"), "uncommitted": git("status", "--short", "src").splitlines()}


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    clients = [int(c) for c in str(args.clients).split(",")]
    embedder = "fake:384" if args.smoke else "local"
    results: dict[str, Any] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cpus": os.cpu_count(),
        "load_before": os.getloadavg(), "agents": args.agents, "memories": args.agents * args.per_agent,
        "mix": MIX, "code": code_state(), "runs": []}
    with tempfile.TemporaryDirectory(prefix="hippo-load-") as folder:
        tmp = Path(folder)
        corpus = load_corpus(args.agents * args.per_agent, args.smoke)
        if not args.smoke:
            results["model"] = model_cost(corpus)
            print(f"the local model: {results['model']}", file=sys.stderr)
        configs = [CONFIGS[name] for name in args.configs.split(",")]
        with postgres_database(args.postgres, tmp) as pg:
            databases = {"postgresql": pg, "sqlite": str(tmp / "load.db")}
            work, results["fill_seconds"] = {}, {}
            for backend, db in databases.items():
                if backend not in {b for b, _ in configs}:
                    continue
                print(f"{backend}: filling {args.agents * args.per_agent:,} memories...", file=sys.stderr)
                ids, results["fill_seconds"][backend] = fill(db, corpus, args.agents, args.per_agent)
                work[backend] = Workload(ids, corpus)
            for n, round_, (backend, count) in itertools.product(clients, range(1, args.rounds + 1), configs):
                name = f"{backend} x{count}"
                print(f"{name}, {n} clients, round {round_}: starting...", file=sys.stderr, flush=True)
                with servers(databases[backend], count, tmp, embedder) as started:
                    run = drive(started, work[backend], n, args.warmup, args.seconds,
                                pg if backend == "postgresql" else None)
                results["runs"].append({"configuration": name, "clients": n, "round": round_, **run})
                print(f"  {run['throughput']:.1f} ops/s, {run['errors']} errors; {run['bound']}", file=sys.stderr)
    results["three_over_one"] = comparisons(results["runs"])
    results["load_after"] = os.getloadavg()
    return results


if __name__ == "__main__":
    sys.exit(main())
