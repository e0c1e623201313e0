"""A long agent session of real shape, for compaction (issue 21): the user's intents, the
assistant's plans and decisions, tool calls with large outputs (source files, test runs, searches,
now and then one over 10k and one over 30k tokens), and heartbeats. Deterministic for a seed.

Shared by ``bench/compaction.py`` and the tests (``tests/core/test_compaction_rules.py``,
``tests/contract/compaction/test_compaction.py``, loaded with ``support.load_bench``).

    messages = session(tokens=150_000)                 # OpenAI shape
    messages = session(tokens=20_000, shape="anthropic")
"""

from __future__ import annotations

import json
import random
from typing import Any

from hippo.core.compaction.compact import content_of
from hippo.core.messages import read_messages
from hippo.core.tokens import count_tokens

__all__ = ["TASKS", "session"]

# (what the work is about, the file it lives in, what the file does)
TASKS = [
    ("billing export", "services/billing/nightly_export.py", "nightly CSV export of invoices to the S3 archive"),
    ("auth tokens", "services/auth/refresh.py", "refresh token rotation for mobile sessions"),
    ("search indexing", "services/search/indexer.py", "incremental OpenSearch indexing of product listings"),
    ("push notifications", "services/notify/push.py", "APNs and FCM push delivery with retry queues"),
    ("rate limiting", "gateway/limits.py", "token bucket rate limits per API key at the gateway"),
    ("image thumbnails", "workers/thumbs.py", "thumbnail generation for uploaded product photos"),
    ("email digests", "workers/digest.py", "weekly email digest of unread team mentions"),
    ("feature flags", "platform/flags.py", "percentage rollouts of feature flags by tenant"),
    ("audit log", "platform/audit.py", "append-only audit log of admin actions in Postgres"),
    ("currency rates", "services/fx/rates.py", "hourly currency exchange rates from the ECB feed"),
    ("invoice PDFs", "services/billing/pdf.py", "invoice PDF rendering with WeasyPrint templates"),
    ("session replay", "services/replay/recorder.py", "browser session replay capture and sampling"),
]
ASKS = ["Please fix the flaky tests in the {t} code", "Can you refactor the {t} module so it is easier to test",
        "Add structured logging to the {t} path", "Find out why the {t} job got slow last week",
        "Make the {t} code handle retries after network errors"]
PLANS = ["Decision: keep the {t} interface and move the retry logic into a small helper, because callers "
         "depend on the current signature.",
         "My plan for the {t} work: first pin the failing case with a test, then change {f}, then run the suite.",
         "I decided to use a bounded queue for {t} instead of unbounded threads; the approach keeps memory flat.",
         "Strategy for {t}: split {f} into a pure function and a thin I/O layer, and cover the pure part."]
WORDS = ("record batch payload retry window cursor tenant region shard limit offset bucket ledger queue "
         "worker schedule invoice account token digest render sample stream buffer commit rollback").split()


def _code(rng: random.Random, path: str, about: str, lines: int) -> str:
    out = [f"# {path}: {about}", "from __future__ import annotations", ""]
    for n in range(lines):
        a, b, c = rng.sample(WORDS, 3)
        kind = n % 6
        if kind == 0:
            out.append(f"def {a}_{b}_{n}({c}: int, {b}_{a}: str | None = None) -> dict[str, int]:")
        elif kind == 1:
            out.append(f'    """Return the {a} {b} for one {c}, or raise when the {c} is gone."""')
        elif kind in (2, 3):
            out.append(f"    {a}_{c} = {b}.get('{c}', {rng.randint(0, 9999)}) + len({b}_{a} or '')")
        elif kind == 4:
            out.append(f"    if {a}_{c} > {rng.randint(10, 500)}:  # {b} over the {c} limit")
        else:
            out.append(f"        return {{'{a}': {a}_{c}, '{b}': {rng.randint(0, 99)}}}")
    return "\n".join(out)


def _test_log(rng: random.Random, path: str, about: str, lines: int) -> str:
    module = path.replace("/", ".").removesuffix(".py")
    out = [f"$ pytest tests/{path.split('/')[-1].replace('.py', '')} -q  ({about})"]
    for n in range(lines):
        a, b = rng.sample(WORDS, 2)
        status = "PASSED" if rng.random() > 0.08 else "FAILED"
        out.append(f"tests/test_{a}.py::test_{b}_{n} {status} [{rng.randint(1, 999)} ms] {module}")
    out.append(f"{lines} tests, {rng.randint(0, 5)} failed in {rng.uniform(1, 90):.2f}s")
    return "\n".join(out)


def _search(rng: random.Random, path: str, about: str, lines: int) -> str:
    folder = path.rsplit("/", 1)[0]
    out = [f"grep -rn results in {folder} for {about}"]
    for n in range(lines):
        a, b, c = rng.sample(WORDS, 3)
        out.append(f"{folder}/{a}_{b}.py:{rng.randint(1, 800)}:    {c} = {a}_{b}({c}, limit={n})")
    return "\n".join(out)


_TOOLS = {"read_file": _code, "run_tests": _test_log, "grep": _search}


def _tool_turn(rng: random.Random, n: int, path: str, about: str, lines: int, shape: str) -> list[dict[str, Any]]:
    """An assistant turn calling one tool, and the tool's output."""
    tool = rng.choice(list(_TOOLS))
    output = _TOOLS[tool](rng, path, about, lines)
    args = {"path": path} if tool != "grep" else {"pattern": rng.choice(WORDS), "path": path.rsplit("/", 1)[0]}
    call_id = f"call_{n:04d}"
    if shape == "anthropic":
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": args}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}]}]
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": output}]


def _task(rng: random.Random, n: int, shape: str) -> list[dict[str, Any]]:
    topic, path, about = TASKS[n % len(TASKS)]
    ask = ASKS[(n // len(TASKS)) % len(ASKS)].format(t=topic)
    turn: list[dict[str, Any]] = [
        {"role": "user", "content": f"{ask} ({path}, {about}); request {n + 1}."},
        {"role": "assistant", "content": f"Looking at {path} and its tests first, to see how {about} works now."},
    ]
    for _ in range(rng.randint(1, 3)):
        size = rng.choice((15, 30, 50, 80, 120))
        if n % 9 == 4 and _ == 0:
            size = 550  # a big file: over 10k tokens
        if n == 7 and _ == 0:
            size = 1500  # one huge output: over 30k tokens
        turn += _tool_turn(rng, n * 10 + _, path, about, size, shape)
    turn.append({"role": "assistant", "content": rng.choice(PLANS).format(t=topic, f=path)})
    turn.append({"role": "assistant", "content": f"Changed {path}: the {about} now logs each {rng.choice(WORDS)} "
                                                 f"and the suite passes again ({rng.randint(40, 300)} tests)."})
    if n % 3 == 2:
        turn += [{"role": "user", "content": "HEARTBEAT"}, {"role": "assistant", "content": "HEARTBEAT_OK"}]
    return turn


def session(tokens: int = 150_000, *, seed: int = 21, shape: str = "openai") -> list[dict[str, Any]]:
    """Tasks one after another until the session holds ``tokens`` word pieces (its text and tool
    calls as :func:`hippo.core.tokens.count_tokens` counts them); ``shape`` openai or anthropic."""
    if shape not in ("openai", "anthropic"):
        raise ValueError(f"shape must be openai or anthropic, got {shape!r}")
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    total, n = 0, 0
    while total < tokens:
        turn = _task(rng, n, shape)
        total += sum(count_tokens([content_of(m) for m in read_messages(turn)]))
        messages += turn
        n += 1
    return messages

