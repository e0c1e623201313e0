"""The provider ports: what the core needs from an embedding model."""

from __future__ import annotations

import functools
import importlib
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, TypeVar, runtime_checkable

from hippo.errors import EXTRAS, ConfigError, InvalidInput, MissingDependency

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ChatTurn", "Completion", "Embedder", "check_batch_size", "check_texts", "load_once", "require", "LLM",
    "Message", "Thresholds", "ToolCall", "ToolCallingLLM", "ToolSpec", "Usage", "WindowingEmbedder",
    "embed_windows", "normalize_rows", "window_starts",
]


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Cosine-similarity bands that depend on the embedding model.

    ``duplicate`` and ``ambiguous`` are recognition's bands (0.93 and
    0.78 for OpenAI's text-embedding-3-small): above ``duplicate`` a fact is the
    same fact, between the two an LLM decides, below ``ambiguous`` it is new.
    ``forget`` is the least similarity at which ``forget_memory`` deletes a chunk.
    ``latin_only``: the model reads Latin script only (all-MiniLM-L6-v2 reads most Thai and
    Chinese characters as unknown), so its cosine of two texts in another script means
    nothing and never merges them on its own. ``unrelated`` is the cosine unrelated texts
    typically get; recall's fusion reads the cosine above it. ``meaning``: the vectors read
    meaning (a sentence model), so in a small store recall may trust them over shared words
    (``keyword_trust``); the fake embedder's hash features only count shared words and trigrams.
    """

    duplicate: float = 0.93
    ambiguous: float = 0.78
    forget: float = 0.6
    latin_only: bool = False
    unrelated: float = 0.0
    meaning: bool = True


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    ``model_id`` names the model as recorded in the database (``local:all-MiniLM-L6-v2``);
    ``dimension`` is ``None`` until the provider has told it (remote models).
    Implementations raise :class:`hippo.errors.ProviderError` when they fail.
    """

    model_id: str
    dimension: int | None
    thresholds: Thresholds

    def embed_documents(self, texts: Sequence[str]) -> "np.ndarray":
        """Vectors for texts to be stored, shape ``(len(texts), dimension)``."""
        ...

    def embed_query(self, text: str) -> "np.ndarray":
        """The vector of one search query, shape ``(dimension,)``."""
        ...


@runtime_checkable
class WindowingEmbedder(Embedder, Protocol):
    """An embedder that reads a long text whole: in overlapping windows of its own tokens.

    ``embed_windows`` gives each text its vectors, shape ``(windows, dimension)``: one row for a text
    that fits the model's window, whose row is exactly ``embed_documents``' vector (``embed_query``'s
    with ``query=True``: the text is a search query); for a longer text the first row is still that
    vector (the model's truncated read), the others the windows after it (:func:`window_starts`)."""

    def embed_windows(self, texts: Sequence[str], *, query: bool = False) -> "list[np.ndarray]": ...


def embed_windows(embedder: Embedder, texts: Sequence[str], *, query: bool = False) -> "list[np.ndarray]":
    """Each text's window vectors (see :class:`WindowingEmbedder`); an embedder that cannot window
    (hosted APIs read long inputs themselves) gives one row per text."""
    own = getattr(embedder, "embed_windows", None)
    if own is not None:
        found: list[np.ndarray] = own(texts, query=query)
        return found
    if query:
        return [normalize_rows(embedder.embed_query(text)) for text in texts]
    return [row[None, :] for row in normalize_rows(embedder.embed_documents(texts))]


def window_starts(length: int, width: int, stride: int, most: int) -> list[int]:
    """Where the windows of ``width`` tokens start over a text of ``length`` tokens: every ``stride``
    from 0, the last ending at the text's end; at most ``most`` windows, spread evenly over the text
    past that (a text of some 12,000 word pieces with the default model), so that no part of it goes
    unread for want of windows, only less overlapped."""
    if length <= width:
        return [0]
    count = min(most, -(-(length - width) // stride) + 1)
    if count <= 1:
        return [0]
    return sorted({round(i * (length - width) / (count - 1)) for i in range(count)})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run a tool. ``arguments`` is the decoded JSON object,
    or the raw text when the model wrote invalid JSON (the tool then says so)."""

    id: str
    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True, slots=True)
class Message:
    """One chat turn: ``role`` is ``user``, ``assistant`` or ``tool``.

    An assistant turn may carry ``tool_calls``; a ``tool`` turn answers the call
    ``tool_call_id`` with ``content`` (the tool's JSON result).
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


class ToolSpec(Protocol):
    """What a provider needs to offer a tool to its model (``hippo.core.tools.toolset.Tool`` is one)."""

    name: str
    description: str

    @property
    def parameters(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    """An LLM's answer: its text and the tokens it cost."""

    text: str
    usage: Usage
    model: str


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """A model's turn in a tool-calling chat: its text, the tools it wants run, and the cost."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    model: str

    def as_message(self) -> Message:
        """This turn as history, to send back with the tool results."""
        return Message("assistant", self.text, self.tool_calls)


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``model_id`` is ``provider:model``.

    ``json=True`` asks the provider for a JSON answer where it has such a mode;
    the caller still validates what comes back. Implementations raise
    :class:`hippo.errors.ProviderError` when the call fails.
    """

    model_id: str

    def complete(
        self, system: str, messages: Sequence[Message], *, max_tokens: int = 1024, json: bool = False
    ) -> Completion: ...


@runtime_checkable
class ToolCallingLLM(LLM, Protocol):
    """An LLM that can also run a tool-calling chat (agent loops; hippo's own pipeline needs only ``complete``)."""

    def chat(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *, max_tokens: int = 1024
    ) -> ChatTurn: ...


def normalize_rows(matrix: "np.ndarray") -> "np.ndarray":
    """Scale each row to unit length (zero rows stay zero), as float32."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, refusing a bare string or non-string items."""
    if isinstance(texts, str):
        raise InvalidInput("embed_documents takes a sequence of strings, not one string")
    texts = list(texts)
    for text in texts:
        if not isinstance(text, str):
            raise InvalidInput(f"can only embed strings, got {type(text).__name__}")
    return texts


def check_batch_size(batch_size: int) -> int:
    """``batch_size``, how many texts a local model reads at once: a positive integer."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
    return batch_size


def require(module: str, package: str | None = None) -> ModuleType:
    """Import an optional module, or raise :class:`MissingDependency` naming the PyPI package and
    the extra that installs it (``hippo.errors.EXTRAS``)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise MissingDependency(package or top, EXTRAS.get(top, "local")) from exc


_T = TypeVar("_T")


def load_once(load: Callable[[], _T]) -> Callable[[], _T]:
    """``load`` run once per process, behind a lock (a model is loaded once, however many threads
    ask first); every later call returns what it returned. A load that raises is tried again."""
    lock, loaded = threading.Lock(), list[_T]()

    @functools.wraps(load)
    def get() -> _T:
        with lock:
            if not loaded:
                loaded.append(load())
            return loaded[0]

    return get
