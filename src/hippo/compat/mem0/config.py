"""A mem0 configuration as :func:`hippo.open`'s arguments (``Memory.from_config``).

What has a counterpart is mapped: the LLM and the embedder blocks (``{"provider", "config"}``)
become hippo's provider specs and options, a local model by its name where hippo carries it.
What is mem0's own plumbing (its vector store, its history database, its configuration
version, client settings of a provider) has no place in hippo, which keeps everything in one
database: it is left out with one warning that names it. Only what would change results without
saying so is refused: a custom extraction or update prompt or instructions, a reranker, a graph
store.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping

from hippo.errors import InvalidInput

__all__ = ["options_of"]

_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "ollama": "ollama", "huggingface": "local"}
_OPTIONS = {"api_key": "api_key", "openai_base_url": "base_url", "ollama_base_url": "base_url",
            "anthropic_base_url": "base_url", "temperature": "temperature", "embedding_dims": "dimension"}
# mem0's plumbing: where it keeps things, and how it talks to its providers. Left out with a warning.
_PLUMBING = {"vector_store", "history_db_path", "version"}
_CLIENT = {"model_kwargs", "http_client_proxies", "huggingface_base_url", "max_tokens", "top_p", "top_k",
           "enable_vision", "vision_details", "azure_kwargs", "default_headers", "memory_add_embedding_type",
           "memory_update_embedding_type", "memory_search_embedding_type", "output_dimensionality"}
# What mem0 would do that hippo cannot: leaving it out would change results silently.
_REFUSED = {"custom_fact_extraction_prompt": "a custom extraction prompt",
            "custom_update_memory_prompt": "a custom update prompt",
            "custom_instructions": "custom extraction instructions",
            "custom_prompt": "a custom extraction prompt",
            "reranker": "a reranker (hippo ranks with its own fusion)",
            "graph_store": "a graph store (mem0's relations)"}
# hippo's local models by the names mem0's huggingface embedder knows them (any spelling of the name).
_LOCAL = {"all-minilm-l6-v2": "local", "paraphrase-minilm-l3-v2": "local:paraphrase-MiniLM-L3-v2",
          "multilingual-e5-small": "local:multilingual-e5-small"}


def options_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """hippo.open's arguments from a configuration: hippo's own (``db``, ``embedder``, settings)
    as they are, mem0's provider blocks read for ``llm`` and ``embedder``, mem0's plumbing left
    out with one warning; InvalidInput for what hippo cannot do."""
    if not isinstance(config, Mapping):
        raise InvalidInput(f"the configuration must be a mapping, got {type(config).__name__}")
    refused = sorted(set(config) & set(_REFUSED))
    if refused:
        raise InvalidInput("hippo has no " + "; no ".join(_REFUSED[k] for k in refused)
                           + f" ({', '.join(refused)}): leave it out of the configuration")
    options = {k: x for k, x in config.items() if k not in _PLUMBING}
    ignored = [k for k in config if k in _PLUMBING]
    for key in ("llm", "embedder"):
        if isinstance(options.get(key), Mapping):
            options[key], options[f"{key}_options"], left = _provider(key, options[key])
            ignored += [f"{key}.config.{k}" for k in left]
    if ignored:
        warnings.warn(f"hippo.compat.mem0: left out of the configuration, mem0's own plumbing with no place in "
                      f"hippo (one database keeps everything): {', '.join(ignored)}", UserWarning, stacklevel=3)
    return options


def _provider(key: str, block: Mapping[str, Any]) -> tuple[str, dict[str, Any], list[str]]:
    """A mem0 provider block as a hippo spec, its options and the settings left out."""
    provider, config = block.get("provider"), dict(block.get("config") or {})
    if provider not in _PROVIDERS:
        raise InvalidInput(f"{key} provider {provider!r}: hippo has {', '.join(sorted(_PROVIDERS))}")
    left = sorted(k for k in config if k not in _OPTIONS and k != "model")
    model = config.pop("model", None)
    if provider == "huggingface":
        return _local(model), {}, sorted(set(config) - {"embedding_dims"} | set(left))
    spec = _PROVIDERS[str(provider)] + (f":{model}" if model else "")
    return spec, {_OPTIONS[k]: value for k, value in config.items() if k in _OPTIONS}, left


def _local(model: Any) -> str:
    """hippo's local model for a huggingface model name or path; InvalidInput when hippo carries none
    (another model would rank differently and say nothing)."""
    if model is None:
        raise InvalidInput("embedder huggingface: name the model (mem0's default, multi-qa-MiniLM-L6-cos-v1, is "
                           f"not one hippo carries); hippo runs {', '.join(sorted(_LOCAL))} locally")
    name = str(model).replace("\\", "/").rstrip("/").lower().replace("_", "-")
    for known, spec in _LOCAL.items():
        if known in name:
            return spec
    raise InvalidInput(f"embedder huggingface model {model!r}: hippo runs {', '.join(sorted(_LOCAL))} locally "
                       "(give one of them, or hippo's own embedder=...)")
