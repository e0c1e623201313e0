"""``GET /v1/agents/{agent_id}/audit``: the agent's audit trail (``Memory.audit``). And
``POST /v1/agents/{agent_id}/operations/{name}``: any of ``Memory``'s public operations by name,
with its keyword arguments, for :func:`hippo.connect` and the other clients. The REST routes stay
for what they name; this one reaches every operation, the ones without a route of their own too.

The route is a few lines over :mod:`hippo.client.wire`, the codec the client reverses: the
arguments are bound to the operation's own signature (a wrong or missing name is a 422, and the
core validates each value as it does in process: a 400, nothing written), and the result goes
back as JSON. The same key check and agent scope as every route; what is database-wide, and
what would name a file on the server, is not offered (``wire.NOT_REMOTE`` says why).
"""

from __future__ import annotations

from typing import Annotated, Any, Callable

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from hippo.client import wire
from hippo.core.memory import Memory
from hippo.interfaces.http.errors import ApiError
from hippo.interfaces.http.models import ErrorBody, OperationBody, OperationResult
from hippo.interfaces.http.service import Mem, Service, base_path, shown_stats
from hippo.types import ApiKey, AuditPage

__all__ = ["router"]

router = APIRouter(tags=["operations"])


@router.get(f"{base_path}/audit", response_model=AuditPage, tags=["audit"])
def audit(mem: Mem, since: Annotated[str | None, Query(max_length=64)] = None,
          until: Annotated[str | None, Query(max_length=64)] = None,
          operation: Annotated[str | None, Query(max_length=100)] = None,
          id: Annotated[str | None, Query(max_length=64)] = None,
          limit: Annotated[int, Query(ge=1, le=1000)] = 100,
          cursor: Annotated[str | None, Query(max_length=32)] = None) -> AuditPage:
    """The agent's audit trail, newest first: every change to its memory, when, by whom (the API
    key's id, and the way in), the operation, the ids it touched with digests of their content
    (never the text), counts; `since` and `until` (ISO 8601) bound the time, `operation` names one,
    `id` keeps the records that touched one memory. Pass `next_cursor` back as `cursor` for more."""
    return mem.audit(since=since, until=until, operation=operation, chunk_id=id, limit=limit, cursor=cursor)

NAME = Path(max_length=64, json_schema_extra={"enum": list(wire.REMOTE)}, description=(
    "One of Memory's operations, named as in Python (`store_memory`, `recall_memories`, `fact_history`, ...). "
    "Not offered: " + "; ".join(f"`{name}` ({why})" for name, why in wire.NOT_REMOTE.items()) + "."))


@router.post(f"{base_path}/operations/{{name}}", response_model=OperationResult,
             responses={404: {"model": ErrorBody, "description": "No such operation (or no such memory)"}})
async def call_operation(mem: Mem, name: Annotated[str, NAME], body: OperationBody, request: Request) -> JSONResponse:
    """Run one of Memory's operations on this agent with its keyword arguments, named as in Python,
    and answer `{"result": ...}`: the operation's result as JSON, as `hippo.connect` rebuilds it
    (result objects as their fields, datetimes in ISO 8601). The Python API reference lists each
    operation's arguments. Errors come in the usual envelope: 422 `invalid_request` for an
    argument the operation does not take (or a required one missing), 400 `invalid_input` for a
    value it refuses, 404 for a memory that is not there, 409 for a write a rule forbids."""
    work = prepared(mem, name, body.arguments, request.state.key)
    if name in wire.HEAVY:
        service: Service = request.app.state.service
        return JSONResponse({"result": await service.heavy(work)})
    return JSONResponse({"result": await run_in_threadpool(work)})


def prepared(mem: Memory, name: str, arguments: dict[str, Any], key: ApiKey | None) -> Callable[[], Any]:
    """The call, its arguments checked against the operation's signature and decoded; it returns
    the result encoded (an export's records are read in the worker thread, not on the event loop)."""
    if name not in wire.REMOTE:
        raise ApiError(404, "not_found", f"no operation {name!r}; the operations: {', '.join(wire.REMOTE)}")
    local = sorted(wire.LOCAL_ARGUMENTS & set(arguments))
    if local:
        raise ApiError(422, "invalid_request", f"{', '.join(local)}: a callback of the caller's process cannot be sent")
    try:
        wire.signature(name).bind(**arguments)
    except TypeError as exc:
        raise ApiError(422, "invalid_request", f"{name}: {exc}") from None
    types = wire.parameter_types(name)
    kwargs = {arg: wire.decode(types.get(arg, Any), value, strict=True) for arg, value in arguments.items()}
    method = getattr(mem, name)

    def work() -> Any:
        result = method(**kwargs)
        if name == "stats":
            result = shown_stats(result, key)
        return wire.encode(result)

    return work
