"""A later word on the same subject: the latest version of a changing fact, the decision after the
discussion.

Memories are not rewritten when things change: "User's mobile number is 07700 900123" stays when
"User's new mobile number is 07700 900456" is stored, and "Team debated SQLite versus Postgres"
stays beside "Team chose Postgres". Asked "what's my current phone number?" or "are we using SQLite
or Postgres?", the model finds the first at least as close as the second: it repeats the question's
words, while the answer says what changed. Recall therefore reads the best candidates together:
a memory observed later than one ranked above it, on the same subject (their cosine, above the
model's unrelated level, at least :data:`SAME_SUBJECT`), matching the query itself at least
:data:`AS_RELEVANT` as well, that says it changes or settles something
("new", "now", "switched", "chose", "agreed", "confirmed") or follows one that left it open
("debated", "compared", "choosing between"), takes that memory's place, just above it. The earlier
memory stays in the results, below. What the later one needed to rank there is reported as its
``context`` (what reorders a memory beyond its own match), so a hit's parts still add up to its score.
Within one conversation (both memories of the same session) only a decision follows ("decided",
"agreed", "Decision:"): a chat's turns say "new" and "considering" all along.

Only statements are read so: a memory longer than :data:`STATEMENT` characters (a whole session, a
document) holds "now" or "new" somewhere whatever it says, and is left where it ranks.

A memory capture recorded as the answer to, or the decision on, another message of its conversation
(its ``_answers`` metadata names one of the other memory's ``_source_ids``) follows that memory
whatever its words say.

A query about the past ("used to", "originally", "previous") or about a named period (the date
preference decides there) keeps the order as it is, and so does a memory the query all but repeats
(own relevance :data:`REPEATED` or more): a search for a sentence finds that sentence first. A
memory with no change in it never moves. Measured on the small stores, LoCoMo and LongMemEval in
BENCHMARKS.md ("Relevance where users start: the second pass").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hippo.core.fusion import Fusion
from hippo.core.memories.writer import ANSWERS, SOURCE_IDS
from hippo.core.strength import ScoreWeights

if TYPE_CHECKING:
    from hippo.core.ports import Standing
    from hippo.core.ports.scoped import AgentStore
    from hippo.types import Chunk

__all__ = ["AS_RELEVANT", "LOOK", "REPEATED", "SAME_SUBJECT", "STATEMENT", "Ranked", "asks_about_the_past", "changes",
           "leaves_open", "later_first", "settles"]


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate with the parts of its score, before its text is read: ``parts`` are the
    fields of :class:`Hit` after ``chunk``, in its order (score, relevance, similarity,
    keyword, effective_strength, recency, context, feedback)."""

    standing: Standing
    parts: tuple[float, float, float | None, float | None, float, float, float, float]
    # The memory this one was put above as the later word on its subject (:func:`later_first`).
    follows: str | None = None
    # The whole chunk, when a step before ``as_hits`` has read it already.
    chunk: Chunk | None = None

    @property
    def score(self) -> float:
        return self.parts[0]


LOOK = 8  # the best candidates read together
SAME_SUBJECT = 0.45  # two memories' cosine, rescaled above the model's unrelated level
AS_RELEVANT = 0.4  # the later memory's own match to the query, at least this share of the earlier one's
REPEATED = 0.9  # a memory the query all but repeats (its own relevance) is what was asked for: it keeps its place
STATEMENT = 400  # characters: a longer memory is a document, not one statement
STEP = 1e-6  # how far above the memory it follows a later word is put

_CHANGES = re.compile(
    r"\b(?:now|new|newly|no longer|any more|anymore|instead|switched|switching|changed|moved|raised|lowered|"
    r"increased|reduced|dropped|replaced|took over|taken over|pushed back|postponed|rescheduled|brought forward|"
    r"updated|upgraded|renamed|chose|chosen|decided|decision|agreed|settled on|went with|going with|picked|selected|"
    r"accepted|confirmed|booked|signed|finali[sz]ed|approved|policy)\b", re.IGNORECASE)
_SETTLES = re.compile(r"\b(?:decided|decision|agreed|chose|chosen|settled on|going with|went with|policy)\b",
                      re.IGNORECASE)
_OPEN = re.compile(
    r"\b(?:debated?|debating|discuss(?:ed|ing)?|compar(?:ed|ing)|choosing between|deciding between|deciding whether|"
    r"consider(?:ed|ing)?|polling|weighing|whether|versus|vs)\b", re.IGNORECASE)
_PAST = re.compile(
    r"\b(?:used to|use to|originally|at first|initially|previous(?:ly)?|former(?:ly)?|(?<!how )old|earlier|"
    r"before that|in the past|at the start|first)\b", re.IGNORECASE)


def changes(text: str) -> bool:
    """Whether a memory says that something changed or was settled."""
    return _CHANGES.search(text) is not None


def settles(text: str) -> bool:
    """Whether a memory says a choice was made ("decided", "agreed", "chose", "Decision:")."""
    return _SETTLES.search(text) is not None


