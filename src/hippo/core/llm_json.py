"""Asking an LLM for JSON and getting a validated model back, or a loud error.

Models wrap JSON in code fences, add prose after it, echo the schema instead of
filling it, or write something that is not JSON at all. What can be repaired
without guessing is repaired (fences and surrounding prose stripped, a bare
list wrapped in its expected key, label case normalised by the model). Anything
else is retried once with the validation error shown to the model; a second
failure is a :class:`ProviderError`, never an empty result.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from hippo.errors import ProviderError
from hippo.providers.base import LLM, Message
from hippo.types import LLMCall

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["MalformedAnswer", "complete_json", "parse_json_answer"]

T = TypeVar("T", bound="BaseModel")

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class MalformedAnswer(ValueError):
    """The answer cannot be turned into the expected model without guessing."""


def folded(fold: Callable[[str], str]) -> Any:
    """A pydantic ``BeforeValidator`` that strips a string and folds its case before the field's own
    check: a model may answer ``"Fact"`` or ``" duplicate"`` for a field that takes ``fact`` or
    ``DUPLICATE``. For ``Annotated[..., folded(str.lower)]`` fields of an answer's model."""
    from pydantic import BeforeValidator

    return BeforeValidator(lambda value: fold(value.strip()) if isinstance(value, str) else value)


def _first_json_value(text: str) -> Any:
    """The first JSON object or array in ``text``, ignoring prose around it."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise MalformedAnswer("the answer contains no JSON object")


def _looks_like_schema(value: Any) -> bool:
    return isinstance(value, dict) and (
        "$schema" in value or ("properties" in value and value.get("type") == "object")
    )


def parse_json_answer(text: str, model: type[T], *, list_key: str | None = None) -> T:
    """Validate ``text`` as ``model``, repairing only what is safe to repair."""
    from pydantic import ValidationError

    stripped = text.strip()
    fenced = _FENCE.search(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        value = _first_json_value(stripped)
    if _looks_like_schema(value):
        raise MalformedAnswer("the answer repeats the JSON schema instead of filling it in")
    if isinstance(value, list) and list_key is not None:
        value = {list_key: value}
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()[:5])
        raise MalformedAnswer(f"the answer does not fit the expected format ({problems})") from None


def complete_json(
    llm: LLM,
    system: str,
    prompt: str,
    model: type[T],
    *,
    purpose: str,
    calls: list[LLMCall],
    list_key: str | None = None,
    max_tokens: int = 2048,
    check: Callable[[T], None] | None = None,
) -> T:
    """One call, and one retry if the answer is malformed; every call is logged in ``calls``.

    ``check`` may raise :class:`MalformedAnswer` for answers that validate but are
    incomplete (a classification that skips a pair).
    """
    messages = [Message("user", prompt)]
    for attempt in (1, 2):
        completion = llm.complete(system, messages, max_tokens=max_tokens, json=True)
        calls.append(LLMCall(purpose, llm.model_id, completion.usage.input_tokens,  # type: ignore[arg-type]
                             completion.usage.output_tokens, attempt))
        try:
            parsed = parse_json_answer(completion.text, model, list_key=list_key)
            if check is not None:
                check(parsed)
            return parsed
        except MalformedAnswer as exc:
            problem = str(exc)
            messages = [
                *messages,
                Message("assistant", completion.text),
                Message("user", f"That answer was not usable: {problem}. Reply again with only the JSON "
                                "object in exactly the format asked for, and nothing else."),
            ]
    raise ProviderError(
        f"{llm.model_id} gave no usable answer for {purpose} after a retry: {problem}", retryable=False
    )
