"""A session's history: the items an agent framework keeps between the turns of a conversation
(the OpenAI Agents SDK's session items, for one), kept in the agent's database and tapped by capture.

Each item is a JSON object, kept as its JSON text so it reads back exactly as written: the
framework owns its shape (messages, tool calls and their outputs, reasoning). The items that are
chat messages are observed too, in the same transaction (:func:`hippo.core.capture.inbox.observe`),
so what the conversation said becomes memories when capture processes it; a message capture
cannot take (a text over ``max_content_chars``, a shape it cannot read) stays in the history only.
Each observed message carries the item's id, so a memory captured from it is linked to it: when
that memory is forgotten, the item leaves the history with it (``SessionStore``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from hippo import limits
from hippo.core import validation as v
from hippo.core.capture import inbox
from hippo.core.ports import SessionItem
from hippo.errors import InvalidInput
from hippo.types import Observation

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.ports.scoped import AgentStore

__all__ = ["add_items", "clear_items", "items", "pop_item"]

_MESSAGE_ROLES = {"user", "assistant", "system", "developer"}


def _session(session_id: Any) -> str:
    session = v.check_session_id(session_id)
    if session is None:
        raise InvalidInput("a session's history needs a session_id")
    return session


def _encoded(item: Any, where: str) -> str:
    """The item as JSON text, once it is a JSON object hippo can keep whole."""
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where} must be a JSON object, got {type(item).__name__}")
    item = dict(item)
    v.check_json_value(item, where)
    try:
        text = json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where} is not JSON: {exc}") from None
    return v.check_text(text, where, max_chars=limits.JSON_BYTES)


def _is_message(item: Mapping[str, Any]) -> bool:
    """A chat message (the Responses API's ``message`` item, or a plain ``{role, content}``)."""
    role = item.get("role")
    return item.get("type", "message") == "message" and isinstance(role, str) and role in _MESSAGE_ROLES


def add_items(store: "AgentStore", session_id: Any, new: Any, settings: "Settings") -> Observation:
    """Append ``new`` to the session's history and observe its messages, in one transaction."""
    from ulid import ULID  # here: importing it loads importlib.metadata, which a recall never needs

    session = _session(session_id)
    if isinstance(new, (str, bytes, Mapping)) or not isinstance(new, Sequence):
        raise InvalidInput("items must be a list of JSON objects")
    if len(new) > limits.SESSION_ITEMS:
        raise InvalidInput(f"{len(new)} items; one call adds at most {limits.SESSION_ITEMS}")
    rows = [SessionItem(f"item-{ULID()}", _encoded(item, f"item {n}")) for n, item in enumerate(new)]
    messages = [{**item, "id": row.message_id} for item, row in zip(new, rows) if _is_message(item)]
    with store.transaction():
        store.add_session_items(session, rows)
        return _observe(store, messages, session, settings)


def _observe(store: "AgentStore", messages: list[dict[str, Any]], session: str,
             settings: "Settings") -> Observation:
    """Observe the messages; one capture refuses is left out (it stays in the history)."""
    try:
        return inbox.observe(store, messages, session, settings)
    except InvalidInput:
        taken = [_observed_alone(store, m, session, settings) for m in messages]
        seen = [o for o in taken if o is not None]
        return Observation(session, sum(o.accepted for o in seen), sum(o.duplicates for o in seen),
                           len(messages) - sum(o.accepted + o.duplicates for o in seen),
                           [i for o in seen for i in o.message_ids])


def _observed_alone(store: "AgentStore", message: dict[str, Any], session: str,
                    settings: "Settings") -> Observation | None:
    try:
        return inbox.observe(store, [message], session, settings)
    except InvalidInput:
        return None


def items(store: "AgentStore", session_id: Any, limit: Any) -> list[dict[str, Any]]:
    """The session's last ``limit`` items (all: None), oldest first."""
    session = _session(session_id)
    if limit is not None:
        limit = v.check_int(limit, "limit", 0, limits.INTEGER)
    return [json.loads(row.item) for row in store.session_items(session, limit)]


def pop_item(store: "AgentStore", session_id: Any) -> dict[str, Any] | None:
    """Remove the session's last item and return it (None: the history is empty)."""
    row = store.pop_session_item(_session(session_id))
    return None if row is None else json.loads(row.item)


def clear_items(store: "AgentStore", session_id: Any) -> int:
    """Remove the session's whole history; how many items went."""
    return store.clear_session_items(_session(session_id))
