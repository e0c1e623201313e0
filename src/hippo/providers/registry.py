"""One registry from provider names to lazily imported classes.

A spec is ``"<provider>"`` or ``"<provider>:<model>"`` (``local``,
``ollama:nomic-embed-text``, ``openai:text-embedding-3-small``, ``fake``).
Third parties add providers through the ``hippo.embedders`` entry point group,
whose entries point at a class taking ``(model: str | None, **options)``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from hippo.errors import ConfigError
from hippo.providers.base import Embedder

__all__ = ["EMBEDDERS", "create_embedder", "parse_spec"]

# name -> "module:Class"; imported only when asked for.
EMBEDDERS: dict[str, str] = {
    "local": "hippo.providers.local:LocalEmbedder",
    "ollama": "hippo.providers.ollama:OllamaEmbedder",
    "openai": "hippo.providers.openai:OpenAIEmbedder",
    "fake": "hippo.providers.fake:FakeEmbedder",
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


def create_embedder(spec: str | Embedder, **options: Any) -> Embedder:
    """Build the embedder a spec names, or return an embedder instance unchanged."""
    if not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return spec
        raise ConfigError(f"not an embedder spec or Embedder: {spec!r}")
    provider, model = parse_spec(spec)
    if provider in EMBEDDERS:
        cls = _load(EMBEDDERS[provider])
    else:
        found = [ep for ep in entry_points(group="hippo.embedders") if ep.name == provider]
        if not found:
            known = ", ".join(sorted(EMBEDDERS))
            raise ConfigError(f"unknown embedder {provider!r}; known: {known}")
        cls = found[0].load()
    return cls(model, **options)
