"""One registry from provider names to lazily imported classes.

A spec is ``"<provider>"`` or ``"<provider>:<model>"`` (``local``,
``ollama:nomic-embed-text``, ``openai:text-embedding-3-small``, ``fake``).
Third parties add providers through the ``hippo.embedders`` and ``hippo.llms`` entry point groups,
whose entries point at a class taking ``(model: str | None, **options)``.
"""

from __future__ import annotations

import importlib
from typing import Any

from hippo.errors import ConfigError
from hippo.providers.base import LLM, Embedder

__all__ = ["EMBEDDERS", "LLMS", "LOCAL_MODELS", "create_embedder", "create_llm", "parse_spec"]

# name -> "module:Class"; imported only when asked for.
EMBEDDERS: dict[str, str] = {
    "local": "hippo.providers.local:LocalEmbedder",
    "ollama": "hippo.providers.ollama:OllamaEmbedder",
    "openai": "hippo.providers.openai:OpenAIEmbedder",
    "fake": "hippo.providers.fake:FakeEmbedder",
}

# ``local:<name>``: every model that runs on this machine from a PyPI package, by name (lower
# case); ``local`` alone is the default, all-MiniLM-L6-v2 (chosen in BENCHMARKS.md, "Local models").
LOCAL_MODELS: dict[str, str] = {
    "all-minilm-l6-v2": "hippo.providers.local:LocalEmbedder",
    "all-minilm-l6-v2-int8": "hippo.providers.local:LocalEmbedder",
    "sentence-transformers/all-minilm-l6-v2": "hippo.providers.local:LocalEmbedder",
    "paraphrase-minilm-l3-v2": "hippo.providers.local:LocalEmbedder",
    "paraphrase-minilm-l3-v2-int8": "hippo.providers.local:LocalEmbedder",
    "multilingual-e5-small": "hippo.providers.e5:E5Embedder",
    "intfloat/multilingual-e5-small": "hippo.providers.e5:E5Embedder",
    "universal-sentence-encoder-multilingual": "hippo.providers.use:USEEmbedder",
}

LLMS: dict[str, str] = {
    "openai": "hippo.providers.openai:OpenAILLM",
    "anthropic": "hippo.providers.anthropic:AnthropicLLM",
    "fake": "hippo.providers.fake:FakeLLM",
}


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"provider:model"`` into its parts; the model may be absent."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"an embedder spec must be a non-empty string, got {spec!r}")
    provider, _, model = spec.strip().partition(":")
    return provider.lower(), (model or None)


def _load(target: str) -> type:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _create(kind: str, port: type, table: dict[str, str], group: str, spec: Any, options: dict[str, Any]) -> Any:
    """Build what ``spec`` names from ``table`` or the entry point ``group``; an instance of ``port``
    comes back unchanged."""
    if not isinstance(spec, str):
        if isinstance(spec, port):
            return spec
        raise ConfigError(f"not an {kind} spec or {port.__name__}: {spec!r}")
    provider, model = parse_spec(spec)
    if table is EMBEDDERS and provider == "local" and model is not None:
        if model.lower() not in LOCAL_MODELS:
            names = sorted(n for n in LOCAL_MODELS if "/" not in n)
            raise ConfigError(f"unknown local model {model!r}; known: {', '.join(names)}")
        cls = _load(LOCAL_MODELS[model.lower()])
    elif provider in table:
        cls = _load(table[provider])
    else:
        from importlib.metadata import entry_points  # here: the built-in providers need not load it, 20 ms

        found = [ep for ep in entry_points(group=group) if ep.name == provider]
        if not found:
            raise ConfigError(f"unknown {kind} {provider!r}; known: {', '.join(sorted(table))}")
        cls = found[0].load()
    return cls(model, **options)


def create_embedder(spec: str | Embedder, **options: Any) -> Embedder:
    """Build the embedder a spec names, or return an embedder instance unchanged."""
    return _create("embedder", Embedder, EMBEDDERS, "hippo.embedders", spec, options)


def create_llm(spec: str | LLM, **options: Any) -> LLM:
    """Build the LLM a spec names (``openai:gpt-4o-mini``, ``anthropic:claude-haiku-4-5``, ``fake``),
    or return an LLM instance unchanged."""
    return _create("LLM", LLM, LLMS, "hippo.llms", spec, options)
