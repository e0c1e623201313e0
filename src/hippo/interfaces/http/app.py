"""The HTTP API: FastAPI routes under ``/v1/agents/{agent_id}/``, each a few lines over the core.

One process serves every agent of one database. Agents share the store (one
SQLite connection, writes serialised in-process, so ``database is locked``
never reaches a client), the embedder and the LLM. Requests need a bearer key
scoped to the agent once any key exists; with none the server must stay on
loopback (``hippo serve`` enforces it).
"""

from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any, AsyncIterator, Literal

from fastapi import APIRouter, Body, FastAPI, Path, Query, Request, Response
from fastapi.middleware.cors import CORSMiddleware

from hippo import limits
from hippo.core.memory import Memory
from hippo.core.tools.toolset import Toolset
from hippo.core.validation import BLOCK_KEY, ULID, parse_json
from hippo.errors import InvalidInput
from hippo.interfaces.dashboard import install_dashboard
from hippo.interfaces.http.access import Access, check_log_format
from hippo.interfaces.http.capture import router as capture
from hippo.interfaces.http.docs import install_docs
from hippo.interfaces.http.errors import ApiError, Envelope, install
from hippo.interfaces.http.experiences import router as experiences
from hippo.interfaces.http.faults import Contained
from hippo.interfaces.http.guards import BodyLimit, HostCheck
from hippo.interfaces.http.metrics import Metrics
from hippo.interfaces.http.metrics import router as metrics
from hippo.interfaces.http.models import (
    AppendBody,
    ArchiveHits,
    BlockContext,
    BlockList,
    ErrorBody,
    ForgetBody,
    Health,
    MemoryPage,
    PatchMemoryBody,
    Readiness,
    RecallBody,
    ReceiptBody,
    RelatedList,
    RememberBody,
    ReplaceBody,
    SetBlockBody,
    SplitFactBody,
    StoreBody,
    ToolDefinition,
    ToolList,
)
from hippo.interfaces.http.operations import router as operations
from hippo.interfaces.http.service import MEMORY_ID, Mem, Service, base_path, shown_stats
from hippo.types import (
    UNCHANGED,
    Block,
    BlockResult,
    Chunk,
    ConversationHit,
    Erased,
    FactHistory,
    ForgetResult,
    Forgotten,
    Recall,
    ReceiptCheck,
    RememberResult,
    Stats,
    StoreResult,
)
from hippo.wiring import __version__

__all__ = ["create_app", "router"]

router = APIRouter()


@router.get("/healthz", response_model=Health, tags=["service"])
def healthz(request: Request) -> Health:
    """The server is alive (it may not be ready: `GET /readyz`)."""
    return Health(status="ok", version=__version__, auth=request.app.state.service.auth_required())


@router.get("/readyz", response_model=Readiness, tags=["service"],
            responses={503: {"model": ErrorBody, "description": "Not ready: the message names the failed checks"}})
def readyz(request: Request) -> Any:
    """Ready to answer: the database answers with the schema this version knows, and the embedding
    model is loaded (or none is configured). 503 with the failed checks otherwise; never loads
    the model itself."""
    checks = request.app.state.service.readiness()
    failed = [c for c in checks if not c.ok]
    if failed:
        return Envelope(503, "not_ready", "not ready: " + "; ".join(f"{c.name}: {c.detail}" for c in failed),
                        extra={"checks": {c.name: c.ok for c in checks}})
    return Readiness(status="ready", checks={c.name: True for c in checks})


# -- memories ---------------------------------------------------------------------------


