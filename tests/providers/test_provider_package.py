"""An embedder and an LLM from another package: the example of docs/guide/providers.md
(``provider_package/``) installed with pip into a folder of this test, then named in
``hippo.open(embedder="anagrams", llm="anagrams")`` with nothing in hippo told about it.

pip builds the package offline with the build backend of the dev extra (``--no-build-isolation``)
and installs it with ``--target`` into a temporary folder, never into the test environment: each
test puts that folder on ``sys.path`` only while it runs, and forgets the package's module after,
so no other test sees the package, whatever the order."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

import hippo
from hippo.errors import ConfigError, EmbedderMismatch
from hippo.providers.base import LLM, Embedder

PACKAGE = Path(__file__).parent / "provider_package"
PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "providers.md"
MODULE = "hippo_anagrams"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder pip installed the example package into."""
    pytest.importorskip("flit_core", reason="the example package's build backend is in the dev extra")
    work = tmp_path_factory.mktemp("provider-package")
    source = shutil.copytree(PACKAGE, work / "source")  # pip builds in the source tree: a copy of it
    target = work / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps", "--no-cache-dir",
         "--disable-pip-version-check", "--quiet", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in target.glob("*.dist-info")] == ["hippo_anagrams-0.1.0.dist-info"]
    return target


def _forget_module() -> None:
    sys.modules.pop(MODULE, None)
    importlib.invalidate_caches()


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The package importable, and its entry points listed, for one test."""
    assert MODULE not in sys.modules
    monkeypatch.syspath_prepend(str(site))
    yield site
    monkeypatch.undo()
    _forget_module()


def test_without_the_package_the_name_is_unknown(tmp_path: Path) -> None:
    """The names below come from the installed package and nowhere else."""
    with pytest.raises(ConfigError, match=r"^unknown embedder 'anagrams'; known: fake, local, ollama, openai$"):
        hippo.open(tmp_path / "m.db", agent_id="a", embedder="anagrams")
    with pytest.raises(ConfigError, match=r"^unknown LLM 'anagrams'; known: anthropic, fake, openai$"):
        hippo.open(tmp_path / "m.db", agent_id="a", embedder="fake", llm="anagrams")
    assert MODULE not in sys.modules


def test_the_installed_embedder_makes_the_vectors_hippo_stores_and_recalls_by(installed: Path, tmp_path: Path) -> None:
    with hippo.open(tmp_path / "m.db", agent_id="a", embedder="anagrams") as mem:
        model = mem.embedding.embedder
        assert type(model).__module__ == MODULE and isinstance(model, Embedder)
        assert Path(sys.modules[MODULE].__file__ or "").parent == installed
        listen = mem.store_memory("Listen to the rain on the roof")
        mem.store_memory("The train leaves at nine")
        assert not listen.vector_pending
        stats = mem.stats()
        assert (stats.embedder, stats.dimension, stats.pending_vectors) == ("anagrams:256", 256, 0)
        # "silent" shares no word with either memory: only the package's vectors, which read
        # "listen" and "silent" alike, find the first.
        found = mem.recall_memories("silent")
        assert found.mode == "hybrid" and found.warning is None
        assert [hit.id for hit in found] == [listen.id]
        assert found[0].similarity == pytest.approx(float(model.embed_query("silent") @ model.embed_query(
            "Listen to the rain on the roof")), abs=1e-5)
        assert found[0].similarity > 0.25


def test_the_part_after_the_colon_reaches_the_class_and_the_database_keeps_the_model(installed: Path,
                                                                                     tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with hippo.open(path, agent_id="a", embedder="Anagrams:32") as mem:  # the name in any case
        mem.store_memory("Listen to the rain on the roof")
        assert (mem.stats().embedder, mem.stats().dimension) == ("anagrams:32", 32)
    with pytest.raises(EmbedderMismatch, match=re.escape("Open it with embedder='anagrams:32'")):
        hippo.open(path, agent_id="a", embedder="anagrams")
    with hippo.open(path, agent_id="a", embedder="anagrams:32") as mem:  # the model id is a spec
        assert mem.recall_memories("silent")[0].content == "Listen to the rain on the roof"
    with pytest.raises(ConfigError, match="anagrams:<dimension> takes a whole number"):  # the package's own check
        hippo.open(tmp_path / "other.db", agent_id="a", embedder="anagrams:many")


def test_the_installed_llm_extracts_the_facts_and_takes_its_options(installed: Path, tmp_path: Path) -> None:
    reply = '{"facts": [{"fact": "The user moved to Lyon", "intensity": 0.7}]}'
    with hippo.open(tmp_path / "m.db", agent_id="a", embedder="anagrams", llm="anagrams:canned",
                    llm_options={"replies": [reply]}) as mem:
        assert isinstance(mem.llm, LLM) and type(mem.llm).__module__ == MODULE
        result = mem.remember_facts("I moved to Lyon last spring.")
        assert result.extractor == "llm"
        assert [(call.purpose, call.model) for call in result.llm_calls] == [("extract", "anagrams:canned")]
        assert [(f.fact, f.action) for f in result.facts] == [("The user moved to Lyon", "new")]
        system, messages, json = mem.llm.asked[0]  # type: ignore[attr-defined]
        assert json is True and "I moved to Lyon last spring." in messages[-1].content
        assert [hit.content for hit in mem.recall_memories("Lyon")] == ["The user moved to Lyon"]


def test_an_unknown_name_is_still_an_error_with_the_package_installed(installed: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^unknown embedder 'anagram'; known: fake, local, ollama, openai$"):
        hippo.open(tmp_path / "m.db", agent_id="a", embedder="anagram")
    with pytest.raises(ConfigError, match=r"^unknown LLM 'anagram'; known: anthropic, fake, openai$"):
        hippo.open(tmp_path / "m.db", agent_id="a", embedder="anagrams", llm="anagram")


def test_the_guide_shows_the_package_the_test_installs() -> None:
    """The guide's example is these files, word for word."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
    assert ("toml", (PACKAGE / "pyproject.toml").read_text(encoding="utf-8")) in blocks
    assert ("python", (PACKAGE / f"{MODULE}.py").read_text(encoding="utf-8")) in blocks
