"""The shape of ``hippo``: groups of commands loaded when used, the one-word names of earlier
releases, and help in plain text.

``hippo --help`` is a map of groups (memories, facts, blocks, ...). A group's module is imported
only when one of its commands runs or its help is asked for: ``hippo --help`` imports no command
module, ``hippo recall`` one. Every command name of earlier releases still answers, hidden from the
help: :data:`ALIASES` maps it to its group and command.

Help is Click's plain text: each paragraph flows whole at any width (Rich's help kept a
docstring's line breaks), and an option shows the name of its value (``--limit N``), not a type.
"""

from __future__ import annotations

import copy
import importlib
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

import typer
from typer.core import TyperCommand, TyperGroup

from hippo.core.validation import ULID
from hippo.interfaces.cli.values import read_plainly

__all__ = ["ALIASES", "ARGUMENT_ALIASES", "GROUPS", "Command", "Group", "Root", "Section", "summary"]


@dataclass(frozen=True, slots=True)
class Section:
    """A group of commands, registered on the ``typer.Typer`` named like the group in ``module``."""

    module: str
    help: str
    fallback: str | None = None  # the command that runs when the first word names none (archive QUERY)


# The order of ``hippo --help``. A help's first paragraph is the group's line there (one line at 80
# columns); the rest shows in ``hippo GROUP --help``.
GROUPS: dict[str, Section] = {
    "memories": Section("memories", "Store, recall, browse and curate memories and facts.\n\nRecall counts as "
                                    "a retrieval (it strengthens what it finds, unless --no-touch); list, show, "
                                    "stats and related do not."),
    "facts": Section("memories", "Learn the facts in what a user says; undo a wrong merge."),
    "blocks": Section("blocks", "Named memory blocks (persona, human, ...), read and edited."),
    "experiences": Section("experiences", "Record and recall experiences; consolidate the important ones.\n\n"
                                          "A new experience is short-term; consolidate moves the important ones to "
                                          "long-term memory."),
    "capture": Section("capture", "Observe conversations; process, surface and compact them."),
    "archive": Section("archive", "Search and restore what maintain archived over the size cap.\n\nmaintain "
                                  "archives the least useful memories while the database is larger than its cap "
                                  "(max_db_bytes); nothing is deleted. hippo archive QUERY searches, as before.",
                       fallback="search"),
    "data": Section("transfer", "Move memory in and out; back up, restore and check the database."),
    "audit": Section("backups", "The audit trail: every change to an agent's memory; verify its chain.\n\n"
                                "hippo audit --since WHEN lists, as hippo audit list does.", fallback="list"),
    "receipts": Section("backups", "Check a forget's receipt again: what it removed is still gone.\n\n"
                                   "hippo memories forget, delete and delete-all write one with --receipt FILE."),
    "server": Section("service", "Serve the HTTP API and the dashboard, or MCP; load the model."),
    "keys": Section("service", "API keys of the HTTP service: create, list, delete."),
    "hooks": Section("hooks", "Claude Code hooks: install them; run is what each hook calls."),
}

# Every command name of earlier releases: (group, command); a command of None is the whole group.
ALIASES: dict[str, tuple[str, str | None]] = {
    **{name: ("memories", name) for name in ("store", "recall", "forget", "update", "delete-all", "list", "show",
                                              "stats", "reinforce", "demote", "related", "conversation")},
    "remember": ("facts", "remember"), "split": ("facts", "split"),
    "block": ("blocks", None),
    "experience": ("experiences", None), "consolidate": ("experiences", "consolidate"),
    **{name: ("capture", name) for name in ("observe", "process", "surface", "compact")},
    "maintain": ("archive", "maintain"),  # archive QUERY: its fallback
    # restore: a backup file; an archived memory's id (not a file) as before, see ARGUMENT_ALIASES
    **{name: ("data", name) for name in ("export", "import", "reembed", "scrub", "backup", "restore", "check")},
    "serve": ("server", "http"), "mcp": ("server", "mcp"), "prepare": ("server", "prepare"),
    "hook": ("hooks", "run"),
}


# One-word names whose command follows their first argument: (test, command when it holds). ``hippo
# restore BACKUP`` restores a database, while ``hippo restore ID`` (a memory id that names no file)
# brings an archived memory back, as it did before backups.
ARGUMENT_ALIASES: dict[str, tuple[Callable[[str], bool], tuple[str, str]]] = {
    "restore": (lambda value: ULID.fullmatch(value) is not None and not os.path.exists(value), ("archive", "restore")),
}


def summary(text: str | None) -> str:
    """The first paragraph of a help text, on one line."""
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _value_name(param: Any) -> None:
    """An option that takes a value shows its name (``--session SESSION``) unless it names one itself."""
    if param.param_type_name == "option" and param.metavar is None and not (param.is_flag or param.count):
        param.metavar = (param.name or "value").upper()


