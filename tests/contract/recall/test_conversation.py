"""recall_conversation: FTS5 search over the application's messages table, safe for any query."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import sql

import hippo
from hippo.core.keywords import keyword_terms
from hippo.stores.sqlite.search import match_expression


def fts_query(text, *, stopwords=frozenset(), operator="OR"):
    """What SQLite's FTS5 is asked for a query: the sanitised words, each quoted."""
    return match_expression(keyword_terms(text, stopwords=stopwords), every=operator == "AND")

MESSAGES = [
    ("alice", "s1", "user", "Can you help me plan the Lisbon trip?"),
    ("alice", "s1", "assistant", "Sure. The Lisbon trip: flights first, then hotels."),
    ("alice", "s2", "user", "My espresso machine broke again, the grinder is jammed."),
    ("alice", "s2", "user", "Order part XR-7731 for the grinder, see https://example.com/parts?id=7731"),
    ("alice", "s3", "user", "I said this AND that, OR NOT the other; col:term NEAR(a b) {braces}"),
    ("alice", "s3", "user", "Café crème in Zürich costs 6 francs 🙂 日本語のテキスト"),
    ("alice", "s3", "user", "Robert'); DROP TABLE messages; -- said the little bobby tables"),
    ("bob", "s9", "user", "Bob also plans a Lisbon trip but keeps it secret."),
]

SPECIALS = [
    '"', "'", "*", "^", ":", "(", ")", "-", "+", "NEAR(a b)", "AND", "OR NOT", "col:term",
    "'; DROP TABLE messages; --", '" OR 1=1 --', "{a b}", "Zürich café", "日本語", "🙂", "🙂🙂 grinder",
    "a*", "*grinder", "grinder*", "^grinder", "NEAR", "NOT", "OR", "\"unbalanced", "(((", "a:b:c",
    "lisbon-trip", "--", "/* comment */", "\\", "%", "_", "?", "@#$%&", "x" * 3000, "content:lisbon",
    "messages_fts", "rank", "bm25(messages_fts)", "\t\nlisbon\r\n",
]


def insert(db, sql_text, rows):
    """Rows written by the application itself, on its own connection (SQLite or PostgreSQL)."""
    for row in rows:
        sql(db, sql_text, row)


@pytest.fixture
def chat(mem, db):
    hippo.create_messages_table(db)
    insert(db, "INSERT INTO messages(agent_id, session_id, role, content) VALUES (?, ?, ?, ?)", MESSAGES)
    return mem


def test_finds_by_word(chat):
    hits = chat.recall_conversation("Lisbon")
    assert {h.content for h in hits} == {MESSAGES[0][3], MESSAGES[1][3]}
    hit = hits[0]
    assert hit.fields["agent_id"] == "alice"
    assert hit.fields["session_id"] == "s1"
    assert "[" in hit.snippet and "]" in hit.snippet  # the match is marked
    assert isinstance(hit.id, int) and isinstance(hit.rank, float)
    # Porter stemming: "trips" finds "trip"; any word is enough (OR).
    assert len(chat.recall_conversation("trips")) == 2
    assert {h.content for h in chat.recall_conversation("grinder hotels")} == {
        MESSAGES[1][3], MESSAGES[2][3], MESSAGES[3][3]
    }


def test_rank_orders_best_first(chat):
    hits = chat.recall_conversation("Lisbon trip flights hotels")
    assert hits[0].content == MESSAGES[1][3]
    assert [h.rank for h in hits] == sorted((h.rank for h in hits), reverse=True)


def test_agent_isolation(chat, make_mem):
    assert all(h.fields["agent_id"] == "alice" for h in chat.recall_conversation("Lisbon trip"))
    bob = make_mem("bob")
    hits = bob.recall_conversation("Lisbon trip")
    assert [h.content for h in hits] == [MESSAGES[7][3]]
    carol = make_mem("carol")
    assert carol.recall_conversation("Lisbon trip") == []


def test_limit(chat, db):
    insert(db, "INSERT INTO messages(agent_id, content) VALUES ('alice', ?)", [(f"weather report {i}",) for i in range(30)])
    assert len(chat.recall_conversation("weather")) == 10
    assert len(chat.recall_conversation("weather", limit=3)) == 3
    assert len(chat.recall_conversation("weather", limit=1000)) == 30


def test_rare_token_and_url(chat):
    hits = chat.recall_conversation("XR-7731")
    assert [h.content for h in hits] == [MESSAGES[3][3]]
    # The URL in the query is stripped, not parsed as FTS syntax.
    assert [h.content for h in chat.recall_conversation("https://example.com/parts?id=7731 grinder jammed")][0] == (
        MESSAGES[2][3]
    )


def test_operators_are_literal_words(chat):
    # "AND" is a word here, not an operator: it matches the message that contains it.
    assert [h.content for h in chat.recall_conversation("AND")] == [MESSAGES[4][3]]
    assert MESSAGES[4][3] in [h.content for h in chat.recall_conversation("col:term")]
    assert MESSAGES[4][3] in [h.content for h in chat.recall_conversation("NEAR(a b)")]


def test_unicode(chat):
    assert [h.content for h in chat.recall_conversation("zurich cafe")] == [MESSAGES[5][3]]
    assert [h.content for h in chat.recall_conversation("Zürich")] == [MESSAGES[5][3]]