def leaves_open(text: str) -> bool:
    """Whether a memory tells of a choice still being weighed. A question alone does not: in a
    conversation every later turn on its subject would pass it (LongMemEval's turn R@5 fell from
    0.812 to 0.782 when it did)."""
    return _OPEN.search(text) is not None


def asks_about_the_past(query: str) -> bool:
    """Whether a query asks how things were before ("what was my old number?")."""
    return _PAST.search(query) is not None


def later_first(store: "AgentStore", ranked: list["Ranked"], fusion: Fusion, weights: ScoreWeights) -> list["Ranked"]:
    """``ranked`` (best first) with each later word on the same subject put above the memory it
    follows, among the best :data:`LOOK`; the rest keep their order."""
    top = ranked[:LOOK]
    if len(top) < 2:
        return ranked
    chunks = {c.id: c for c in store.get_chunks([r.standing.id for r in top])}
    read = [replace(r, chunk=chunks.get(r.standing.id)) for r in top]  # as_hits need not read them again
    cues = {i: _Cues.of(c) for i, c in chunks.items() if len(c.content) <= STATEMENT}
    if not any(c.changes or c.open or c.answers for c in cues.values()):  # what settles also changes
        return read + ranked[LOOK:]  # nothing here says it changed, settled or left open: no vector read
    vectors = store.get_vectors(list(cues))
    lifted = _lifted(read, {i: c for i, c in cues.items() if i in vectors}, vectors, fusion)
    moved = [_scored(r, *lifted[r.standing.id], weights) if r.standing.id in lifted else r for r in read]
    return sorted(moved, key=lambda r: (-r.score, r.standing.id)) + ranked[LOOK:]


@dataclass(frozen=True, slots=True)
class _Cues:
    """What the later-word rule reads of one memory, read once per recall."""

    when: tuple[datetime, str]  # when it was said, then its id: the order of a conversation's turns
    session: str | None
    changes: bool
    settles: bool
    open: bool
    # What capture recorded: the messages it came from, and the one it answered or decided.
    sources: frozenset[str] = frozenset()
    answers: str | None = None

    @classmethod
    def of(cls, chunk: "Chunk") -> "_Cues":
        # observed if known, else stored (memories stored at one time, as capture writes a
        # conversation's, are in the order of their ids)
        meta = chunk.metadata or {}
        sources = meta.get(SOURCE_IDS)
        answers = meta.get(ANSWERS)
        return cls((chunk.observed_at or chunk.created_at, chunk.id), chunk.session_id, changes(chunk.content),
                   settles(chunk.content), leaves_open(chunk.content),
                   frozenset(i for i in sources if isinstance(i, str)) if isinstance(sources, list) else frozenset(),
                   answers if isinstance(answers, str) else None)

    def answered(self, earlier: "_Cues") -> bool:
        """Whether capture recorded this memory as the answer to (or the decision on) ``earlier``."""
        return self.answers is not None and self.answers in earlier.sources

    def follows(self, earlier: "_Cues") -> bool:
        """Whether this memory is the later word on what ``earlier`` said. Within one conversation
        (the same session) only a decision counts: its turns keep saying "new", "now" and
        "considering" about one subject (LongMemEval's turn R@5 lost 0.008 with any change word,
        nothing with this)."""
        if earlier.session is not None and earlier.session == self.session:
            return self.settles
        return self.changes or earlier.open


def _lifted(top: Sequence["Ranked"], cues: dict[str, _Cues], vectors: dict[str, np.ndarray],
            fusion: Fusion) -> dict[str, tuple[float, str]]:
    """The new score of each memory that follows one ranked above it, and the id of the one it now
    ranks above; oldest first, so that a chain of changes ends with the latest on top."""
    score = {r.standing.id: r.score for r in top}
    own = dict(score)
    relevance = {r.standing.id: r.parts[1] for r in top}
    lifted: dict[str, tuple[float, str]] = {}
    for later in sorted(cues, key=lambda i: cues[i].when):
        best, follows = score[later], ""
        for earlier in cues:
            if cues[earlier].when >= cues[later].when or score[earlier] < best \
                    or relevance[earlier] >= REPEATED or relevance[later] < AS_RELEVANT * relevance[earlier]:
                continue
            if cues[later].answered(cues[earlier]) or cues[later].follows(cues[earlier]) \
                    and fusion.rescaled(float(np.dot(vectors[earlier], vectors[later]))) >= SAME_SUBJECT:
                best = score[earlier] + STEP * (1.0 + own[later])  # two put above one keep their order
                follows = earlier
        if follows:
            score[later] = best
            lifted[later] = (best, follows)
    return lifted


def _scored(ranked: "Ranked", score: float, follows: str, weights: ScoreWeights) -> "Ranked":
    """``ranked`` at ``score``, above ``follows``, the difference carried by its context: the score
    stays ``final_score(relevance + context, strength, recency) × feedback``."""
    _, relevance, similarity, keyword, strength, recency, _, liked = ranked.parts
    standing = weights.relevance + weights.strength * strength + weights.recency * recency
    if liked <= 0 or standing <= 0:
        return ranked
    context = score / (liked * standing) - relevance
    return replace(ranked, parts=(score, relevance, similarity, keyword, strength, recency, context, liked),
                   follows=follows)