_BETWEEN = re.compile(r"(-?[\d.]+)<=x<=(-?[\d.]+)")


def _in_words(help: str) -> str:
    """Click's ranges (``0<=x<=65535``, ``x>=1``) as words: ``0 to 65535``, ``at least 1``."""
    help = _BETWEEN.sub(r"\1 to \2", help)
    return help.replace("x>=", "at least ").replace("x<=", "at most ")


def _argument(param: Any) -> str:
    name = param.metavar or (param.name or "value").upper()
    name += "..." if param.nargs != 1 else ""
    return name if param.required else f"[{name}]"


def _usage(command: Any, ctx: Any) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    return pieces + [_argument(p) for p in command.get_params(ctx) if p.param_type_name == "argument"]


def _write_parameters(command: Any, ctx: Any, formatter: Any) -> None:
    arguments, options = [], []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            arguments.append((_argument(param), summary(getattr(param, "help", None))))
        else:
            _value_name(param)
            record = param.get_help_record(ctx)
            if record is not None:
                options.append((record[0], _in_words(record[1])))
    for title, rows in (("Arguments", arguments), ("Options", options)):
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def _plain_help(option: Any) -> Any:
    if option is not None:
        read_plainly(option)
    return option


class Command(TyperCommand):
    """A command whose help shows value names and flowing paragraphs, and whose values are read
    without pydantic (:mod:`hippo.interfaces.cli.values`)."""

    def __init__(self, name: str | None, **attrs: Any) -> None:
        super().__init__(name, **attrs)
        for param in self.params:
            read_plainly(param)

    def get_help_option(self, ctx: Any) -> Any:
        return _plain_help(super().get_help_option(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage(self, ctx)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _write_parameters(self, ctx, formatter)


def _build(info: Any) -> Any:
    info = copy.copy(info)  # the module's registration stays as it was
    info.cls = Command
    return typer.main.get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode=None)


class Group(TyperGroup):
    """A group whose commands are built from their ``typer.Typer`` registry when first asked for."""

    def __init__(self, *, source: typer.Typer | None = None, fallback: str | None = None, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.source = source
        self.fallback = fallback

    def _registered(self) -> dict[str, Any]:
        infos = self.source.registered_commands if self.source is not None else []
        return {info.name or typer.main.get_command_name(getattr(info.callback, "__name__", "")): info
                for info in infos}

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in self._registered() if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            info = self._registered().get(cmd_name)
            if info is None:
                return None
            self.commands[cmd_name] = _build(info)
        return self.commands[cmd_name]

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help())  # on stdout, as --help
            ctx.exit(2)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and self.get_command(ctx, args[0]) is None:
            if self.fallback is not None:  # hippo archive QUERY, as before the groups
                return self.fallback, self.get_command(ctx, self.fallback), args
            for name in self.list_commands(ctx):  # built, so that "did you mean" knows every name
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def get_help_option(self, ctx: Any) -> Any:
        return _plain_help(super().get_help_option(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*_usage(self, ctx), self.subcommand_metavar]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _write_parameters(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        found = ((name, self.get_command(ctx, name)) for name in self.list_commands(ctx))
        self._write_commands(formatter, [(name, summary(cmd.help)) for name, cmd in found if not cmd.hidden])

    @staticmethod
    def _write_commands(formatter: Any, rows: list[tuple[str, str]]) -> None:
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def section_group(name: str) -> Group:
    """The group ``name`` of :data:`GROUPS`, its module imported now."""
    section = GROUPS[name]
    module = importlib.import_module(f"hippo.interfaces.cli.{section.module}")
    settings = {"ignore_unknown_options": True} if section.fallback else {}  # archive --json QUERY
    return Group(name=name, source=getattr(module, name), fallback=section.fallback, help=section.help,
                 no_args_is_help=True, context_settings=settings, rich_markup_mode=None)


class Root(Group):
    """``hippo`` itself: the groups of :data:`GROUPS` and, hidden, the names of :data:`ALIASES`."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for param in self.params:  # the global options
            read_plainly(param)

    def list_commands(self, ctx: Any) -> list[str]:
        return [*GROUPS, *ALIASES]

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] in ARGUMENT_ALIASES:
            test, (group_name, command) = ARGUMENT_ALIASES[args[0]]
            first = next((arg for arg in args[1:] if not arg.startswith("-")), None)
            if first is not None and test(first):
                return args[0], self.get_command(ctx, group_name).get_command(ctx, command), args[1:]
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            if cmd_name in GROUPS:
                self.commands[cmd_name] = section_group(cmd_name)
            elif cmd_name in ALIASES:
                group_name, command = ALIASES[cmd_name]
                group = self.get_command(ctx, group_name)
                self.commands[cmd_name] = group if command is None else group.get_command(ctx, command)
            else:
                return None
        return self.commands[cmd_name]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        self._write_commands(formatter, [(name, summary(section.help)) for name, section in GROUPS.items()])
