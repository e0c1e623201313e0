"""hippo as Claude Code hooks (seed 002): capture and surfacing with no effort from the agent.

``hippo hooks install`` writes one command per event into ``.claude/settings.json`` (a project's)
or ``~/.claude/settings.json`` (the user's), next to whatever hooks are there. Each command is
``hippo hook EVENT``, which reads Claude Code's hook input (JSON on standard input: ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``prompt``, ...):

- ``UserPromptSubmit``: surface what is relevant to the prompt (and the last two messages before
  it); printed as ``hookSpecificOutput.additionalContext``, nothing when nothing is relevant.
- ``Stop``, ``SessionEnd``: observe the part of the transcript not observed yet.
- ``PreCompact``: the same, then ``compact`` the session Claude Code holds (what fades is stored).

With a server (``--url`` at install, or ``HIPPO_URL``; ``HIPPO_API_KEY`` for a keyed one) the hook
only talks HTTP with a short timeout; otherwise it opens the database itself and, at
``SessionEnd`` and ``PreCompact``, starts ``hippo process`` in the background. Where a transcript
was read up to is kept per session under ``$XDG_STATE_HOME/hippo/claude-code`` (message uuids are
message ids, so a lost state only costs a re-read). The command line wraps everything: whatever
fails, the hook prints nothing and exits 0 (see :mod:`hippo.surfaces.cli.hooks`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import urllib.error
import urllib.request
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from hippo.errors import InvalidInput, ProviderError
from hippo.integrations.claude_code import new_lines, read_transcript, since_last_compaction, tail_messages, text_only

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["EVENTS", "Refused", "Target", "event_name", "hook_command", "install", "run", "settings_path"]

EVENTS = ("UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
TIMEOUTS = {"UserPromptSubmit": 15, "Stop": 30, "PreCompact": 120, "SessionEnd": 30}  # Claude Code's, seconds
HTTP_TIMEOUT, COMPACT_TIMEOUT = 2.0, 30.0
BATCH = 200  # messages observed per call


def event_name(text: str) -> str:
    """``UserPromptSubmit`` from itself or ``user-prompt-submit`` (any case)."""
    key = text.replace("-", "").replace("_", "").lower()
    for event in EVENTS:
        if event.lower() == key:
            return event
    raise InvalidInput(f"unknown hook event {text!r}: one of {', '.join(EVENTS)}")


# -- installing ----------------------------------------------------------------------------------


def settings_path(project: str | None, user: bool) -> Path:
    return Path.home() / ".claude" / "settings.json" if user else Path(project or ".").resolve() / ".claude" / \
        "settings.json"


def hook_command(event: str, executable: str, options: Sequence[str], url: str | None) -> str:
    """The shell command of one event: quiet and exiting 0 even when hippo itself is gone."""
    argv = [executable, *options, "hook", event, *(["--url", url] if url else [])]
    return " ".join(shlex.quote(a) for a in argv) + " 2>/dev/null || true"


def _ours(command: Any, event: str) -> bool:
    return isinstance(command, str) and "hippo" in command and f" hook {event}" in command


def install(path: Path, commands: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Merge one hook per event into the settings file at ``path`` (other settings and hooks kept,
    an earlier hippo hook of the event replaced): (events added or changed, events already there)."""
    settings = json.loads(path.read_text(encoding="utf-8")) if path.exists() and path.read_text().strip() else {}
    if not isinstance(settings, dict) or not isinstance(settings.setdefault("hooks", {}), dict):
        raise InvalidInput(f"{path} is not a Claude Code settings object")
    changed, kept = [], []
    for event, command in commands.items():
        groups = settings["hooks"].setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{path}: hooks.{event} is not a list")
        entry = {"type": "command", "command": command, "timeout": TIMEOUTS[event]}
        mine = [g for g in groups if isinstance(g, dict) and any(
            isinstance(h, dict) and _ours(h.get("command"), event) for h in g.get("hooks", []))]
        if [g.get("hooks") for g in mine] == [[entry]]:
            kept.append(event)
            continue
        groups[:] = [g for g in groups if g not in mine] + [{"hooks": [entry]}]
        changed.append(event)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.hippo-tmp")
    temporary.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return changed, kept


# -- running -------------------------------------------------------------------------------------


class Refused(Exception):
    """hippo refused these messages (one of them malformed or too long): sent again one at a time."""


