"""hippo as an MCP server (official ``mcp`` SDK 2.x, low-level ``Server``).

Exposes exactly the agent tools of :mod:`hippo.core.tools.toolset` (same names,
descriptions, schemas and results), then the capture tools of
:mod:`hippo.core.tools.capture` (for the client that drives a session, not for
the agent), and the agent's memory blocks as resources
``hippo://blocks/{key}``. Two transports: stdio (``hippo mcp``, for Claude
Desktop, Claude Code and IDEs) and streamable HTTP (``hippo mcp --http``).

Tool calls run in a worker thread: the core is synchronous, and the SQLite
store serialises access to its connection.
"""

from __future__ import annotations

import io
import json
import sys
from typing import TYPE_CHECKING, Any

from hippo.core.ports.audit import acting_as
from hippo.errors import ConfigError, HippoError, InvalidInput, MissingDependency

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["BLOCK_URI", "LOOPBACK", "build_server", "check_bind", "http_app", "run_http", "run_stdio"]


BLOCK_URI = "hippo://blocks/{key}"
_RESOURCE_NOT_FOUND = -32002  # MCP's code for an unknown resource


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingDependency("mcp", "mcp") from None


def build_server(mem: "Memory", *, recall_max_tokens: int = 1500) -> Any:
    """An ``mcp.server.lowlevel.Server`` over ``mem``'s tools and blocks."""
    _require_mcp()
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from hippo.core.tools.capture import capture_tools
    from hippo.core.tools.toolset import Toolset
    from hippo.wiring import __version__

    captures = {t.name: t for t in capture_tools(mem)}

    def toolset() -> Any:
        return Toolset(mem, recall_max_tokens=recall_max_tokens)  # re-read: a messages table may appear later

    def call(name: Any, arguments: Any) -> dict[str, Any]:
        tool = captures.get(name) if isinstance(name, str) else None
        with acting_as("local", "mcp"):  # the audit trail's actor of what the call changes
            return tool.call(arguments) if tool is not None else toolset().call(name, arguments)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = [*await anyio.to_thread.run_sync(toolset), *captures.values()]
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.parameters) for t in tools
        ])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await anyio.to_thread.run_sync(lambda: call(params.name, params.arguments))
        text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=result, is_error=not result["ok"])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        blocks = await anyio.to_thread.run_sync(mem.memory_blocks)
        return types.ListResourcesResult(resources=[
            types.Resource(name=b.key, uri=BLOCK_URI.format(key=b.key), mime_type="text/plain",
                           description=f"memory block '{b.key}' of agent {mem.agent_id}", size=len(b.value.encode()))
            for b in blocks
        ])

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(name="memory block", uri_template=BLOCK_URI, mime_type="text/plain",
                                   description="a named memory block such as persona or human"),
        ])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        value = await anyio.to_thread.run_sync(_block_text, mem, uri)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/plain",
                                                                             text=value)])

    return Server(
        "hippo", version=__version__,
        instructions=(
            "Long-term memory. Call recall_memories before answering questions that may depend on earlier "
            "conversations; remember_facts when the user tells you something durable about themselves."
        ),
        on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
        on_list_resource_templates=list_templates, on_read_resource=read_resource,
    )


def _block_text(mem: "Memory", uri: str) -> str:
    """The block a ``hippo://blocks/{key}`` URI names; MCP errors for a bad or unknown one."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    prefix = BLOCK_URI.split("{")[0]
    key = uri[len(prefix):] if uri.startswith(prefix) else ""
    try:
        value = mem.recall_memory_block(key) if key else None
    except HippoError as exc:  # an invalid key ("../human", a query string): the client's mistake
        code = types.INVALID_PARAMS if isinstance(exc, InvalidInput) else types.INTERNAL_ERROR
        raise MCPError(code, exc.message, {"uri": uri[:200]}) from None
    if value is None:
        raise MCPError(_RESOURCE_NOT_FOUND, f"no memory block at {uri[:200]}", {"uri": uri[:200]})
    return value


def run_stdio(mem: "Memory") -> None:
    """Serve over stdin/stdout until the client closes the pipe."""
    _require_mcp()
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(mem)
    lines = _Lines(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")))

    async def main() -> None:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.replies = write_stream
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


class _Lines:
    """Standard input, line by line, for the SDK's stdio transport.

    The SDK parses each line with pydantic, which refuses JSON that Python reads (a lone
    surrogate such as "\\ud800" in a string) and then drops the request unanswered: the
    client would wait until its own timeout. Such a request is answered here with an error.
    """

    def __init__(self, source: Any) -> None:
        self.source = source
        self.replies: Any = None  # the transport's write stream, once it exists

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        async for line in self.source:
            refusal = _refusal(line)
            if refusal is None or self.replies is None:
                yield line
            else:
                from mcp.shared.message import SessionMessage

                await self.replies.send(SessionMessage(refusal))


def _refusal(line: str) -> Any:
    """The error that answers a request the SDK cannot parse, or None for a line it can."""
    import mcp_types as types

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValueError:
        pass
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return None  # not JSON at all: the SDK's own handling
    request_id = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool) or "method" not in request:
        return None  # a notification or a malformed message: there is no one to answer
    try:
        json.dumps(request, ensure_ascii=False).encode("utf-8")
        reason = "the request is not valid JSON-RPC for this server"
    except (UnicodeEncodeError, ValueError, RecursionError):
        reason = "the request holds text that is not valid Unicode (a lone surrogate such as \\ud800)"
    return types.JSONRPCError(jsonrpc="2.0", id=request_id,
                              error=types.ErrorData(code=types.INVALID_PARAMS, message=reason))


def http_app(mem: "Memory", *, host: str = "127.0.0.1", path: str = "/mcp") -> Any:
    """A Starlette app serving MCP over streamable HTTP at ``path``."""
    return build_server(mem).streamable_http_app(streamable_http_path=path, host=host)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_bind(host: str, allow_remote: bool) -> None:
    """The MCP endpoint has no authentication: refuse anything but loopback unless asked to."""
    if host not in LOOPBACK and not allow_remote:
        raise ConfigError(
            f"refusing to serve MCP on {host}: the MCP endpoint has no authentication. Bind to 127.0.0.1, or pass "
            "--allow-remote behind a proxy that authenticates"
        )


def run_http(mem: "Memory", *, host: str = "127.0.0.1", port: int = 8765, path: str = "/mcp",
             allow_remote: bool = False) -> None:
    """Serve MCP over streamable HTTP with uvicorn until interrupted (a port in use is a
    :class:`ConfigError`, said before anything else, as for ``hippo serve``)."""
    check_bind(host, allow_remote)
    _require_mcp()
    import uvicorn

    from hippo.interfaces.http.server import bind

    sockets = bind(host, port)
    app = http_app(mem, host=host, path=path)
    shown = f"[{host}]" if ":" in host else host
    print(f"hippo MCP server on http://{shown}:{sockets[0].getsockname()[1]}{path} (agent {mem.agent_id})",
          file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=sockets)
