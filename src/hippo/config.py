"""One frozen Settings: arguments > ``HIPPO_*`` environment > ``hippo.toml`` > defaults."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from hippo import limits
from hippo.errors import ConfigError, shown

__all__ = ["Settings", "load_settings", "read_config_file"]

DEFAULT_ANN_THRESHOLD = 50_000


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything configurable about one opened memory.

    ``embedder`` is a registry spec (``local``, ``ollama:nomic-embed-text``,
    ``openai:text-embedding-3-small``, ``fake``) or ``none`` for keyword-only.
    ``llm`` is an LLM spec (``openai:gpt-4o-mini``, ``anthropic:claude-haiku-4-5``) for fact
    extraction; ``None`` uses the offline rule-based extractor.
    ``messages_table`` is the application's conversation table (``none`` to omit).
    """

    db: str = "hippo.db"
    agent_id: str = "default"
    embedder: str = "local"
    llm: str | None = None
    messages_table: str | None = "messages"
    max_content_chars: int = 32_000
    max_query_chars: int = 4_000
    block_char_limit: int | None = None
    vector_weight: float = 0.6
    # True: in a small set of memories (recall reads every one), the keyword side weighs what its
    # statistics can tell from the text the set holds: nothing below about 300 words, its full
    # weight (1 - vector_weight) from about 3,000 (hippo.core.fusion.keyword_confidence); a query
    # naming an identifier (a word of 3+ digits) keeps it (BENCHMARKS.md "Relevance on small stores").
    keyword_trust: bool = True
    # True: among recall's best candidates, a memory observed later on the same subject that says
    # what changed or was settled ranks above the one it follows (hippo.core.recall.later).
    prefer_later: bool = True
    min_relevance: float = 0.1  # below it a candidate is noise (LoCoMo recall unchanged up to 0.15)
    weight_relevance: float = 0.6
    weight_strength: float = 0.3
    weight_recency: float = 0.1
    decay_lambda: float = 0.001
    # Added to the relevance of memories observed on the day or in the month a query names
    # ("on October 13, 2023"); 0 turns the date step off. Measured in bench/locomo.py.
    date_preference: float = 0.2
    # How much of its neighbours' relevance a memory borrows (memories of the same session stored
    # one after another: turns of one conversation); 0 turns it off. See core/recall/context.py.
    context_weight: float = 0.5
    # An agent with this many vectors is searched through an HNSW index (the ``ann`` extra)
    # instead of exactly; None or 0 keeps every agent exact. Measured in bench/ann_choice.py.
    ann_threshold: int | None = DEFAULT_ANN_THRESHOLD
    # Seconds within which a recall's retrieval event (access counts, intensity, co-recall links) is
    # written behind its answer; a killed process loses at most these last seconds of boosts. 0
    # writes it before recall returns. See hippo.stores.retrievals.
    retrieval_delay: float = 0.2
    # Without an LLM, how remember_facts tells a new fact from a stored one: "auto" (the default): the
    # pair model (hippo.core.facts.pairs, trained on all-MiniLM-L6-v2's vectors: about three reworded
    # duplicates in four recognised on two held-out sets, calibration/README.md) with that embedder,
    # the rules with any other and for text mostly outside the Latin script, which MiniLM cannot read;
    # "model": the pair model (MiniLM only); "rules" (hippo.core.facts.offline.relation: never merges a fact
    # that adds a word, keeps most paraphrases twice). A merge keeps the new wording (fact_history).
    offline_pairs: str = "auto"
    # How recall orders its candidates: "none" (the default: the fusion plus the context neighbours
    # lend) or "learned" (a logistic regression over the candidates' features, hippo.core.recall.rerank;
    # BENCHMARKS.md "A learned reranking stage").
    rerank: str = "none"
    # Curation's feedback, asymmetric: a reinforcement adds this much to a memory's feedback count,
    # a demotion takes this much away (one confirmation outweighs three demotions).
    reinforce_weight: int = 3
    demote_weight: int = 1
    # Curation's size cap: over it, maintain() archives the bottom prune_percent of memories (by
    # feedback and recency) until the database is under it; None: no cap. The agents holding memories
    # share it equally: an agent whose memories, live and archived, take no more than its share (the
    # database's other bytes counted in proportion) is never archived for it, and when archiving the
    # others cannot meet the cap, maintain() stops and says so (docs/guide/curation.md). prune_schedule
    # is a cron expression ("0 4 * * *": daily at 04:00) on which ``hippo serve`` runs maintain(); None: never.
    max_db_bytes: int | None = None
    prune_percent: float = 1.0
    prune_schedule: str | None = None
    # Experiences' short-term memory: the last short_term_size experiences per agent; entries older
    # than short_term_max_age seconds and of importance under 0.5 are pruned at consolidation.
    # short_term_durable keeps the buffer in the database (every append committed; always so on a
    # store several servers share); otherwise it lives in the process until consolidated.
    short_term_size: int = 100
    short_term_max_age: float = 3600.0
    short_term_durable: bool = False
    # Experiences' consolidation: experiences of at least this importance move to long-term memory;
    # ``hippo serve`` also consolidates every consolidate_every seconds when set (None: never).
    consolidation_threshold: float = 0.6
    consolidate_every: float | None = None
    # Long-term bounds on experiences, off by default: at most ltm_max_memories memories, none whose
    # strength has decayed under ltm_min_importance; kept by archiving (docs/guide/experiences.md).
    ltm_max_memories: int | None = None
    ltm_min_importance: float | None = None
    # Automatic capture (docs/guide/capture.md): windows of about capture_window_tokens with capture_overlap_tokens of
    # overlap; capture_roles are the speakers kept (system prompts and tool outputs are left out);
    # ``hippo serve`` processes what was observed every capture_every seconds when set.
    capture_window_tokens: int = 500
    capture_overlap_tokens: int = 100
    capture_roles: str = "user,assistant"
    capture_every: float | None = None
    # Context surfacing: the last surface_messages messages make the query; a hit is shown when
    # its relevance reaches surface_threshold (measured: docs/decisions/capture.md).
    surface_messages: int = 3
    surface_threshold: float = 0.5
    # ``hippo serve``'s log lines: "text" (plain, no line per request) or "json" (one JSON object
    # per line on stderr, one line per request: docs/guide/operations.md).
    log_format: str = "text"
    # The audit trail (docs/guide/audit.md): Memory.trim_audit (``hippo audit trim``) removes records
    # older than audit_retention_days, leaving a signed checkpoint that keeps each agent's chain
    # verifiable; None (the default): keep every record.
    audit_retention_days: int | None = None

    @property
    def file_per_agent(self) -> bool:
        """Whether ``db`` is a template with a SQLite file per agent (``memories/{agent_id}.db``)."""
        return "{agent_id}" in self.db


