"""Ollama and OpenAI-compatible embedders against a real local HTTP server."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hippo.errors import ConfigError, InvalidInput, ProviderError
from hippo.providers.base import Embedder
from hippo.providers.ollama import OllamaEmbedder
from hippo.providers.openai import OpenAIEmbedder
from hippo.providers.registry import create_embedder

# The ``wire`` fixture (tests/providers/conftest.py) is a WireServer: a real
# HTTP server on 127.0.0.1 whose ``mode`` picks its answer and whose
# ``received`` list holds each request it got. Not imported, so Any here.
WireServer = Any


def ollama(wire: WireServer, model: str = "all-minilm", **options: object) -> OllamaEmbedder:
    return OllamaEmbedder(model, base_url=wire.url, **options)  # type: ignore[arg-type]


def openai(
    wire: WireServer, model: str = "text-embedding-3-small", **options: object
) -> OpenAIEmbedder:
    options.setdefault("api_key", "sk-test")
    return OpenAIEmbedder(model, base_url=f"{wire.url}/v1", **options)  # type: ignore[arg-type]


# --- Ollama ---------------------------------------------------------------


def test_ollama_vectors_are_normalised_and_in_order(wire: WireServer) -> None:
    texts = ["alpha", "beta", "gamma"]
    emb = ollama(wire)
    got = emb.embed_documents(texts)
    assert got.dtype == np.float32 and got.shape == (3, 8)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(got, wire.expected(texts), atol=1e-6)
    assert emb.dimension == 8 and emb.model_id == "ollama:all-minilm"
    assert wire.received[0].path == "/api/embed"
    assert wire.received[0].body == {"model": "all-minilm", "input": texts}


def test_ollama_nomic_gets_task_prefixes(wire: WireServer) -> None:
    emb = ollama(wire, "nomic-embed-text:v1.5")
    docs = emb.embed_documents(["the cat sat"])
    query = emb.embed_query("where is the cat")
    assert wire.inputs() == [["search_document: the cat sat"], ["search_query: where is the cat"]]
    stored = wire.expected(["search_document: the cat sat"])[0]
    np.testing.assert_allclose(docs[0], stored, atol=1e-6)
    assert query.shape == (8,)


def test_ollama_other_models_get_no_prefix(wire: WireServer) -> None:
    emb = ollama(wire, "mxbai-embed-large")
    emb.embed_documents(["the cat sat"])
    emb.embed_query("where is the cat")
    assert wire.inputs() == [["the cat sat"], ["where is the cat"]]


def test_ollama_batches_at_most_64(wire: WireServer) -> None:
    texts = [f"text {i}" for i in range(150)]
    got = ollama(wire).embed_documents(texts)
    assert [len(batch) for batch in wire.inputs()] == [64, 64, 22]
    assert [text for batch in wire.inputs() for text in batch] == texts
    np.testing.assert_allclose(got, wire.expected(texts), atol=1e-6)


def test_empty_input_sends_nothing(wire: WireServer) -> None:
    assert ollama(wire, dimension=8).embed_documents([]).shape == (0, 8)
    assert openai(wire).embed_documents([]).shape == (0, 1536)
    assert wire.received == []


@pytest.mark.parametrize(
    ("mode", "retryable"), [("500", True), ("429", True), ("close", True), ("400", False)]
)
def test_ollama_failures_map_to_provider_error(
    wire: WireServer, mode: str, retryable: bool
) -> None:
    wire.mode = mode
    with pytest.raises(ProviderError) as info:
        ollama(wire).embed_documents(["x"])
    assert info.value.retryable is retryable
    if mode == "400":
        assert 'model "nope" not found' in str(info.value)


def test_timeout_is_retryable(wire: WireServer) -> None:
    wire.mode = "slow"
    with pytest.raises(ProviderError) as info:
        ollama(wire, timeout=0.2).embed_documents(["x"])
    assert info.value.retryable is True


def test_non_json_answer_is_not_retryable(wire: WireServer) -> None:
    wire.mode = "garbage"
    with pytest.raises(ProviderError) as info:
        ollama(wire).embed_documents(["x"])
    assert info.value.retryable is False


def test_refused_connection_is_retryable(closed_port_url: str) -> None:
    for emb in (
        OllamaEmbedder("nomic-embed-text", base_url=closed_port_url),
        OpenAIEmbedder("text-embedding-3-small", base_url=closed_port_url, api_key="k"),
    ):
        with pytest.raises(ProviderError) as info:
            emb.embed_query("hello")
        assert info.value.retryable is True


def test_ollama_dimension_change_between_calls_is_an_error(wire: WireServer) -> None:
    emb = ollama(wire)
    emb.embed_documents(["a"])
    assert emb.dimension == 8
    wire.dimension = 16
    with pytest.raises(ProviderError, match="expected 8-dimensional"):
        emb.embed_documents(["b"])


def test_ollama_given_dimension_is_checked(wire: WireServer) -> None:
    with pytest.raises(ProviderError):
        ollama(wire, dimension=768).embed_documents(["a"])


def test_ollama_needs_a_model() -> None:
    with pytest.raises(ConfigError):
        OllamaEmbedder(None)


def test_ollama_host_without_scheme(monkeypatch: pytest.MonkeyPatch, wire: WireServer) -> None:
    monkeypatch.setenv("OLLAMA_HOST", wire.url.removeprefix("http://"))
    emb = OllamaEmbedder("all-minilm")
    assert emb.base_url == wire.url
    assert emb.embed_query("hi").shape == (8,)
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0")
    assert OllamaEmbedder("m").base_url == "http://0.0.0.0:11434"


def test_a_bare_string_is_refused(wire: WireServer) -> None:
    with pytest.raises(InvalidInput):
        ollama(wire).embed_documents("not a list")  # type: ignore[arg-type]
    assert wire.received == []


# --- OpenAI-compatible ----------------------------------------------------


def test_openai_vectors_in_order_with_auth(wire: WireServer) -> None:
    wire.shuffle = True  # the client must put items back by their index
    texts = ["one", "two", "three"]
    emb = openai(wire, dimension=8)
    got = emb.embed_documents(texts)
    np.testing.assert_allclose(got, wire.expected(texts), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    sent = wire.received[0]
    assert sent.path == "/v1/embeddings"
    assert sent.headers["Authorization"] == "Bearer sk-test"
    assert sent.body == {"model": "text-embedding-3-small", "input": texts, "dimensions": 8}
    assert emb.model_id == "openai:text-embedding-3-small"


def test_openai_known_dimension_and_no_dimensions_field(wire: WireServer) -> None:
    wire.dimension = 1536
    emb = openai(wire)
    assert emb.dimension == 1536
    assert emb.embed_query("hello").shape == (1536,)
    assert "dimensions" not in wire.received[0].body
    assert emb.thresholds.duplicate == 0.93 and emb.thresholds.ambiguous == 0.78


def test_openai_known_dimension_mismatch_is_an_error(wire: WireServer) -> None:
    wire.dimension = 8  # a server that does not really serve text-embedding-3-large
    with pytest.raises(ProviderError):
        openai(wire, "text-embedding-3-large").embed_documents(["a"])


def test_openai_batches_at_most_256(wire: WireServer) -> None:
    texts = [f"t{i}" for i in range(600)]
    got = openai(wire, "local-model").embed_documents(texts)
    assert [len(batch) for batch in wire.inputs()] == [256, 256, 88]
    np.testing.assert_allclose(got, wire.expected(texts), atol=1e-6)


@pytest.mark.parametrize(
    ("mode", "retryable"), [("500", True), ("429", True), ("close", True), ("400", False)]
)
def test_openai_failures_map_to_provider_error(
    wire: WireServer, mode: str, retryable: bool
) -> None:
    wire.mode = mode
    with pytest.raises(ProviderError) as info:
        openai(wire, "local-model").embed_documents(["x"])
    assert info.value.retryable is retryable


def test_openai_learned_dimension_change_is_an_error(wire: WireServer) -> None:
    emb = openai(wire, "local-model")
    emb.embed_documents(["a"])
    assert emb.dimension == 8
    wire.dimension = 4
    with pytest.raises(ProviderError):
        emb.embed_documents(["b"])


def test_openai_key_rules(monkeypatch: pytest.MonkeyPatch, wire: WireServer) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIEmbedder("text-embedding-3-small")
    # A local server needs no key, and then no Authorization header is sent.
    emb = OpenAIEmbedder("local-model", base_url=f"{wire.url}/v1")
    emb.embed_query("x")
    assert "Authorization" not in wire.received[0].headers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{wire.url}/v1/")
    OpenAIEmbedder("local-model").embed_query("x")
    assert wire.received[1].headers["Authorization"] == "Bearer sk-env"


# --- registry -------------------------------------------------------------


def test_registry_builds_working_http_embedders(wire: WireServer) -> None:
    ollama_emb = create_embedder("ollama:nomic-embed-text", base_url=wire.url)
    openai_emb = create_embedder(
        "openai:text-embedding-3-small", base_url=f"{wire.url}/v1", api_key="k", dimension=8
    )
    assert isinstance(ollama_emb, Embedder) and isinstance(openai_emb, Embedder)
    assert ollama_emb.model_id == "ollama:nomic-embed-text"
    assert ollama_emb.embed_documents(["a", "b"]).shape == (2, 8)
    assert openai_emb.embed_query("q").shape == (8,)
    assert wire.inputs() == [["search_document: a", "search_document: b"], ["q"]]
