"""A model file's SHA-256 is remembered across processes in hippo's cache folder (issue 36): a new
process trusts the memo only for the very version of the file it was made from."""

from __future__ import annotations

import hashlib
import json
import os
import time

import pytest

from hippo.providers import pins


@pytest.fixture
def weights(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(pins, "_DIGESTS", {})  # a new process
    path = tmp_path / "model.onnx"
    path.write_bytes(b"weights " * 1000)
    return path


def test_the_digest_is_remembered_for_the_next_process(weights, monkeypatch):
    real = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert pins.sha256_of(weights) == real
    memo = json.loads((pins.default_cache_dir() / pins.MEMO).read_text())
    assert memo[str(weights)][-1] == real
    # The next process reads the memo instead of the file: a memo that says otherwise is believed ...
    memo[str(weights)][-1] = "0" * 64
    (pins.default_cache_dir() / pins.MEMO).write_text(json.dumps(memo))
    monkeypatch.setattr(pins, "_DIGESTS", {})
    assert pins.sha256_of(weights) == "0" * 64
    # ... but only for that version of the file: written again, even with its times put back, it is hashed
    stat = weights.stat()
    while time.time_ns() < stat.st_ctime_ns + 50_000_000:  # past the file system's clock tick
        time.sleep(0.01)
    weights.write_bytes(b"WEIGHTS " * 1000)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    monkeypatch.setattr(pins, "_DIGESTS", {})
    assert pins.sha256_of(weights) == hashlib.sha256(b"WEIGHTS " * 1000).hexdigest()


@pytest.mark.parametrize("memo", ["{not json", "[1, 2]", '{"%s": [1, 2, 3]}'])
def test_a_memo_that_cannot_be_read_is_passed_over(weights, monkeypatch, memo):
    folder = pins.default_cache_dir()
    folder.mkdir(parents=True)
    (folder / pins.MEMO).write_text(memo.replace("%s", str(weights)))
    assert pins.sha256_of(weights) == hashlib.sha256(weights.read_bytes()).hexdigest()


def test_a_cache_folder_that_cannot_be_written_is_no_error(weights, monkeypatch, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(blocked / "cache"))  # under a file: never a folder
    assert pins.sha256_of(weights) == hashlib.sha256(weights.read_bytes()).hexdigest()
