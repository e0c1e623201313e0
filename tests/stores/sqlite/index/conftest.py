"""Fixtures for the ANN tests: one database of realistic sentences embedded with the real local
model (built once per session, copied per test) with an ``ann_threshold`` low enough that the
HNSW index serves it."""

from __future__ import annotations

import itertools
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import hippo

NAMES = ["Alice", "Bob", "Priya", "Tomasz", "Keiko", "Omar", "Lucia", "Daniel", "Amara", "Sven",
         "Mei", "Jonas", "Fatima", "Rafael", "Ingrid", "Kwame", "Sofia", "Hiro", "Nadia", "Pablo"]
DEEDS = [
    "adopted a rescue dog from the shelter", "started learning to play the cello",
    "moved into a small apartment near the river", "ran a half marathon in the rain",
    "fixed the leaking kitchen sink", "booked a train trip through the Alps",
    "planted tomatoes and basil on the balcony", "switched the team's CI pipeline to GitHub Actions",
    "finished reading a long novel about the sea", "baked sourdough bread for the neighbours",
    "signed up for an evening pottery class", "lost their wallet at the airport",
    "painted a portrait of their grandmother", "debugged a memory leak in the payment service",
    "organised a charity bake sale at school", "went camping by a mountain lake",
    "got promoted to engineering manager", "built a treehouse with their kids",
    "started volunteering at the food bank", "learned to make fresh pasta from scratch",
    "bought a second-hand electric bicycle", "wrote a short story about a lighthouse keeper",
    "visited the modern art museum downtown", "repaired an old vinyl record player",
    "joined a choir that sings on Sundays", "fell off a ladder while cleaning the gutters",
    "taught their parents how to use video calls", "cooked a spicy curry for a dinner party",
    "applied for a master's degree in counselling", "watched the meteor shower from the roof",
]
WHEN = ["last week", "yesterday", "over the weekend", "this morning", "in March", "a few days ago",
        "last summer", "on their birthday"]
QUESTIONS = [
    "Who has a new pet?", "Which musical instrument is someone learning?", "Who moved house?",
    "Did anyone run a race?", "Plumbing repairs at home", "Travel plans in the mountains",
    "Growing vegetables", "Continuous integration changes", "Books people read", "Home baking",
    "Art classes", "Something lost while travelling", "A painting of a relative", "Fixing a software bug",
    "Raising money for charity", "Outdoor camping trip", "Career promotion", "Building things with children",
    "Helping people in need", "Italian cooking", "Cycling to work", "Creative writing",
    "Going to a museum", "Old music equipment", "Singing in a group", "An accident at home",
    "Helping older relatives with technology", "Hosting friends for dinner", "Going back to university",
    "Watching the night sky",
]


def sentences(n: int, seed: int = 3) -> list[str]:
    """``n`` distinct sentences (n <= 4,800), in a fixed random order."""
    combos = [f"{who} {deed} {when}." for who, deed, when in itertools.product(NAMES, DEEDS, WHEN)]
    random.Random(seed).shuffle(combos)
    return combos[:n]


ANN_THRESHOLD = 500
AGENT = "alice"


@dataclass
class Corpus:
    path: Path  # a closed database with the corpus stored for AGENT
    ids: list[str]
    texts: list[str]
    matrix: np.ndarray  # the stored vectors, row i for ids[i]
    queries: np.ndarray  # QUESTIONS embedded as queries

    def tagged(self, tag: str) -> list[int]:
        return [i for i in range(len(self.ids)) if tag in tags_of(i)]


def tags_of(i: int) -> list[str]:
    """Three chunks in four are "common" (a filter wide enough for hnswlib's own filter);
    one in 40 is "rare" (narrow: answered exactly)."""
    return (["common"] if i % 4 else []) + (["rare"] if i % 40 == 0 else [])


@pytest.fixture(scope="session")
def ann_corpus(tmp_path_factory: pytest.TempPathFactory, local_embedder) -> Corpus:
    pytest.importorskip("hnswlib")
    path = tmp_path_factory.mktemp("ann") / "corpus.db"
    texts = sentences(2000)
    with hippo.open(path, agent_id=AGENT, embedder=local_embedder, ann_threshold=ANN_THRESHOLD) as mem:
        results = mem.store_memories(hippo.MemoryInput(t, {"tags": tags_of(i)}) for i, t in enumerate(texts))
        ids = [r.id for r in results]
        stored = mem.store.get_vectors(AGENT, ids)
    shutil.rmtree(Path(str(path) + ".hnsw"), ignore_errors=True)  # each test starts from the file alone
    queries = np.stack([local_embedder.embed_query(q) for q in QUESTIONS])
    return Corpus(path, ids, texts, np.stack([stored[i] for i in ids]), queries)


@pytest.fixture
def corpus_db(ann_corpus: Corpus, tmp_path: Path) -> Path:
    """A private copy of the corpus database."""
    target = tmp_path / "hippo.db"
    shutil.copy(ann_corpus.path, target)
    return target