_NONE_WORDS = {"", "none", "null", "off"}


def _coerce(name: str, raw: Any, default: Any) -> Any:
    """Turn environment or TOML text into the type of the field's default."""
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in _NONE_WORDS and name in _NULLABLE):
        return None
    try:
        if isinstance(default, bool):
            return raw if isinstance(raw, bool) else str(raw).lower() in {"1", "true", "yes", "on"}
        if isinstance(default, int) or name in _INTS:
            return int(raw)
        if isinstance(default, float) or name in _FLOATS:
            return float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"setting {name} must be a number, got {shown(raw)}") from None
    return str(raw)


_NULLABLE = {"messages_table", "block_char_limit", "llm", "ann_threshold", "max_db_bytes", "prune_schedule",
             "consolidate_every", "ltm_max_memories", "ltm_min_importance", "capture_every", "audit_retention_days"}
_INTS = {"block_char_limit", "ann_threshold", "max_db_bytes", "ltm_max_memories", "audit_retention_days"}
_FLOATS = {"consolidate_every", "ltm_min_importance", "capture_every"}


def read_config_file(config_file: str | os.PathLike[str] | None = None) -> tuple[Path, dict[str, Any]] | None:
    """``hippo.toml`` (``$HIPPO_CONFIG``, else ./hippo.toml) and what it holds; None when there is
    none. The one reader of the file: the settings come from it, and compaction's
    ``[compaction]`` section (:func:`hippo.core.compaction.config.load_compaction_config`)."""
    path = Path(config_file or os.environ.get("HIPPO_CONFIG", "hippo.toml"))
    if not path.is_file():
        return None
    try:
        return path, tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings from ``hippo.toml`` (``$HIPPO_CONFIG`` or ./hippo.toml), then the
    environment, then the arguments given here (``None`` arguments are ignored)."""
    names = {f.name: f.default for f in fields(Settings)}
    unknown = set(overrides) - set(names)
    if unknown:
        raise ConfigError(f"unknown settings: {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    found = read_config_file(config_file)
    if found is not None:
        section = found[1].get("hippo", found[1])
        values.update({k: _coerce(k, v, names[k]) for k, v in section.items() if k in names})
    for name, default in names.items():
        env = os.environ.get(f"HIPPO_{name.upper()}")
        if env is not None:
            values[name] = _coerce(name, env, default)
    for name, value in overrides.items():
        if value is None:
            continue
        if name in _NULLABLE and isinstance(value, str) and value.strip().lower() in _NONE_WORDS:
            value = None
        values[name] = value
    if isinstance(values.get("db"), (str, Path)):  # no shell expands "~" or "$HOME" in a JSON config (MCP)
        db = str(values["db"])  # a URL is left as written: a password may hold a "$"
        values["db"] = db if "://" in db else os.path.expandvars(os.path.expanduser(db))
    return _checked(replace(Settings(), **values))


# Settings that are counts: (smallest allowed, largest allowed, whether None is allowed).
_COUNTS = {"ann_threshold": (0, 2**40, True), "block_char_limit": (1, limits.BLOCK_CHAR_LIMIT, True),
           "max_content_chars": (1, 10_000_000, False), "max_query_chars": (1, 1_000_000, False),
           "reinforce_weight": (0, 100, False), "demote_weight": (0, 100, False),
           "max_db_bytes": (1, 2**62, True), "short_term_size": (*limits.SHORT_TERM_SIZE, False),
           "ltm_max_memories": (1, 2**40, True), "capture_window_tokens": (50, 100_000, False),
           "capture_overlap_tokens": (0, 10_000, False), "surface_messages": (1, 100, False),
           "audit_retention_days": (1, 365_000, True)}
# Settings that are numbers: (smallest allowed, largest allowed, whether None is allowed).
_NUMBERS = {"short_term_max_age": (0.0, 10.0**9, False), "consolidation_threshold": (0.0, 1.0, False),
            "consolidate_every": (0.1, 10.0**7, True), "ltm_min_importance": (0.0, 1.0, True),
            "capture_every": (0.1, 10.0**7, True), "surface_threshold": (0.0, 1.0, False),
            "retrieval_delay": (0.0, 60.0, False)}


def _checked(settings: Settings) -> Settings:
    """Refuse values that cannot work (a negative threshold, a zero limit) before anything opens."""
    for name, (low, high, nullable) in _COUNTS.items():
        value = getattr(settings, name)
        if value is None and nullable:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigError(f"setting {name} must be a whole number from {low} to {high}"
                              + (" or none" if nullable else "") + f", got {shown(value)}")
    for name, (lowest, highest, nullable) in _NUMBERS.items():
        value = getattr(settings, name)
        if value is None and nullable:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lowest <= value <= highest:
            raise ConfigError(f"setting {name} must be a number from {lowest:g} to {highest:g}"
                              + (" or none" if nullable else "") + f", got {shown(value)}")
    roles = set(str(settings.capture_roles).replace(" ", "").split(","))
    if not roles or not roles <= {"user", "assistant", "system", "tool"}:
        raise ConfigError(f"setting capture_roles must list some of user, assistant, system, tool, "
                          f"got {shown(settings.capture_roles)}")
    if settings.capture_overlap_tokens >= settings.capture_window_tokens:
        raise ConfigError("setting capture_overlap_tokens must be smaller than capture_window_tokens")
    for flag in ("keyword_trust", "prefer_later"):
        if not isinstance(getattr(settings, flag), bool):
            raise ConfigError(f"setting {flag} must be true or false, got {shown(getattr(settings, flag))}")
    if not isinstance(settings.short_term_durable, bool):
        raise ConfigError(f"setting short_term_durable must be true or false, got {shown(settings.short_term_durable)}")
    if isinstance(settings.prune_percent, bool) or not isinstance(settings.prune_percent, (int, float)) \
            or not 0 < settings.prune_percent <= 100:
        raise ConfigError(f"setting prune_percent must be a number above 0 and at most 100, "
                          f"got {shown(settings.prune_percent)}")
    if settings.rerank not in ("none", "learned"):
        raise ConfigError(f"setting rerank must be 'none' or 'learned', got {shown(settings.rerank)}")
    if settings.log_format not in ("text", "json"):
        raise ConfigError(f"setting log_format must be 'text' or 'json', got {shown(settings.log_format)}")
    if settings.offline_pairs not in ("auto", "rules", "model"):
        raise ConfigError(f"setting offline_pairs must be 'auto', 'rules' or 'model', "
                          f"got {shown(settings.offline_pairs)}")
    return settings