@pytest.mark.parametrize("query", SPECIALS)
def test_special_characters_never_break(chat, db, query):
    hits = chat.recall_conversation(query)
    assert isinstance(hits, list)
    assert all(isinstance(h, hippo.ConversationHit) for h in hits)
    # Nothing was executed: the table and its rows are intact.
    assert sql(db, "SELECT count(*) FROM messages")[0][0] == len(MESSAGES)


def test_sql_injection_is_just_text(chat):
    hits = chat.recall_conversation("'; DROP TABLE messages; --")
    assert [h.content for h in hits] == [MESSAGES[6][3]]  # found by the words "drop", "table", "messages"
    # Only the word "or" survives: it matches the one message containing that word, nothing more.
    assert [h.content for h in chat.recall_conversation('" OR 1=1 --')] == [MESSAGES[4][3]]


def test_query_with_no_words_returns_nothing(chat):
    for query in ("*", "^", "()", "a b c", "- + :", "https://example.com/x"):
        assert chat.recall_conversation(query) == []


def _valid_query(text: str) -> bool:
    if not text.strip() or "\x00" in text or len(text) > 4_000:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text())
def test_any_text_is_safe(chat, query):
    if _valid_query(query):
        hits = chat.recall_conversation(query)
        assert isinstance(hits, list)
    else:
        with pytest.raises(hippo.InvalidInput):
            chat.recall_conversation(query)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(alphabet=st.sampled_from(list('"\'*^:()-+{}[]<>NEARORANDT \t,.;!?/\\_%@#$&=|~`'))))
def test_fts_syntax_soup_is_safe(chat, query):
    if _valid_query(query):
        assert isinstance(chat.recall_conversation(query), list)


def test_missing_messages_table(mem):
    with pytest.raises(hippo.NotFound) as info:
        mem.recall_conversation("anything")
    assert "create_messages_table" in str(info.value)


def test_messages_table_none_is_config_error(make_mem):
    for off in ("none", "null", "off", "NONE"):
        mem = make_mem("alice", messages_table=off)
        with pytest.raises(hippo.ConfigError):
            mem.recall_conversation("anything")


def test_custom_table_name(make_mem, db):
    mem = make_mem("alice", messages_table="chat_log")
    hippo.create_messages_table(db, "chat_log")
    sql(db, "INSERT INTO chat_log(agent_id, content) VALUES ('alice', 'hello from the chat log')")
    assert [h.content for h in mem.recall_conversation("chat log")] == ["hello from the chat log"]


@pytest.mark.parametrize("name", ["bad name", "x;DROP", "1abc", "", 'a"b'])
def test_create_messages_table_rejects_bad_names(db, name):
    with pytest.raises(hippo.InvalidInput):
        hippo.create_messages_table(db, name)


def test_deleted_messages_are_not_found(chat, db):
    sql(db, "DELETE FROM messages WHERE content LIKE '%espresso%'")
    assert [h.content for h in chat.recall_conversation("grinder")] == [MESSAGES[3][3]]


@pytest.mark.parametrize("query", ["", "   ", "\x00", "bad\x00query", "\ud800", 5, None, b"lisbon", "x" * 4001])
def test_invalid_queries(chat, query):
    with pytest.raises(hippo.InvalidInput):
        chat.recall_conversation(query)


@pytest.mark.parametrize("limit", [0, -1, 1001, "5", True, 2.0])
def test_invalid_limit(chat, limit):
    with pytest.raises(hippo.InvalidInput):
        chat.recall_conversation("lisbon", limit=limit)


# -- the sanitiser ------------------------------------------------------------


def test_sanitiser_strips_urls():
    assert fts_query("see https://example.com/a-b?x=1 and www.foo.org/bar now") == '"see" OR "and" OR "now"'
    assert fts_query("ftp://files.example.com/x") is None


def test_sanitiser_splits_hyphens():
    assert fts_query("XR-7731") == '"xr" OR "7731"'
    assert fts_query("state-of-the-art") == '"state" OR "of" OR "the" OR "art"'


def test_sanitiser_drops_single_characters_and_punctuation():
    assert fts_query("a b cd") == '"cd"'
    assert fts_query("*^:()+") is None
    assert fts_query("don't") == '"don"'
    assert fts_query("snake_case") == '"snake" OR "case"'


def test_sanitiser_quotes_and_or_joins():
    assert fts_query("NEAR(a b) AND col:term") == '"near" OR "and" OR "col" OR "term"'
    assert fts_query('" OR 1=1 --') == '"or"'
    assert fts_query("hello hello HELLO") == '"hello"'  # distinct, lower-cased
    assert fts_query("red cat", operator="AND") == '"red" AND "cat"'


def test_sanitiser_stopwords_and_edge_types():
    from hippo.core.keywords import ENGLISH_STOPWORDS

    assert fts_query("the cat and the dog", stopwords=ENGLISH_STOPWORDS) == '"cat" OR "dog"'
    assert fts_query("the and of", stopwords=ENGLISH_STOPWORDS) is None
    assert keyword_terms(None) == []  # type: ignore[arg-type]
    assert fts_query("") is None


def test_sanitiser_caps_terms():
    query = fts_query(" ".join(f"word{i}" for i in range(200)))
    assert query.count(" OR ") == 63


@given(st.text())
def test_sanitiser_output_is_only_quoted_words(text):
    query = fts_query(text)
    if query is None:
        return
    for term in query.split(" OR "):
        assert term.startswith('"') and term.endswith('"')
        inner = term[1:-1]
        assert len(inner) >= 2
        assert inner == inner.lower()
        assert not set(inner) & set('"\'*^:()-+{}[]<>,;.!?/\\_ \t\n\r')
