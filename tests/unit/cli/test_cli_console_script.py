"""The ``chipwise`` console script without the ``cli`` extra says which extra to install, in one line (issue 25)."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator

import pytest

from chipwise import console


@pytest.fixture(autouse=True)
def _collector_thresholds() -> Iterator[None]:
    """console.run raises the collector's young threshold for its process: the suite's process gets its own back."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_script_collects_the_young_generation_less_often() -> None:
    # When the console script runs a command (an atexit handler reads the collector's thresholds at its end)
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(repr(gc.get_threshold())))\n"
        "sys.argv = ['chipwise', '--help']\nfrom chipwise.console import run\nrun()"
    )
    script = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    # Then it ran with the young generation collected every YOUNG_THRESHOLD allocations, the older ones as they were
    assert script.returncode == 0
    assert script.stderr == repr((console.YOUNG_THRESHOLD, *gc.get_threshold()[1:]))


def test_without_typer_the_script_names_the_extra_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given typer is not installed (None in sys.modules makes its import fail as a missing module would)
    monkeypatch.setitem(sys.modules, "typer", None)
    for name in [m for m in sys.modules if m == "chipwise.cli" or m.startswith("chipwise.cli.")]:
        monkeypatch.delitem(sys.modules, name)
    # When the console script runs
    with pytest.raises(SystemExit) as exit_info:
        console.run()
    # Then it exits 1 with one line naming the extra, and no traceback
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err == "chipwise: the command line needs its extra: pip install 'chipwise[cli]'\n"


def test_another_missing_module_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a missing module that is not one of the command line's packages
    monkeypatch.setitem(sys.modules, "chipwise.cli", None)
    # Then the error is raised as it is (a bug is not dressed up as a missing extra)
    with pytest.raises(ModuleNotFoundError):
        console.run()


def test_the_installed_script_runs_the_command_line_when_the_extra_is_there() -> None:
    # Given the development install (typer present): the entry point is chipwise.console:run
    script = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.argv = ['chipwise', '--help']; from chipwise.console import run; run()",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert script.returncode == 0
    assert "FinOps advisor for AWS AI accelerators" in script.stdout
