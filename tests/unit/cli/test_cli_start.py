"""Issue 37: a CLI that starts at once. `chipwise --help` lists the commands from a static table (cli/_table.py)
and imports no command module; a command's module is imported when that command runs. The table must say what
the modules register, and a command must load only its own module."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import typer

import chipwise.cli
from chipwise.cli import LazyGroup, load_commands, root_command
from chipwise.cli._help import FULL_SENTENCE
from chipwise.cli._table import COMMANDS

COMMAND_MODULES = "chipwise.cli."


def _registered_by(module: str) -> set[str]:
    """The top-level names ``register`` of chipwise.cli.<module> adds."""
    holder = typer.Typer()
    importlib.import_module(f"{COMMAND_MODULES}{module}").register(holder)
    names = {c.name for c in holder.registered_commands} | {g.name for g in holder.registered_groups}
    return {n for n in names if n is not None}


def test_the_table_names_every_command_each_module_registers_and_nothing_else() -> None:
    modules = [
        m.name
        for m in pkgutil.iter_modules(chipwise.cli.__path__)
        if hasattr(importlib.import_module(f"{COMMAND_MODULES}{m.name}"), "register")
    ]
    registered = {name: module for module in modules for name in _registered_by(module)}
    assert registered == {name: entry.module for name, entry in COMMANDS.items()}


def test_each_summary_in_the_table_is_the_commands_own_first_sentence() -> None:
    root = root_command()
    for name, entry in COMMANDS.items():
        command = root.commands[name]
        assert command.get_short_help_str(FULL_SENTENCE) == entry.summary, name


def test_help_lists_the_commands_from_the_table_and_loads_none_of_them() -> None:
    code = (
        "import io, contextlib, sys\n"
        "from chipwise.cli import main\n"
        "page = io.StringIO()\n"
        "with contextlib.redirect_stdout(page):\n"
        "    code = main(['--help'])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('chipwise.cli.') and not m.startswith("
        "('chipwise.cli._', 'chipwise.cli.common')))\n"
        "print(json.dumps({'code': code, 'page': page.getvalue(), 'loaded': loaded}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True, timeout=120
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    assert result["loaded"] == []  # no command module: the page comes from the table
    commands = result["page"].split("Commands:")[1].splitlines()
    listed = [line.split()[0] for line in commands if line.startswith("  ") and not line.startswith("   ")]
    assert set(COMMANDS) <= set(listed)
    assert "demo" in listed  # a plugin's command (or the line saying how to get it)


def test_a_command_loads_its_own_module_only() -> None:
    loaded = load_commands("bill")
    assert set(loaded) == {"bill"}
    assert set(load_commands("ingest-neuron")) == {"ingest-neuron", "neuron-agent"}  # one module, two commands
    assert load_commands("no-such-command") == {}


def test_the_findings_group_carries_the_subcommands_other_modules_define() -> None:
    findings = load_commands("findings")["findings"]
    assert isinstance(findings, typer.core.TyperGroup)
    assert {"realised", "explain", "evaluate", "show", "suppress", "apply", "rollback"} <= set(findings.commands)


def test_the_root_is_the_lazy_group() -> None:
    assert isinstance(typer.main.get_command(chipwise.cli.app), LazyGroup)
