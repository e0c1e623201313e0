"""hippo as Claude Code hooks: capture and surfacing with no effort from the agent.

``hippo hooks install`` writes one command per event into ``.claude/settings.json`` (a project's)
or ``~/.claude/settings.json`` (the user's), next to whatever hooks are there; each command names
the database and the agent, so the hooks and ``hippo mcp`` share one memory. Each command is
``hippo hook EVENT``, which reads Claude Code's hook input (JSON on standard input: ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``prompt``, ...):

- ``UserPromptSubmit``: surface what is relevant to the prompt (and the last two messages before
  it); printed as ``hookSpecificOutput.additionalContext``, nothing when nothing is relevant.
- ``Stop``, ``SessionEnd``: observe the part of the transcript not observed yet.
- ``PreCompact``: the same, then ``compact`` the session Claude Code holds (what fades is stored).

After ``Stop``, ``PreCompact`` and ``SessionEnd``, what was observed is processed in the background
(detached and debounced: see :func:`request`), so a memory said early in a session surfaces later
in it. With a server (``--url`` at install, or ``HIPPO_URL``; ``HIPPO_API_KEY`` for a keyed one)
the hook only talks HTTP with a short timeout, and the background worker asks the server to process
(``POST .../process``) and waits for its answer; otherwise the hook opens the database itself and
the worker processes it. Where a transcript was read up to is
kept per session under ``$XDG_STATE_HOME/hippo/claude-code`` (message uuids are message ids, so a
lost state only costs a re-read). The command line wraps everything: whatever fails, the hook
prints nothing and exits 0 (see :mod:`hippo.interfaces.cli.hooks`).
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

try:
    import fcntl
except ImportError:  # Windows: no flock; each request starts a worker (processing is safe concurrently)
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from hippo.core.memory import Memory

__all__ = ["EVENTS", "Files", "Refused", "Target", "event_name", "files", "hook_command", "install", "request", "run",
           "settings_path", "state_dir", "work"]

EVENTS = ("UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
TIMEOUTS = {"UserPromptSubmit": 15, "Stop": 30, "PreCompact": 120, "SessionEnd": 30}  # Claude Code's, seconds
HTTP_TIMEOUT, COMPACT_TIMEOUT = 2.0, 30.0
PROCESS_TIMEOUT = 600.0  # the background worker waits this long for a server's processing
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
    processor: Sequence[str] | None = None  # the command that processes in the background
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

    def processing_files(self) -> Files:
        """The background processing's marker and lock for this database (or server) and agent."""
        return files(self.url or self.where, self.agent)

    def request_processing(self) -> bool:
        """Start processing what was observed in the background, unless a worker is already on it."""
        return request(self.processing_files(), self.processor) if self.processor else False

    def process(self) -> None:
        """Process what was observed now: what the background worker does."""
        if self.url:
            self.post("/process", {}, timeout=PROCESS_TIMEOUT)
        else:
            self.memory(False).process_pending()


def _state_file(target: Target, session: str) -> Path:
    where = target.url or target.where
    key = hashlib.sha256(f"{where}\0{target.agent}\0{session}".encode()).hexdigest()[:32]
    return state_dir() / f"{key}.json"


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
        observed = observe_new(target, transcript, session)
        if event == "PreCompact":
            with open(transcript, encoding="utf-8", errors="replace") as f:
                held = since_last_compaction(f)
            if held:
                target.compact(held, session)
        if observed or event in ("PreCompact", "SessionEnd"):
            target.close()  # the worker writes to the database: this hook is done with it
            target.request_processing()
        return ""
    finally:
        target.close()


# -- processing in the background ----------------------------------------------------------------
#
# After a hook observed new messages (``Stop``, ``PreCompact``, ``SessionEnd``), :func:`request` asks
# for them to be processed (windows, the gate, extraction: ``process_pending``) by a detached process,
# ``hippo hooks process``, so the hook returns at once and what was said early in a session can
# surface later in the same session. Two files per database (or server) and agent, in the hooks'
# state directory, make a burst of hooks start one processing, not one each:
#
# - ``process-KEY.pending``: there is something to process. Every request creates it.
# - ``process-KEY.lock``: an exclusive ``flock`` that the worker holds for its whole life. The hook
#   takes it before it starts the worker and hands it over (the worker inherits the descriptor), so
#   a worker never starts without it, and no second one starts while the first is loading.
#
# A request creates the marker, then tries the lock. Held, a worker is running: it will see the
# marker. Free, the hook starts a worker. The worker removes the marker and processes, again while the
# marker comes back; then it lets the lock go and looks once more, so a request that came between its
# last look and the release is not lost. A request's messages are committed before its marker is
# made, and a pass starts after the marker it removed: no observed message waits for a later request.
# The system releases the lock of a worker that dies, so a killed worker blocks nothing.


def state_dir() -> Path:
    """Where the hooks keep their state: ``$XDG_STATE_HOME/hippo/claude-code``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "hippo" / "claude-code"


@dataclass(frozen=True, slots=True)
class Files:
    """The marker and the lock of one database (or server) and agent."""

    pending: Path
    lock: Path


def files(where: str, agent: str) -> Files:
    """The files of the database or server ``where`` and ``agent``."""
    key = hashlib.sha256(f"{where}\0{agent}".encode()).hexdigest()[:32]
    folder = state_dir()
    return Files(folder / f"process-{key}.pending", folder / f"process-{key}.lock")


def _take(fd: int) -> bool:
    """The lock, if no one holds it."""
    assert fcntl is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _start(command: Sequence[str], lock_fd: int | None) -> None:
    """The worker, detached: its own session, no terminal, nothing inherited but the lock."""
    subprocess.Popen(list(command), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True, pass_fds=() if lock_fd is None else (lock_fd,))


def request(where: Files, command: Sequence[str]) -> bool:
    """Ask for processing; start ``command`` (followed by ``--lock-fd N``) unless a worker runs.
    True when a worker was started. Returns at once: the worker is detached."""
    where.pending.parent.mkdir(parents=True, exist_ok=True)
    where.pending.touch()
    if fcntl is None:
        _start(command, None)
        return True
    fd = os.open(where.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not _take(fd):
            return False
        _start([*command, "--lock-fd", str(fd)], fd)
        return True
    finally:
        os.close(fd)  # the worker's copy keeps the lock


def _consume(marker: Path) -> bool:
    try:
        marker.unlink()
        return True
    except FileNotFoundError:
        return False


def work(where: Files, lock_fd: int | None, process: Callable[[], object]) -> int:
    """The worker: ``process`` once, then again while requests come, holding the lock handed over
    as ``lock_fd`` (None: a worker started by hand, or without flock); the number of passes."""
    passes = 0
    while True:
        while _consume(where.pending) or passes == 0:
            process()
            passes += 1
        if lock_fd is None or fcntl is None:
            return passes
        fcntl.flock(lock_fd, fcntl.LOCK_UN)
        if not where.pending.exists() or not _take(lock_fd):
            return passes  # nothing came, or a new worker took over
