"""Issue 37: the console script ends its process without the interpreter's teardown (chipwise.cli.finish), and loses
nothing by it: the exit code, what is buffered on stdout and stderr, the atexit handlers, a thread still running and
the SQLite store's write-ahead log all come out as after the usual exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _python(
    code: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # Buffered streams, as a user's shell gives them (the suite may run with PYTHONUNBUFFERED)
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, check=False, cwd=cwd, env=env
    )


@pytest.mark.parametrize("code", [0, 1, 2, 130])
def test_the_exit_code_is_the_commands(code: int) -> None:
    done = _python(f"from chipwise.cli import finish\nfinish({code})")
    assert done.returncode == code


def test_what_is_buffered_on_stdout_and_stderr_is_written() -> None:
    # Given output still in the streams' buffers (no newline, a pipe: block-buffered)
    done = _python(
        "import sys\nfrom chipwise.cli import finish\n"
        "sys.stdout.write('out ' * 5000 + 'end')\nsys.stderr.write('err-no-newline')\nfinish(0)"
    )
    assert done.stdout == "out " * 5000 + "end"
    assert done.stderr == "err-no-newline"


def test_the_atexit_handlers_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    done = _python(
        "import atexit, pathlib, sys\nfrom chipwise.cli import finish\n"
        "atexit.register(lambda: pathlib.Path(sys.argv[1]).write_text('yes'))\nfinish(3)",
        str(marker),
    )
    assert done.returncode == 3
    assert marker.read_text() == "yes"


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    # Given a thread that writes its file after the command returned: the usual exit waits for it
    marker = tmp_path / "thread"
    done = _python(
        "import pathlib, sys, threading, time\nfrom chipwise.cli import finish\n"
        "def late():\n    time.sleep(0.3)\n    pathlib.Path(sys.argv[1]).write_text('done')\n"
        "threading.Thread(target=late).start()\nfinish(4)",
        str(marker),
    )
    assert done.returncode == 4
    assert marker.read_text() == "done"


def test_a_closed_stdout_ends_as_the_interpreter_ends_it() -> None:
    # Given stdout a pipe whose reader is gone, with output still buffered
    code = (
        "import os, sys\nfrom chipwise.cli import finish\n"
        "read, write = os.pipe()\nos.close(read)\nos.dup2(write, sys.stdout.fileno())\n"
        "sys.stdout.write('x' * 100)\nfinish(0)"
    )
    done = _python(code)
    plain = _python(code.replace("finish(0)", "sys.exit(0)"))
    # Then the exit is the interpreter's own (it reports the failed flush and exits 120), not a silent 0
    assert (done.returncode, plain.returncode) == (120, 120)
    assert "BrokenPipeError" in done.stderr


def test_the_console_script_leaves_the_sqlite_store_closed(tmp_path: Path) -> None:
    # Given a command that opens the SQLite store (its schema created, in WAL mode) through the console script
    store = tmp_path / "store.db"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CHIPWISE_")},
        "CHIPWISE_DATABASE_URL": f"sqlite:///{store}",
    }
    done = _python(
        "import sys\nsys.argv[0] = 'chipwise'\nfrom chipwise.console import run\nrun()",
        "findings",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    # Then its connections were closed at exit: SQLite checkpointed and removed the write-ahead log
    assert store.is_file()
    assert not Path(f"{store}-wal").exists()
