"""Running Claude Code's hooks as Claude Code does: a transcript in its JSON Lines format, the
documented JSON payload on standard input of the installed shell command; and waiting for what the
hooks start in the background by watching the database, with a deadline."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")
SESSION = "9b2c1a4e-0000-4000-8000-000000000001"


def line(kind: str, uuid: str, content, parent: str | None = None, session: str = SESSION) -> str:
    """One transcript line: a user or assistant message as Claude Code writes it."""
    return json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/repo",
                       "sessionId": session, "version": "1.0.0", "type": kind, "uuid": uuid,
                       "timestamp": "2026-11-01T10:00:00.000Z",
                       "message": {"role": kind, "content": content}}) + "\n"


def payload(event: str, transcript: Path, session: str = SESSION, **more) -> dict:
    return {"session_id": session, "transcript_path": str(transcript), "cwd": "/repo", "hook_event_name": event,
            **more}


def command(settings: dict, event: str) -> str:
    """The one hippo command installed for ``event``."""
    found = [h["command"] for g in settings["hooks"][event] for h in g["hooks"] if " hook " in h["command"]]
    assert len(found) == 1
    return found[0]


def run(cmd: str, body: dict, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """The hook's shell command with ``body`` on standard input, as Claude Code runs it."""
    environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path),
                   "HIPPO_CONFIG": str(tmp_path / "none.toml"), **env}
    environment.pop("HIPPO_URL", None) if "HIPPO_URL" not in env else None
    started = time.monotonic()
    done = subprocess.run(["sh", "-c", cmd], input=json.dumps(body), capture_output=True, text=True,
                          env=environment, cwd=tmp_path, timeout=60)
    return done, time.monotonic() - started


def wait_until(check: Callable[[], T], what: str, deadline: float = 120.0) -> T:
    """``check()``'s first true value; fails when none came within ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while not (found := check()):
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline:g} s")
        time.sleep(0.05)
    return found
