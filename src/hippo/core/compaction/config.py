"""How compaction decays a session: :class:`CompactionConfig`, its defaults, and where it is read
from: a ``[compaction]`` section of ``hippo.toml``, or a ``hippocampus.config.json`` (the settings
file of the compaction extension hippo replaces, in camelCase), each merged over the defaults as
that extension merges its file (``decayRates`` and ``retentionFloor`` key by key, the rest replaced)."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hippo.config import read_config_file
from hippo.core.validation import shown
from hippo.errors import ConfigError, InvalidInput

__all__ = ["CALL_SETTINGS", "CompactionConfig", "ENTRY_TYPES", "for_call", "load_compaction_config"]

log = logging.getLogger("hippo.compaction")

# The six types, in the order ``hippocampus.config.json`` lists them.
ENTRY_TYPES = ("decision", "user_intent", "context", "tool_result", "ephemeral", "unknown")

DEFAULT_DECAY_RATES = {"decision": 0.03, "user_intent": 0.05, "context": 0.12, "tool_result": 0.20,
                       "ephemeral": 0.35, "unknown": 0.15}
DEFAULT_FLOORS = {"decision": 0.50, "user_intent": 0.35}

# ``hippocampus.config.json``'s names beside hippo.toml's.
_JSON_NAMES = {"decayRates": "decay_rates", "sparseThreshold": "sparse_threshold",
               "compressThreshold": "compress_threshold", "retentionFloor": "retention_floor",
               "maxSparseIndexTokens": "max_sparse_index_tokens", "debug": "debug", "logFile": "log_file",
               "classifier": "classifier"}
_MAX_RATE = 100.0
_MAX_INDEX_TOKENS = 10_000_000
# What a call may set (a request, a tool call, a mapping passed to compact): the documented numbers.
# A file to write and the debug switch are the operator's, from hippo.toml or a config file only.
CALL_SETTINGS = ("decay_rates", "sparse_threshold", "compress_threshold", "retention_floor", "max_sparse_index_tokens",
                 "classifier")
# How messages are classified and summarised: "meaning" (hippo's, the default) or "reference" (the
# original rules and layout of the compaction extension hippo replaces, for anyone who needs that
# exact output).
CLASSIFIERS = ("meaning", "reference")


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """Compaction's settings. ``decay_rates`` is the lambda of each type (lower remembers longer);
    below ``sparse_threshold`` an entry is a pointer, below ``compress_threshold`` a one-line
    summary, else kept in full; ``retention_floor`` anchors a type's retention;
    ``max_sparse_index_tokens`` caps the pointers. ``debug`` also prints the log lines to stderr;
    ``log_file`` appends them to a file (``logFile`` in a JSON file; none unless named).
    ``classifier`` is ``"meaning"`` (the default: types read by words, decisions in force and open
    goals in sections of their own) or ``"reference"`` (the original rules and layout)."""

    decay_rates: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_DECAY_RATES))
    sparse_threshold: float = 0.25
    compress_threshold: float = 0.65
    retention_floor: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_FLOORS))
    max_sparse_index_tokens: int = 2500
    debug: bool = False
    log_file: str | None = None
    classifier: str = "meaning"

    def __post_init__(self) -> None:
        _check(self)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], *, base: Path | None = None,
                     over: "CompactionConfig | None" = None) -> "CompactionConfig":
        """Settings over the defaults (or over ``over``): ``hippocampus.config.json``'s names (``decayRates``) or
        hippo.toml's (``decay_rates``); a relative ``log_file`` is taken from ``base``."""
        if not isinstance(values, Mapping):
            raise ConfigError(f"compaction settings must be an object, got {type(values).__name__}")
        merged: dict[str, Any] = asdict(over or cls())
        for key, value in values.items():
            name = _JSON_NAMES.get(key, key)
            if name not in merged:
                raise ConfigError(f"unknown compaction setting {shown(key)}; known: {', '.join(_JSON_NAMES)}")
            if name in ("decay_rates", "retention_floor"):
                if not isinstance(value, Mapping):
                    raise ConfigError(f"compaction setting {key} must be an object by type, got {shown(value)}")
                value = {**merged[name], **value}
            merged[name] = value
        if isinstance(merged["log_file"], str) and base is not None and not os.path.isabs(merged["log_file"]):
            merged["log_file"] = str(base / merged["log_file"])
        return cls(**merged)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "CompactionConfig":
        """A JSON config file with camelCase names (``decayRates``, ``sparseThreshold``, ...), such as
        a ``hippocampus.config.json`` an existing setup has, read as it is; ConfigError when it
        cannot be read or holds a value that cannot work."""
        file = Path(path)
        try:
            values = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read compaction config {file}: {exc}") from None
        config = cls.from_mapping(values, base=file.resolve().parent)
        _loaded(config, str(file))
        return config