@router.get(f"{base_path}/memories", response_model=Recall | MemoryPage, tags=["memories"])
def search_or_list(
    mem: Mem,
    q: Annotated[str | None, Query(min_length=1, max_length=4_000, description="Search text; omit to list")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    kind: Literal["fact", "memory"] | None = None,
    tag: Annotated[list[str] | None, Query(description="Only memories with all these tags")] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    source: Annotated[list[str] | None, Query(description="With `q`: only memories from any of these sources")] = None,
    session_id: Annotated[str | None, Query(description="With `q`: only memories from this session")] = None,
    include_archived: Annotated[bool, Query(description="With `q`: archived memories compete too, marked")] = False,
    expand: Annotated[bool, Query(description="With `q`: memories often recalled with the best hits follow them")]
    = False,
    cursor: Annotated[str | None, Query(pattern=ULID.pattern, description="next_cursor of the previous page")] = None,
    metadata: Annotated[str | None, Query(max_length=16_000, description=(
        'With `q`: a JSON object of metadata conditions, e.g. {"status": {"$in": ["open", "blocked"]}, '
        '"priority": {"$gte": 2}} ($eq $ne $in $gt $gte $lt $lte $exists; a plain value means $eq)'))] = None,
    as_of: Annotated[datetime | None, Query(description=(
        "With `q`: what was current at this time (ISO 8601): nothing stored later, a fact's version of then, "
        "strength and recency as they stood"))] = None,
) -> Any:
    """Search by meaning and keywords when `q` is given; otherwise list, newest first, a page at a time.

    A look that changes nothing: no hit counts as retrieved. `POST memories/recall` is the recall
    that counts (access count, strength, co-recall links), as an agent's."""
    if q is not None:
        conditions = parse_json(metadata, "metadata") if metadata is not None else None
        return mem.recall_memories(q, limit, kind=kind, tags=tag, since=since, until=until, metadata=conditions,
                                   source=source, session_id=session_id, include_archived=include_archived,
                                   expand=expand, touch=False, as_of=as_of)
    if metadata is not None or source or session_id is not None or include_archived or expand or as_of is not None:
        raise InvalidInput("metadata, source, session_id and as_of apply to a search: give q too")
    page = mem.list_memories(limit=limit, cursor=cursor, kind=kind)
    return MemoryPage(items=page.items, next_cursor=page.next_cursor)


@router.post(f"{base_path}/memories/recall", response_model=Recall, tags=["memories"])
def recall(mem: Mem, body: RecallBody) -> Recall:
    """Recall as an agent does: ranked by meaning, keywords, strength and recency, and the hits
    count as retrieved (access count, last access, +0.02 strength, co-recall links among them), unless
    `as_of` looks into the past. `GET memories?q=` is the same search without counting."""
    return mem.recall_memories(body.query, body.limit, kind=body.kind, tags=body.tags, since=body.since,
                               until=body.until, metadata=body.metadata, source=body.source,
                               session_id=body.session_id, include_archived=body.include_archived, expand=body.expand,
                               as_of=body.as_of)


@router.post(f"{base_path}/memories", response_model=StoreResult, status_code=201, tags=["memories"],
             responses={200: {"model": StoreResult, "description": "The same text was there: strengthened"}})
def store(mem: Mem, body: StoreBody, response: Response) -> StoreResult:
    """Store raw content; the same text again strengthens the existing memory (200)."""
    result = mem.store_memory(body.content, body.metadata, body.intensity, observed_at=body.observed_at,
                              source=body.source, session_id=body.session_id)
    if result.action == "strengthened":
        response.status_code = 200
    return result


@router.get(f"{base_path}/memories/{{memory_id}}", response_model=Chunk, tags=["memories"])
def get_memory(mem: Mem, memory_id: Annotated[str, MEMORY_ID]) -> Chunk:
    return mem.get_memory(memory_id)


@router.patch(f"{base_path}/memories/{{memory_id}}", response_model=Chunk, tags=["memories"])
def patch_memory(mem: Mem, memory_id: Annotated[str, MEMORY_ID], body: PatchMemoryBody) -> Chunk:
    """Change a memory's text and/or replace its metadata, in place: same id and strength."""
    return mem.update_memory(memory_id, content=body.content, metadata=body.metadata)


@router.post(f"{base_path}/memories/{{memory_id}}/reinforce", response_model=Chunk, tags=["memories"])
def reinforce_memory(mem: Mem, memory_id: Annotated[str, MEMORY_ID]) -> Chunk:
    """The memory helped: its feedback rises and its recency clock restarts."""
    return mem.reinforce_memory(memory_id)


@router.post(f"{base_path}/memories/{{memory_id}}/demote", response_model=Chunk, tags=["memories"])
def demote_memory(mem: Mem, memory_id: Annotated[str, MEMORY_ID]) -> Chunk:
    """The memory is stale, wrong or irrelevant: its feedback falls; nothing is deleted."""
    return mem.demote_memory(memory_id)


@router.get(f"{base_path}/memories/{{memory_id}}/related", response_model=RelatedList, tags=["memories"])
def related(mem: Mem, memory_id: Annotated[str, MEMORY_ID]) -> RelatedList:
    """A memory's links: memories recalled with it (strongest first) and its supersession history."""
    return RelatedList(links=mem.related(memory_id))


@router.get(f"{base_path}/archive", response_model=ArchiveHits, tags=["archive"])
def search_archive(mem: Mem, q: Annotated[str, Query(min_length=1, max_length=4_000)],
                   limit: Annotated[int, Query(ge=1, le=100)] = 20) -> ArchiveHits:
    """Archived memories (moved out of recall when the database outgrew its cap) that match the words."""
    return ArchiveHits(hits=mem.search_archive(q, limit))


@router.post(f"{base_path}/archive/{{memory_id}}/restore", response_model=Chunk, tags=["archive"])
def restore_memory(mem: Mem, memory_id: Annotated[str, MEMORY_ID]) -> Chunk:
    """Bring an archived memory back into recall: same id, embedded again."""
    return mem.restore_memory(memory_id)


RECEIPT = Annotated[bool, Query(description=(
    "true: the answer holds the signed receipt of the delete (`receipt`), which `POST receipts/verify` checks "
    "again later."))]


@router.delete(f"{base_path}/memories", response_model=Erased, tags=["memories"])
def delete_all(mem: Mem, confirm: Annotated[str, Query(
        description="The agent's id again, so that no stray request erases a memory.")],
               receipt: RECEIPT = False) -> Erased:
    """Delete every memory, fact and block of this agent for good (other agents are untouched)."""
    if confirm != mem.agent_id:
        raise InvalidInput(f"confirm must repeat the agent id {mem.agent_id!r} to delete all of its memory")
    return mem.delete_all(receipt=receipt)


@router.delete(f"{base_path}/memories/{{memory_id}}", response_model=Forgotten, tags=["memories"])
def delete_memory(mem: Mem, memory_id: Annotated[str, MEMORY_ID], receipt: RECEIPT = False) -> Forgotten:
    """Delete one memory for good, leaving no trace of its text."""
    return mem.delete_memory(memory_id, receipt=receipt)


@router.post(f"{base_path}/facts", response_model=RememberResult, tags=["memories"])
def remember(mem: Mem, body: RememberBody) -> RememberResult:
    """Extract facts from what the user said and reconcile them with what is known."""
    said = body.text if body.text is not None else body.messages
    if said is None:  # the body model requires one of the two; kept explicit for readers and type checkers
        raise InvalidInput("give text or messages")
    return mem.remember_facts(said, observed_at=body.observed_at, metadata=body.metadata)


@router.get(f"{base_path}/facts/{{memory_id}}/history", response_model=FactHistory, tags=["memories"])
def fact_history(mem: Mem, memory_id: Annotated[str, MEMORY_ID]) -> FactHistory:
    """A fact's versions, oldest first, and the wordings merged into them as duplicates."""
    return mem.fact_history(memory_id)


@router.post(f"{base_path}/facts/{{memory_id}}/split", response_model=Chunk, status_code=201, tags=["memories"])
def split_fact(mem: Mem, memory_id: Annotated[str, MEMORY_ID], body: SplitFactBody) -> Chunk:
    """Undo a wrong merge: a wording merged into the fact becomes a fact of its own again (returned)."""
    return mem.split_fact(memory_id, body.wording)


@router.post(f"{base_path}/forget", response_model=ForgetResult, tags=["memories"])
def forget(mem: Mem, body: ForgetBody) -> ForgetResult:
    """Delete every memory matching a description (`preview` deletes nothing)."""
    return mem.forget_memory(body.description, preview=body.preview, limit=body.limit, receipt=body.receipt)


@router.post(f"{base_path}/receipts/verify", response_model=ReceiptCheck, tags=["audit"])
def verify_receipt(mem: Mem, body: ReceiptBody) -> ReceiptCheck:
    """Check a forget's receipt again (as a forget answered it with `receipt: true`): its signature,
    its audit record, and that no place of the database holds anything of what it removed.
    `verified` is true when every check holds; `failed` names the places that do not, and `checks`
    says what each found. The receipt must be this agent's (400 otherwise)."""
    return mem.verify_receipt(body.model_dump())


# -- blocks -----------------------------------------------------------------------------


@router.get(f"{base_path}/blocks", response_model=BlockList, tags=["blocks"])
def list_blocks(mem: Mem) -> BlockList:
    return BlockList(items=mem.memory_blocks())


@router.get(f"{base_path}/context", response_model=BlockContext, tags=["blocks"])
def blocks_context(mem: Mem, max_tokens: Annotated[int, Query(ge=limits.CONTEXT_TOKENS[0],
                                                               le=limits.CONTEXT_TOKENS[1])] = 2000) -> BlockContext:
    """Every block as one system-prompt section, in a stable order, within a token budget (estimated)."""
    return BlockContext(context=mem.context(max_tokens))


KEY = Path(pattern=BLOCK_KEY.pattern, description="A block's name, such as persona or human.")


@router.get(f"{base_path}/blocks/{{key}}", response_model=Block, tags=["blocks"])
def get_block(mem: Mem, key: Annotated[str, KEY]) -> Block:
    block = mem.memory_block(key)
    if block is None:
        raise ApiError(404, "block_not_found", f"there is no memory block '{key}'")
    return block


@router.put(f"{base_path}/blocks/{{key}}", response_model=Block, tags=["blocks"])
def set_block(mem: Mem, key: Annotated[str, KEY], body: SetBlockBody) -> Block:
    limit = body.char_limit if "char_limit" in body.model_fields_set else UNCHANGED
    return written(mem, mem.set_memory_block(key, body.value, char_limit=limit))


@router.post(f"{base_path}/blocks/{{key}}", response_model=Block, tags=["blocks"])
def append_block(mem: Mem, key: Annotated[str, KEY], body: AppendBody) -> Block:
    """Append a line, creating the block when missing."""
    return written(mem, mem.append_memory_block(key, body.text))


@router.patch(f"{base_path}/blocks/{{key}}", response_model=Block, tags=["blocks"])
def replace_block(mem: Mem, key: Annotated[str, KEY], body: ReplaceBody) -> Block:
    """Replace every occurrence of `old` with `new`."""
    return written(mem, mem.replace_memory_block(key, body.old, body.new))


def written(mem: Memory, result: BlockResult) -> Block:
    block = mem.memory_block(result.key)
    assert block is not None
    return block


# -- conversation, tools, stats ---------------------------------------------------------


@router.get(f"{base_path}/conversation", response_model=list[ConversationHit], tags=["conversation"])
def conversation(
    mem: Mem,
    q: Annotated[str, Query(min_length=1, max_length=4_000)],
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> list[ConversationHit]:
    """Full-text search over the application's messages table."""
    return mem.recall_conversation(q, limit)


@router.get(f"{base_path}/tools", response_model=ToolList, tags=["tools"])
def list_tools(mem: Mem) -> ToolList:
    """The agent tools this agent's memory offers: each one's name, description and JSON-Schema
    parameters, as `mem.tools()` gives them in Python (a client builds its tool definitions from them)."""
    return ToolList(items=[ToolDefinition(name=t.name, description=t.description, parameters=t.parameters)
                           for t in Toolset(mem)])


@router.post(f"{base_path}/tools/{{name}}", tags=["tools"])
def call_tool(
    mem: Mem, name: Annotated[str, Path(max_length=64)],
    arguments: Annotated[dict[str, Any], Body(description="The tool's arguments")],
) -> dict[str, Any]:
    """Run one agent tool; problems the model can act on come back as `ok: false` with status 200."""
    tools = Toolset(mem)
    if name not in tools:
        raise ApiError(404, "unknown_tool", f"no tool {name!r}; tools: {', '.join(tools.names)}")
    return tools.call(name, arguments)


@router.get(f"{base_path}/stats", response_model=Stats, tags=["service"])
def stats(mem: Mem, request: Request) -> Stats:
    """Counts of facts, memories, blocks and pending vectors for this agent.

    `database_bytes` (the whole file, every agent's writes) only for an admin key, or on a
    server that needs no key (whoever can reach it can read the file); `database` (the path) is always null."""
    return shown_stats(mem.stats(), request.state.key)


TAGS = ("service", "memories", "archive", "blocks", "conversation", "tools", "experiences", "capture", "audit",
        "operations")


def create_app(base: Memory, *, max_body_bytes: int = 1_000_000, cors_origins: tuple[str, ...] = (),
               require_keys: bool = False, allowed_hosts: frozenset[str] | None = None,
               log_format: str | None = None) -> FastAPI:
    """The API over ``base``'s database. The app owns ``base`` and closes it on shutdown.

    ``require_keys``: refuse requests without a key from the start, whatever the key table says.
    ``allowed_hosts``: the Host header names answered (others get 421); None answers any.
    ``log_format``: the access lines' form, ``text`` or ``json`` (None: the ``log_format`` setting)."""
    log_format = check_log_format(log_format or base.settings.log_format)
    service = Service(base, require_keys=require_keys)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        service.close()

    app = FastAPI(
        lifespan=lifespan,
        title="hippo", version=__version__,
        description="Long-term memory for LLM agents: facts, memories, blocks, experiences and conversation search.",
        responses={code: {"model": ErrorBody} for code in (400, 401, 403, 404, 409, 413, 421, 422, 503)},
        docs_url=None, redoc_url=None,  # served offline by install_docs
        openapi_tags=[{"name": tag} for tag in TAGS],  # the API reference's order (routes are matched in another)
    )
    app.router.redirect_slashes = False  # /memories/ is a 404 in the error envelope, not an empty 307
    app.state.service = service
    app.state.metrics = found = Metrics(service)
    install(app)
    app.add_middleware(Contained)  # first, so innermost: just outside the routes
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, limit=max_body_bytes)
    if allowed_hosts is not None:
        app.add_middleware(HostCheck, allowed=allowed_hosts)
    app.add_middleware(Access, metrics=found, log_format=log_format)  # last, so outermost: every answer counted

    # First: FastAPI builds a router's routes on the first request that walks past them, so a
    # client's first call on a new server took 150-250 ms behind every other route, 5-10 ms first.
    app.include_router(operations)
    app.include_router(router)
    app.include_router(experiences)
    app.include_router(capture)
    app.include_router(metrics)
    install_docs(app)
    install_dashboard(app)
    return app
