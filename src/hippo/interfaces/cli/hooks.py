"""Claude Code hooks: ``hippo hooks install``, ``hippo hooks run EVENT`` (``hippo hook EVENT``, the
command each installed hook runs) and ``hippo hooks process`` (the background processing a hook
starts); see :mod:`hippo.integrations.claude_code_hooks`.

``hippo hook`` is not a user's command but Claude Code's: it must never get in the session's way.
Whatever goes wrong (hippo broken, the database unreadable, the server down), it prints nothing,
not even on stderr, and exits 0.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from hippo.errors import InvalidInput
from hippo.interfaces.cli import render
from hippo.interfaces.cli.app import Options, group, opened

if TYPE_CHECKING:
    from hippo.integrations.claude_code_hooks import Target

hooks = group()

URL = typer.Option("--url", metavar="URL", help="A running hippo server http to use (default: HIPPO_URL, else "
                                                "the database directly).")
AGENT = typer.Option("--agent", metavar="ID", help="Agent whose memory the hooks use (default: as for `hippo mcp`, "
                                                   "the global --agent, HIPPO_AGENT_ID, hippo.toml's agent_id, "
                                                   "else 'default').")


def _executable() -> str:
    beside = Path(sys.executable).with_name("hippo")
    return str(beside) if beside.exists() else shutil.which("hippo") or "hippo"


def _agent(options: Options, given: str | None = None) -> str:
    """The agent as `hippo mcp` finds it: given, the global --agent (or HIPPO_AGENT_ID), hippo.toml's
    agent_id, else 'default'."""
    from hippo import wiring
    from hippo.core.validation import check_agent_id

    return check_agent_id(wiring.settings(options.db, agent_id=given or options.agent).agent_id)


def _global_options(options: Options, agent: str) -> list[str]:
    """The global options the hook commands carry: the database as an absolute path (a server URL
    is left to HIPPO_DB: it may hold a password), the agent always (the hooks must write where
    `hippo mcp` reads, whatever the environment Claude Code gives them), the embedder and LLM when given."""
    found: list[str] = []
    path = options.path()
    if "://" not in path:
        found += ["--db", str(Path(path).expanduser().resolve())]
    found += ["--agent", agent]
    for name in ("embedder", "llm"):
        if getattr(options, name):
            found += [f"--{name}", getattr(options, name)]
    return found


@hooks.command("install")
def install(
    ctx: typer.Context,
    project: Annotated[Optional[Path], typer.Option(
        "--project", metavar="DIR", help="Into DIR/.claude/settings.json (default: the current directory).")] = None,
    user: Annotated[bool, typer.Option("--user", help="Into ~/.claude/settings.json, for every project.")] = False,
    url: Annotated[Optional[str], URL] = None,
    agent: Annotated[Optional[str], AGENT] = None,
) -> None:
    """Add hippo's hooks to Claude Code's settings (UserPromptSubmit surfaces memories; Stop,
    PreCompact and SessionEnd observe the transcript and process it in the background), keeping
    every other hook; safe to run twice."""
    from hippo.integrations.claude_code_hooks import EVENTS, hook_command, settings_path
    from hippo.integrations.claude_code_hooks import install as merge

    if project is not None and user:
        raise InvalidInput("give --project DIR or --user, not both")
    options: Options = ctx.find_root().obj or Options()
    name = _agent(options, agent)
    carried = _global_options(options, name)
    path = settings_path(str(project) if project else None, user)
    changed, kept = merge(path, {e: hook_command(e, _executable(), carried, url) for e in EVENTS})
    render.note(f"hippo hooks in {path} for agent {name}: " + ", ".join(
        [*(f"{e} (added)" for e in changed), *(f"{e} (already there)" for e in kept)]))
    if url is None and os.environ.get("HIPPO_URL") is None:
        render.note("the hooks open the database directly; with hippo server http running, --url or HIPPO_URL "
                    "makes them faster")


@hooks.command("run")
def hook(
    ctx: typer.Context,
    event: Annotated[str, typer.Argument(metavar="EVENT", help="UserPromptSubmit, Stop, PreCompact or SessionEnd.")],
    url: Annotated[Optional[str], URL] = None,
    max_tokens: Annotated[int, typer.Option(
        "--max-tokens", metavar="N", help="Budget of what UserPromptSubmit surfaces.")] = 500,
) -> None:
    """Run one Claude Code hook on its JSON input (standard input): the command hippo hooks install
    writes (as hippo hook EVENT). Never fails: a problem means no output and exit 0."""
    try:
        _hook(ctx, event, url or os.environ.get("HIPPO_URL") or None, max_tokens)
    except BaseException:  # noqa: BLE001 - the session must go on whatever happened here
        pass
    sys.stdout.flush()
    raise typer.Exit(0)


def _target(ctx: typer.Context, url: str | None) -> "Target":
    """Where a hook's work goes, with the command that processes it in the background."""
    from hippo.integrations.claude_code_hooks import Target

    options: Options = ctx.find_root().obj or Options()
    agent = _agent(options)
    processor = [sys.executable, "-c", "from hippo.interfaces.cli import main; main()",
                 *_global_options(options, agent), "hooks", "process", *(["--url", url] if url else [])]
    return Target(agent=agent, url=url, api_key=os.environ.get("HIPPO_API_KEY") or None,
                  open_memory=lambda create: opened(ctx, create=create), processor=processor, where=options.path())


def _hook(ctx: typer.Context, event: str, url: str | None, max_tokens: int) -> None:
    import logging
    import warnings

    from hippo.integrations.claude_code_hooks import event_name, run

    # a hook prints only what the agent reads: no log line, no warning, for this call alone (a
    # process that runs the command in-process, as a test does, keeps its logging and warnings)
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            name = event_name(event)
            payload = json.loads(sys.stdin.read() or "{}")
            if not isinstance(payload, dict):
                return
            printed = run(name, payload, _target(ctx, url), max_tokens=max_tokens)
    finally:
        logging.disable(before)
    if printed:
        sys.stdout.write(printed + "\n")


@hooks.command("process", hidden=True)
def process(
    ctx: typer.Context,
    url: Annotated[Optional[str], URL] = None,
    lock_fd: Annotated[Optional[int], typer.Option(
        "--lock-fd", hidden=True, help="The processing lock, held open by the hook that started this.")] = None,
) -> None:
    """Process what the hooks observed, then again while they ask; what a hook starts in the
    background after Stop, PreCompact and SessionEnd (one at a time per database and agent)."""
    from hippo.integrations.claude_code_hooks import work

    target = _target(ctx, url or os.environ.get("HIPPO_URL") or None)
    try:
        work(target.processing_files(), lock_fd, target.process)
    finally:
        target.close()