def for_call(values: Mapping[str, Any], operator: CompactionConfig) -> CompactionConfig:
    """A call's settings over the ``operator``'s: only :data:`CALL_SETTINGS`, in either
    spelling, each checked. InvalidInput (the caller's mistake, nothing written) for anything
    else: a call never names a file on the server."""
    if not isinstance(values, Mapping):
        raise InvalidInput(f"compaction settings must be an object, got {shown(values)}")
    for key in values:
        name = _JSON_NAMES.get(key, key) if isinstance(key, str) else key
        if name not in CALL_SETTINGS:
            theirs = name in ("log_file", "debug")
            raise InvalidInput(f"compaction setting {shown(key)} " + (
                "is the operator's: set it in hippo.toml's [compaction] section" if theirs else
                f"is unknown; a call may set {', '.join(CALL_SETTINGS)}"))
    try:
        return CompactionConfig.from_mapping(values, over=operator)
    except ConfigError as exc:
        raise InvalidInput(exc.message) from None


def load_compaction_config(config_file: str | os.PathLike[str] | None = None) -> CompactionConfig:
    """The ``[compaction]`` section of ``hippo.toml`` (``$HIPPO_CONFIG`` or ./hippo.toml, found as
    :func:`hippo.config.load_settings` finds it) over the defaults; the defaults without one."""
    found = read_config_file(config_file)
    if found is None:
        return CompactionConfig()
    path, data = found
    section = data.get("compaction", data.get("hippo", {}).get("compaction"))
    if section is None:
        return CompactionConfig()
    config = CompactionConfig.from_mapping(section, base=path.resolve().parent)
    _loaded(config, str(path))
    return config


def _loaded(config: CompactionConfig, where: str) -> None:
    shown_config = {**asdict(config), "decay_rates": "..."}
    log.info("🧠 compaction settings loaded %s", json.dumps({"from": where, "config": shown_config}))


def _number(value: Any, name: str, low: float, high: float) -> float:
    # Compared before any float(): 10**400 has none, and NaN or infinity fail the comparison.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"compaction setting {name} must be a number from {low:g} to {high:g}, got {shown(value)}")
    return float(value)


def _by_type(values: Any, name: str, high: float) -> None:
    if not isinstance(values, Mapping):
        raise ConfigError(f"compaction setting {name} must be an object by type, got {shown(values)}")
    for key, value in values.items():
        if key not in ENTRY_TYPES:
            raise ConfigError(f"compaction setting {name} names an unknown type {shown(key)}; "
                              f"types: {', '.join(ENTRY_TYPES)}")
        _number(value, f"{name}.{key}", 0.0, high)


def _check(config: CompactionConfig) -> None:
    """Refuse values that cannot work, naming the setting (ConfigError)."""
    _by_type(config.decay_rates, "decay_rates", _MAX_RATE)
    missing = [t for t in ENTRY_TYPES if t not in config.decay_rates]
    if missing:
        raise ConfigError(f"compaction setting decay_rates lacks {', '.join(missing)}")
    _by_type(config.retention_floor, "retention_floor", 1.0)
    sparse = _number(config.sparse_threshold, "sparse_threshold", 0.0, 1.0)
    compress = _number(config.compress_threshold, "compress_threshold", 0.0, 1.0)
    if sparse > compress:
        raise ConfigError(f"compaction setting sparse_threshold ({sparse:g}) must not exceed "
                          f"compress_threshold ({compress:g})")
    cap = config.max_sparse_index_tokens
    if isinstance(cap, bool) or not isinstance(cap, int) or not 0 <= cap <= _MAX_INDEX_TOKENS:
        raise ConfigError(f"compaction setting max_sparse_index_tokens must be a whole number from 0 to "
                          f"{_MAX_INDEX_TOKENS}, got {shown(cap)}")
    if config.classifier not in CLASSIFIERS:
        raise ConfigError(f"compaction setting classifier must be one of {', '.join(CLASSIFIERS)}, "
                          f"got {shown(config.classifier)}")
    if not isinstance(config.debug, bool):
        raise ConfigError(f"compaction setting debug must be true or false, got {shown(config.debug)}")
    if config.log_file is not None and (not isinstance(config.log_file, str) or not config.log_file.strip()):
        raise ConfigError(f"compaction setting log_file must be a file path, got {shown(config.log_file)}")
