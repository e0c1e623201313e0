"""Running the HTTP API with uvicorn: the loopback rule, the start-up message, a server for tests."""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

from hippo.errors import ConfigError, missing_extra

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["LOOPBACK", "BackgroundServer", "bind", "check_bind", "serve"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
SHUTDOWN_GRACE = 30  # seconds a stopping server waits for the requests it took


def check_bind(mem: "Memory", host: str) -> bool:
    """Whether requests will need a key; refuse a non-loopback bind when no key exists."""
    keyed = mem.keys.any()
    if not keyed and host not in LOOPBACK:
        raise ConfigError(
            f"refusing to serve on {host} without API keys: anyone who can reach it could read every agent's "
            "memory. Create a key first (hippo keys create --agent ID) or bind to 127.0.0.1"
        )
    return keyed


def _config(mem: "Memory", host: str, port: int, *, max_body_bytes: int, cors_origins: tuple[str, ...],
            log_format: str | None = None) -> Any:
    """The app for a bind: keys required from the start when any exist (check_bind), and on
    loopback only Host names of loopback answered (no DNS rebinding). With ``log_format`` json
    (or the setting), uvicorn leaves the logging to the process's (:func:`configure_logging`)."""
    _require_uvicorn()
    import uvicorn

    from hippo.interfaces.http import create_app
    from hippo.interfaces.http.guards import LOOPBACK_HOSTS

    keyed = check_bind(mem, host)
    log_format = log_format or mem.settings.log_format
    app = create_app(mem, max_body_bytes=max_body_bytes, cors_origins=cors_origins, require_keys=keyed,
                     allowed_hosts=LOOPBACK_HOSTS if host in LOOPBACK else None, log_format=log_format)
    # With json, uvicorn adds no plain handlers of its own: its lines go through the process's JSON handler.
    own = None if log_format == "json" else uvicorn.config.LOGGING_CONFIG
    # On SIGTERM uvicorn stops listening, answers what it took and then closes the app (the
    # schedules stop, the database closes); a request that hangs past the grace ends it anyway.
    return uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", access_log=False,
                          log_config=own, timeout_graceful_shutdown=SHUTDOWN_GRACE)


def _require_uvicorn() -> None:
    """Without uvicorn, the :class:`MissingDependency` naming the ``http`` extra (as the CLI reports
    a missing extra: ``missing_extra``), never a bare ``ModuleNotFoundError``."""
    try:
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise (missing_extra(exc) or exc) from None


def bind(host: str, port: int) -> list[socket.socket]:
    """The sockets ``host:port`` names, bound (every address a name resolves to, as uvicorn would
    bind them): an address in use is one :class:`ConfigError` before anything is announced, and
    no other program can take the port between this check and the server's start."""
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(
                socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            if os.name == "posix":  # as asyncio does: a port in TIME_WAIT is free, one listened on is not
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError as exc:
        for sock in bound:
            sock.close()
        reason = "the address is already in use (is another server running there?); choose another port" \
            if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise ConfigError(f"cannot serve at {_url(host, port)}: {reason}") from None
    return bound


def _url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def serve(mem: "Memory", *, host: str = "127.0.0.1", port: int = 8000, max_body_bytes: int = 1_000_000,
          cors_origins: tuple[str, ...] = (), announce: Any = None, log_format: str | None = None,
          prepare: Callable[[], None] | None = None) -> None:
    """Serve until interrupted. ``announce`` (default: print to stderr) gets the start-up lines,
    said once the address is bound (a port in use is a :class:`ConfigError`, nothing announced).
    ``log_format`` (None: the setting): ``json`` makes every line on stderr a JSON object.
    ``prepare`` runs once the address is bound, before anything is served (``hippo serve`` loads
    the embedding model there: ready from the first request, and a busy port fails before it)."""
    _require_uvicorn()
    import uvicorn

    from hippo.interfaces.http.access import configure_logging

    log_format = log_format or mem.settings.log_format
    as_json = configure_logging(log_format)  # before anything is said
    keyed = check_bind(mem, host)
    sockets = bind(host, port)
    try:
        if prepare is not None:
            prepare()
        config = _config(mem, host, port, max_body_bytes=max_body_bytes, cors_origins=cors_origins,
                         log_format=log_format)
        say = as_json or announce or (lambda line: print(line, file=sys.stderr, flush=True))
        url = _url(host, sockets[0].getsockname()[1])  # with port 0, the one the system gave
        say(f"hippo {_version()} serving {mem.database} at {url}")
        say(f"dashboard: {url}/  API docs: {url}/docs")
        say("API keys required (Authorization: Bearer ...)" if keyed else
            "no API keys configured: open to this machine only (loopback); hippo keys create --agent ID adds one")
        schedules = _schedules(mem, config.app.state.service, say)
        try:
            uvicorn.Server(config).run(sockets=sockets)
        finally:
            for schedule in schedules:
                schedule.stop()
    finally:
        for sock in sockets:  # closed by uvicorn's shutdown already, unless it never started
            sock.close()


def _schedules(mem: "Memory", service: Any, say: Any) -> list[Any]:
    """The background work ``hippo serve`` was configured for, started: maintenance on
    ``prune_schedule``, consolidation every ``consolidate_every`` seconds, capture processing every
    ``capture_every`` seconds, the audit trail's trim when ``audit_retention_days`` is set; and,
    always, the release of the memory the C allocator keeps free."""
    from hippo.interfaces.http.schedule import (
        AuditTrimSchedule,
        CaptureSchedule,
        ConsolidationSchedule,
        HeapRelease,
        MaintenanceSchedule,
    )

    started: list[Any] = [HeapRelease(say).start()]
    if mem.settings.prune_schedule:
        started.append(MaintenanceSchedule(mem, mem.settings.prune_schedule, say, on_run=service.ran).start())
    if mem.settings.consolidate_every is not None:
        started.append(ConsolidationSchedule(service, mem.settings.consolidate_every, say).start())
    if mem.settings.capture_every is not None:
        started.append(CaptureSchedule(service, mem.settings.capture_every, say).start())
    if mem.settings.audit_retention_days is not None:
        started.append(AuditTrimSchedule(mem, mem.settings.audit_retention_days, say, on_run=service.ran).start())
    service.on_close.extend(schedule.stop for schedule in started)  # stopped before the database closes
    return started


def _version() -> str:
    from hippo.wiring import __version__

    return __version__


class BackgroundServer:
    """The API on a free loopback port in a thread: ``with BackgroundServer(mem) as url: ...``."""

    def __init__(self, mem: "Memory", **options: Any) -> None:
        _require_uvicorn()
        import uvicorn

        self._server = uvicorn.Server(_config(mem, "127.0.0.1", 0, max_body_bytes=options.pop("max_body_bytes",
                                                                                               1_000_000),
                                              cors_origins=options.pop("cors_origins", ())))
        self._server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self.app = self._server.config.app  # the FastAPI app it serves: its routes, for tests
        self.url = ""

    def __enter__(self) -> str:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the HTTP server did not start")
            threading.Event().wait(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    def stop(self) -> None:
        """Ask the server to stop without waiting for it (``__exit__`` waits): its shutdown pauses
        a tenth of a second or two (uvicorn's), which tests that start many servers let overlap."""
        self._server.should_exit = True

    @property
    def stopped(self) -> bool:
        """Whether the server has shut down (and closed the memory it served)."""
        return not self._thread.is_alive()

    def wait(self, timeout: float = 10) -> None:
        """Wait until the server has shut down, at most ``timeout`` seconds."""
        self._thread.join(timeout=timeout)

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.wait()
