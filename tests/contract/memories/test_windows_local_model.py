"""Long memories read whole with the real all-MiniLM-L6-v2, which reads 256 word pieces: a diary entry
whose second half (past what the model reads) is about a job interview is found by a question about
the interview, by meaning alone, above memories that are closer to the question than the entry's start."""

from __future__ import annotations

import pytest

from hippo.core.ports import ChunkFilter, SearchQuery

pytestmark = pytest.mark.embedded_only("reads the store's vector search window by window")

TRIP = ("We spent the first week of the holiday in Lisbon. The weather was warm, we walked along the river every "
        "morning, ate grilled sardines near the castle, and took the old yellow tram up the hill. ") * 5
WORK = ("On Monday I had the final interview for the data engineering job at the logistics company. They asked me "
        "to design a pipeline for delivery tracking, and the hiring manager said I would hear back about the offer "
        "by Friday. The salary they mentioned was higher than at my current employer. ") * 2
ENTRY = TRIP + WORK  # 330 word pieces: the interview starts past the 220th
OTHERS = ["I updated my CV and wrote a cover letter last month.", "I asked my friend how her exam went.",
          "My manager asked me to mentor the new intern.", "I am thinking about changing careers next year.",
          "The job fair at the university is in October.", "My cousin got a job at a bank in Porto.",
          "We booked the flight to Lisbon in March."]
QUESTION = "How did my job interview go?"


@pytest.fixture
def embedder(local_embedder):
    return local_embedder


def test_a_question_about_the_end_of_a_long_memory_finds_it_by_meaning(make_mem, local_embedder):
    from hippo.providers.local import count_tokens

    assert count_tokens([TRIP])[0] > 200 and count_tokens([ENTRY])[0] > 256  # the premise
    mem = make_mem()
    mem.store_memories(OTHERS)
    entry = mem.store_memory(ENTRY).id
    query = local_embedder.embed_query(QUESTION)
    own = float(local_embedder.embed_documents([ENTRY])[0] @ query)  # what the model reads of the start
    closer = [t for t in OTHERS if float(local_embedder.embed_documents([t])[0] @ query) > own]
    assert closer  # without its windows the entry would rank below these

    found = mem.store.search("alice", SearchQuery(query, (), ChunkFilter(), 3, score_all=False))
    ranked = sorted(found.similarity, key=lambda i: -found.similarity[i])
    assert ranked[0] == entry
    assert found.similarity[entry] > own + 0.05
    hits = mem.recall_memories(QUESTION, limit=3, touch=False)
    assert hits[0].id == entry


def test_a_long_query_is_read_whole(make_mem, local_embedder):
    """A query longer than the model reads (a long message to recall or surface for) whose second half
    is about the interview finds the interview's memory by meaning: its vector is the mean of its
    windows', where the model's own read would see the trip only."""
    mem = make_mem()
    interview = mem.store_memory("The hiring manager promised an answer about the data engineering offer by Friday.").id
    mem.store_memories([*OTHERS, "Lisbon's yellow trams climb the hills near the castle."])
    question = TRIP + WORK * 2  # 550 word pieces: the trip first, then the interview at length

    def best(vector) -> list[str]:
        found = mem.store.search("alice", SearchQuery(vector, (), ChunkFilter(), 2, score_all=False))
        return sorted(found.similarity, key=lambda i: -found.similarity[i])

    assert interview not in best(local_embedder.embed_query(question))  # the model's own read: the trip only
    assert interview in best(mem.embedding.query(question))