@dataclass
class Target:
    """Where a hook's work goes: a server (``url``), else the database ``open_memory`` opens."""

    agent: str
    url: str | None = None
    api_key: str | None = None
    open_memory: Callable[[bool], AbstractContextManager["Memory"]] | None = None
    background: Sequence[str] | None = None  # the command that processes in the background (direct only)
    where: str = ""  # the database, naming where a transcript's reading state belongs
    _stack: list[Any] = field(default_factory=list)

    def post(self, path: str, body: dict[str, Any], timeout: float = HTTP_TIMEOUT) -> Any:
        assert self.url is not None
        request = urllib.request.Request(f"{self.url.rstrip('/')}/v1/agents/{self.agent}{path}",
                                         data=json.dumps(body).encode(), method="POST",
                                         headers={"content-type": "application/json"})
        if self.api_key:
            request.add_header("authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310 - the configured server
                return json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as exc:
            if exc.code == 400:
                raise Refused(str(exc)) from None
            raise ProviderError(f"hippo at {self.url} answered {exc.code}") from None

    def memory(self, create: bool) -> "Memory":
        if not self._stack:
            assert self.open_memory is not None
            opened = self.open_memory(create)
            self._stack += [opened, opened.__enter__()]
        return self._stack[1]

    def close(self) -> None:
        if self._stack:
            self._stack.pop()
            self._stack.pop().__exit__(None, None, None)

    def observe(self, messages: list[dict[str, Any]], session: str) -> None:
        if self.url:
            self.post(f"/sessions/{session}/messages", {"messages": messages})
            return
        try:
            self.memory(True).observe(messages, session_id=session)
        except InvalidInput as exc:
            raise Refused(exc.message) from None

    def surface(self, messages: list[dict[str, Any]], session: str, max_tokens: int) -> str:
        if self.url:
            found = self.post(f"/sessions/{session}/surface", {"messages": messages, "max_tokens": max_tokens})
            return str(found.get("text") or "") if isinstance(found, dict) else ""
        return self.memory(False).surface(messages, session_id=session, max_tokens=max_tokens).text

    def compact(self, messages: list[dict[str, Any]], session: str) -> None:
        if self.url:
            self.post("/compact", {"messages": messages, "session_id": session}, timeout=COMPACT_TIMEOUT)
        else:
            self.memory(True).compact(messages, session_id=session)

    def process_later(self) -> None:
        if not self.url and self.background:
            subprocess.Popen(list(self.background), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)


def _state_file(target: Target, session: str) -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    where = target.url or target.where
    key = hashlib.sha256(f"{where}\0{target.agent}\0{session}".encode()).hexdigest()[:32]
    return Path(base) / "hippo" / "claude-code" / f"{key}.json"


def _read_offset(state: Path, transcript: str) -> int:
    try:
        saved = json.loads(state.read_text(encoding="utf-8"))
        return int(saved["offset"]) if saved.get("transcript") == transcript else 0
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return 0


def _save_offset(state: Path, transcript: str, offset: int) -> None:
    state.parent.mkdir(parents=True, exist_ok=True)
    temporary = state.with_suffix(".tmp")
    temporary.write_text(json.dumps({"transcript": transcript, "offset": offset}), encoding="utf-8")
    os.replace(temporary, state)


def _send(target: Target, messages: list[dict[str, Any]], session: str) -> None:
    """Observe in batches; a refused batch goes again a message at a time, the refused ones left out."""
    for start in range(0, len(messages), BATCH):
        batch = messages[start:start + BATCH]
        try:
            target.observe(batch, session)
        except Refused:
            for message in batch:
                try:
                    target.observe([message], session)
                except Refused:
                    continue


def observe_new(target: Target, transcript: str, session: str) -> int:
    """Observe what the transcript gained since the last time; the number of messages sent."""
    state = _state_file(target, session)
    lines, end = new_lines(transcript, _read_offset(state, transcript))
    messages = text_only(read_transcript(lines))
    if messages:
        _send(target, messages, session)
    _save_offset(state, transcript, end)
    return len(messages)


def _surface(target: Target, payload: Mapping[str, Any], session: str, max_tokens: int) -> str:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    transcript = payload.get("transcript_path")
    before = tail_messages(transcript, 3) if isinstance(transcript, str) and os.path.isfile(transcript) else []
    if before and before[-1].get("role") == "user" and before[-1].get("content") == prompt:
        before = before[:-1]  # the prompt is already in the transcript
    text = target.surface([*before[-2:], {"role": "user", "content": prompt}], session, max_tokens)
    if not text.strip():
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})


def run(event: str, payload: Mapping[str, Any], target: Target, *, max_tokens: int = 500) -> str:
    """Do what ``event`` asks with Claude Code's hook input; what to print on standard output."""
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return ""
    try:
        if event == "UserPromptSubmit":
            return _surface(target, payload, session, max_tokens)
        transcript = payload.get("transcript_path")
        if not isinstance(transcript, str) or not os.path.isfile(transcript):
            return ""
        observe_new(target, transcript, session)
        if event == "PreCompact":
            with open(transcript, encoding="utf-8", errors="replace") as f:
                held = since_last_compaction(f)
            if held:
                target.compact(held, session)
        if event in ("PreCompact", "SessionEnd"):
            target.process_later()
        return ""
    finally:
        target.close()
