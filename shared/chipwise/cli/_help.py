"""How ``--help`` reads: commands in alphabetical order, each with its whole first sentence (never cut with
"..."), and options with a named placeholder (``--account ACCOUNT``) rather than a Python type (``<list[str]>``).

:func:`polish` applies both to the whole command tree once every command is registered.
"""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.models import ArgumentInfo, OptionInfo

FULL_SENTENCE = 10_000  # a short-help limit no first sentence reaches


class ChipwiseGroup(TyperGroup):
    """A command group whose help lists its commands alphabetically, each with its first sentence in full."""

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted(self.commands)

    def summary_of(self, ctx: Any, name: str) -> str | None:
        """The command's first sentence in full (None: no such command, or hidden)."""
        command = self.get_command(ctx, name)
        if command is None or command.hidden:
            return None
        return command.get_short_help_str(FULL_SENTENCE)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            summary = self.summary_of(ctx, name)
            if summary is not None:
                rows.append((name, summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class ChipwiseCommand(TyperCommand):
    """A command whose arguments read as their placeholder alone (``FINDING_ID``, not ``FINDING_ID <str>``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for parameter in self.params:
            if isinstance(parameter, TyperArgument) and parameter.metavar is not None:
                setattr(parameter, "display_type_rich", _no_type)  # noqa: B010 (an instance override)


def _no_type(ctx: Any) -> None:
    return None


def _placeholder(name: str, info: OptionInfo | ArgumentInfo) -> str:
    """``--format`` → FORMAT (the option's long name), an argument → its parameter name."""
    long_names = [d for d in (info.param_decls or ()) if d.startswith("--")]
    return (long_names[0].removeprefix("--") if long_names else name).replace("-", "_").upper()


def _parameter_infos(callback: Any) -> list[tuple[str, OptionInfo | ArgumentInfo, bool]]:
    """(name, typer info, is a flag) for each option or argument a command function declares."""
    try:
        hints = get_type_hints(callback, include_extras=True)
    except Exception:  # an annotation that does not resolve: take the defaults alone
        hints = {}
    else:  # resolved once and kept: typer then reads these very Option/Argument objects, placeholders and all
        callback.__annotations__ = hints
    found: list[tuple[str, OptionInfo | ArgumentInfo, bool]] = []
    for name, parameter in inspect.signature(callback).parameters.items():
        hint = hints.get(name)
        infos = [parameter.default, *getattr(hint, "__metadata__", ())]
        for info in infos:
            if isinstance(info, OptionInfo | ArgumentInfo):
                flag = isinstance(info.default, bool) or getattr(hint, "__origin__", hint) is bool
                found.append((name, info, flag))
    return found


def _name_placeholders(callback: Any) -> None:
    for name, info, flag in _parameter_infos(callback):
        if info.metavar is None and not flag:
            info.metavar = _placeholder(name, info)


def polish(app: typer.Typer) -> None:
    """Alphabetical full-sentence command lists and named placeholders, on ``app`` and every group under it."""
    if not isinstance(app.info.cls, type):  # unset (typer's placeholder): ours
        app.info.cls = ChipwiseGroup
    if app.registered_callback is not None and app.registered_callback.callback is not None:
        _name_placeholders(app.registered_callback.callback)
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = ChipwiseCommand
        if command.callback is not None:
            _name_placeholders(command.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            polish(group.typer_instance)
