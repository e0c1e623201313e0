"""``hippo server http | mcp | prepare`` and ``hippo keys``: the commands that run hippo as a service
(``hippo serve``, ``hippo mcp`` and ``hippo prepare`` before the groups)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable, Iterator, Optional

import typer

from hippo import wiring
from hippo.errors import NotFound
from hippo.interfaces.cli.app import JSON, Options, group, opened
from hippo.interfaces.cli.render import emit_json, note

if TYPE_CHECKING:
    from hippo.core.keys import KeyRing
    from hippo.core.memory import Memory

server = group()
keys = group()


@server.command("http")
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(
        metavar="ADDRESS", help="Address to bind; anything but loopback needs API keys. On loopback, requests whose "
                                "Host header names anything but 127.0.0.1, localhost or [::1] get 421.")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    cors_origin: Annotated[Optional[list[str]], typer.Option(
        "--cors-origin", metavar="ORIGIN", help="Allow browser requests from this origin (repeatable); none by "
                                                "default.")] = None,
    max_body: Annotated[int, typer.Option(min=1024, metavar="BYTES", help="Largest request body, in bytes.")]
    = 1_000_000,
    log_format: Annotated[Optional[str], typer.Option(
        "--log-format", metavar="text|json", help="text (the default: plain lines, none per request) or json "
                                                   "(one JSON object per line on stderr, one per request); "
                                                   "the log_format setting otherwise.")] = None,
) -> None:
    """Serve the HTTP API and the web dashboard (every agent of the database) until interrupted.
    The embedding model loads before the first request is answered (GET /readyz: 200 once it has)."""
    from hippo.interfaces.http.access import check_log_format, configure_logging
    from hippo.interfaces.http.server import serve as run

    with opened(ctx, create=True) as mem:
        chosen = check_log_format(log_format or mem.settings.log_format)
        say = configure_logging(chosen) or note
        try:
            run(mem, host=host, port=port, max_body_bytes=max_body, cors_origins=tuple(cors_origin or ()),
                announce=say, log_format=chosen, prepare=lambda: _warm_up(mem, say))
        except KeyboardInterrupt:
            if chosen == "text":
                raise  # the command line's own "interrupted"
            say("interrupted")  # as JSON, like every other line
            raise typer.Exit(130) from None


@server.command()
def mcp(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option(
        metavar="ADDRESS", help="With --http: address to bind (loopback unless --allow-remote).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="With --http: port.")] = 8765,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="With --http: allow a non-loopback bind (the MCP endpoint has no authentication).")]
    = False,
) -> None:
    """Serve the agent tools and memory blocks over MCP (stdio by default) for Claude, IDEs and other clients."""
    from hippo.interfaces import mcp as server

    if http:
        server.check_bind(host, allow_remote)
    with opened(ctx, create=True) as mem:
        _warm_up(mem)  # the model loads now, said on stderr, not silently in the first tool call
        if http:
            server.run_http(mem, host=host, port=port, allow_remote=allow_remote)
        else:
            server.run_stdio(mem)


def _warm_up(mem: "Memory", say: Callable[[str], None] = note) -> None:
    embedder = mem.embedding.embedder
    if embedder is None:
        return
    say(f"hippo: loading the embedding model {embedder.model_id} ...")
    began = time.perf_counter()
    mem.embedding.query("warm up")
    failed = f" (it failed: {mem.embedding.last_error}; recall answers by keyword)" if mem.embedding.last_error else ""
    say(f"hippo: model ready in {time.perf_counter() - began:.1f} s{failed}")


@server.command()
def prepare(ctx: typer.Context) -> None:
    """Load the embedding model now (and make its int8 copy if one is asked for), showing progress,
    so that the first store or tool call does not spend the time; print the command for MCP configs."""
    options = ctx.find_root().obj
    spec = wiring.settings(embedder=options.embedder if options else None).embedder
    if spec is None or spec == "none":
        return note("hippo: keyword-only memory (--embedder none) needs no model")
    note(f"hippo: preparing the embedding model {spec} ...")
    began = time.perf_counter()
    embedder = wiring.embedder(spec)
    assert embedder is not None  # spec names a model: checked above
    embedder.embed_query("warm up")
    note(f"hippo: {embedder.model_id} is ready ({time.perf_counter() - began:.1f} s); nothing else to download")
    beside = Path(sys.executable).with_name("hippo.exe" if os.name == "nt" else "hippo")  # this environment's
    note(f"hippo: for MCP configs, the command is {beside if beside.exists() else shutil.which('hippo') or 'hippo'}")


@keys.command("create")
def keys_create(
    ctx: typer.Context,
    agent: Annotated[Optional[list[str]], typer.Option(
        "--agent", metavar="ID", help="Agent the key may reach (repeatable).")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="The key reaches every agent.")] = False,
    label: Annotated[Optional[str], typer.Option(metavar="TEXT", help="A note to tell keys apart.")] = None,
    as_json: JSON = False,
) -> None:
    """Create an API key; it is printed once and only its hash is stored."""
    with _keys(ctx, create=True) as ring:
        token, record = ring.create(agent or [], admin=admin, label=label)
    if as_json:
        emit_json({"key": token, **_public(record)})
        return
    print(token)
    note(f"key {record.id} for {'every agent' if record.admin else ', '.join(record.agents)}; "
                      "store it now, it will not be shown again")


@keys.command("list")
def keys_list(ctx: typer.Context, as_json: JSON = False) -> None:
    """List the API keys (ids and agents; secrets are never shown)."""
    with _keys(ctx) as ring:
        records = ring.list()
    if as_json:
        emit_json([_public(r) for r in records])
        return
    if not records:
        note("no API keys: a hippo serve started now binds to loopback only and answers without a key; "
             "a server already running that required keys keeps requiring them until it restarts")
    for r in records:
        reach = "every agent" if r.admin else ", ".join(r.agents)
        print(f"{r.id}  {r.created_at:%Y-%m-%d}  {reach}" + (f"  ({r.label})" if r.label else ""))


@keys.command("delete")
def keys_delete(ctx: typer.Context, key_id: Annotated[str, typer.Argument(
        metavar="ID", help="The key's id (see hippo keys list).")]) -> None:
    """Delete an API key; requests that use it are refused from now on."""
    with _keys(ctx) as ring:
        ring.delete(key_id)
        last = not ring.any()
    note(f"deleted key {key_id}" + ("; that was the last key: running servers keep requiring keys, and every "
                                    "request to them is refused until you create one" if last else ""))


@contextmanager
def _keys(ctx: typer.Context, *, create: bool = False) -> Iterator["KeyRing"]:
    """The database's keys alone: key management needs no embedder (and must not trip on a model mismatch)."""
    options = ctx.find_root().obj or Options()
    db = options.path()
    if not create and not wiring.database_exists(db, options.agent):
        raise NotFound(f"no database at {db} (check --db)")
    with wiring.open_keys(db, options.agent) as ring:
        yield ring


def _public(record: object) -> dict:
    data = record.to_dict()  # type: ignore[attr-defined]
    data.pop("secret_hash")
    return data
