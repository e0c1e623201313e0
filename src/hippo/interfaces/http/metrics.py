"""``GET /metrics``: the server's figures in the Prometheus text format (``prometheus-client``).

Each app has a registry of its own (tests start many apps in one process; the library's global
registry would mix them). What is counted as it happens: requests by route template (never the
raw path: one series per route, whatever the ids), method and status; the time of each request
and of each memory operation (recall, store, remember_facts, observe, surface, compact; the agent
tools and ``operations/{name}`` count as the operation they run); errors by their envelope's
``code``; the embedding model's calls (time and batch size, told by the core's embedding
service); the maintenance, consolidation and capture runs, scheduled or asked for. What is read
when scraped: the database's size and chunks by kind, the capture inbox's pending messages and
the age of the oldest (:mod:`hippo.core.vitals`, every agent's at once).

The route spans every agent, so a server with keys answers it only to an admin key.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterator

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.concurrency import run_in_threadpool

from hippo.core.embedding import EmbedCall
from hippo.core.vitals import backend_name, database_vitals
from hippo.interfaces.http.service import Run, base_path

if TYPE_CHECKING:
    from hippo.interfaces.http.service import Service

__all__ = ["Metrics", "operation_of", "router"]

log = logging.getLogger("hippo.http")
router = APIRouter()

# The routes that run one of the measured operations, by method and route template.
ROUTES = {
    ("POST", f"{base_path}/memories/recall"): "recall",
    ("POST", f"{base_path}/memories"): "store",
    ("POST", f"{base_path}/facts"): "remember_facts",
    ("POST", f"{base_path}/sessions/{{session_id}}/messages"): "observe",
    ("POST", f"{base_path}/sessions/{{session_id}}/surface"): "surface",
    ("POST", f"{base_path}/compact"): "compact",
}
# The agent tools and Memory's operations (``tools/{name}``, ``operations/{name}``) that are one of them.
NAMED = {"recall_memories": "recall", "store_memory": "store", "store_memories": "store",
         "remember_facts": "remember_facts", "observe": "observe", "surface": "surface", "compact": "compact"}
NAMED_ROUTES = (f"{base_path}/tools/{{name}}", f"{base_path}/operations/{{name}}")
# The routes that run maintenance work on request (the schedules report their own runs).
RUNS = {("POST", f"{base_path}/process"): "capture", ("POST", f"{base_path}/consolidate"): "consolidation"}
RUN_NAMES = {"process_pending": "capture", "consolidate": "consolidation"}

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def operation_of(method: str, route: str, name: str | None) -> str | None:
    """The measured operation a request runs (None: none of them); ``name`` is the path's
    ``{name}`` (a tool or an operation)."""
    if route in NAMED_ROUTES and method == "POST":
        return NAMED.get(name or "")
    return ROUTES.get((method, route))


def run_of(method: str, route: str, name: str | None) -> str | None:
    """The maintenance task a request runs, if any: capture or consolidation."""
    if route == NAMED_ROUTES[1] and method == "POST":
        return RUN_NAMES.get(name or "")
    return RUNS.get((method, route))


class Metrics:
    """The instruments of one app, in its own registry."""

    def __init__(self, service: "Service") -> None:
        self.service = service
        self.registry = registry = CollectorRegistry()
        self.requests = Counter("hippo_http_requests", "HTTP requests answered, by route template, method and status",
                                ["route", "method", "status"], registry=registry)
        self.request_seconds = Histogram("hippo_http_request_duration_seconds",
                                         "Time to answer a request, by route template and method",
                                         ["route", "method"], registry=registry)
        self.operation_seconds = Histogram("hippo_operation_duration_seconds",
                                           "Time of a memory operation over HTTP (route, agent tool or operation)",
                                           ["operation"], registry=registry)
        self.errors = Counter("hippo_errors", "Error answers, by the error envelope's code", ["code"],
                              registry=registry)
        self.embed_seconds = Histogram("hippo_embedding_duration_seconds",
                                       "Time of a call to the embedding model, by purpose", ["purpose"],
                                       registry=registry)
        self.embed_batch = Histogram("hippo_embedding_batch_size", "Texts per call to the embedding model",
                                     ["purpose"], buckets=BATCHES, registry=registry)
        self.embed_failures = Counter("hippo_embedding_failures", "Calls to the embedding model that failed",
                                      ["purpose"], registry=registry)
        self.runs = Counter("hippo_maintenance_runs", "Maintenance, consolidation and capture runs, by trigger "
                            "(schedule or request) and outcome", ["task", "trigger", "outcome"], registry=registry)
        self.archived = Counter("hippo_archived_memories", "Memories moved to the archive by maintenance runs",
                                registry=registry)
        registry.register(DatabaseCollector(service))
        service.observe_embeddings(self.embedded)
        service.on_run.append(self.ran)

    def request(self, *, method: str, route: str, status: int, seconds: float, name: str | None,
                error: str | None) -> None:
        """Count one answered request (``route``: its template)."""
        self.requests.labels(route, method, str(status)).inc()
        self.request_seconds.labels(route, method).observe(seconds)
        operation = operation_of(method, route, name)
        if operation is not None and status < 400:  # an operation's time is that of those that ran
            self.operation_seconds.labels(operation).observe(seconds)
        if error is not None:
            self.errors.labels(error).inc()
        task = run_of(method, route, name)
        if task is not None:
            self.service.ran(Run(task, "request", status < 400))

    def embedded(self, call: EmbedCall) -> None:
        self.embed_seconds.labels(call.purpose).observe(call.seconds)
        self.embed_batch.labels(call.purpose).observe(call.batch)
        if not call.ok:
            self.embed_failures.labels(call.purpose).inc()

    def ran(self, run: Run) -> None:
        self.runs.labels(run.task, run.trigger, "ok" if run.ok else "failed").inc()
        if run.archived:
            self.archived.inc(run.archived)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class DatabaseCollector(Collector):
    """The figures read from the database when scraped; ``hippo_store_up`` 0 when it cannot be read."""

    def __init__(self, service: "Service") -> None:
        self.service = service

    def collect(self) -> Iterator[Any]:
        base = self.service.base
        up = GaugeMetricFamily("hippo_store_up", "Whether the database answered this scrape", labels=["backend"])
        try:
            vitals = database_vitals(base)
        except Exception as exc:  # a scrape must answer (the store down is what it reports): logged
            log.warning("metrics: the database could not be read (%s)", type(exc).__name__)
            up.add_metric([backend_name(base)], 0)
            yield up
            return
        up.add_metric([vitals.backend], 1)
        yield up
        size = GaugeMetricFamily("hippo_store_size_bytes", "The database's size on disk", labels=["backend"])
        size.add_metric([vitals.backend], vitals.size_bytes)
        yield size
        chunks = GaugeMetricFamily("hippo_chunks", "Chunks of every agent, by kind", labels=["backend", "kind"])
        for kind in sorted({"fact", "memory", *vitals.chunks}):
            chunks.add_metric([vitals.backend, kind], vitals.chunks.get(kind, 0))
        yield chunks
        yield GaugeMetricFamily("hippo_capture_pending_messages", "Observed messages waiting to be processed "
                                "(every agent)", value=vitals.pending_messages)
        yield GaugeMetricFamily("hippo_capture_oldest_pending_age_seconds",
                                "How long the oldest waiting message has waited (0: none waits)",
                                value=vitals.oldest_pending_seconds(datetime.now(timezone.utc)))


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """The Prometheus exposition; an admin key when the server needs keys (it spans every agent)."""
    service: Service = request.app.state.service
    service.authorize_admin(request.headers.get("authorization"))
    found: Metrics = request.app.state.metrics
    return Response(await run_in_threadpool(found.exposition), media_type=CONTENT_TYPE_LATEST)
