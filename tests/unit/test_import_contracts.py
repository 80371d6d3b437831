"""Only the store talks to the database, and the product never imports the emulator or the development kit.

The import contracts are checked on a copy of the package with a forbidden import planted in one module:
`lint-imports` (what `make lint` runs) must fail naming the contract, and pass on the unmodified copy. A plain
reading of the sources outside ``store/`` finds no SQL construct either.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "shared" / "chipwise"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
DATABASE_CONTRACT = "Only the store talks to the database: no sqlalchemy or alembic above"
EMULATOR_CONTRACT = "The product never imports the emulator or the development kit"
# The modules the database contract leaves out: the store itself, and the host-side agent (it imports nothing
# of chipwise nor any database library: its own contract).
NOT_SOURCES = {"store", "neuron_agent"}


def _copy(tmp_path: Path) -> Path:
    """The package and pyproject.toml under ``tmp_path`` (the package at ``shared/chipwise`` as in the repo)."""
    shutil.copytree(PACKAGE, tmp_path / "shared" / "chipwise", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _plant(copy: Path, module: str, line: str) -> None:
    path = copy / "shared" / "chipwise" / module
    source = path.read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    assert future in source, f"{module} has no __future__ import to plant after"
    path.write_text(source.replace(future, f"{future}\n{line}\n", 1), encoding="utf-8")


def _lint_imports(copy: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the copy: its package first on the path, its pyproject as the contract."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy / "shared"), os.environ.get("PYTHONPATH", "")])}
    command = [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(copy / "pyproject.toml")]
    return subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=300, check=False)


def _broken(output: str) -> list[str]:
    """The names of the contracts reported BROKEN (a name may wrap over two lines)."""
    flat = re.sub(r" \(\d+ ignored imports?\)", "", " ".join(output.split()))
    return re.findall(r"(?:^| )((?:(?!KEPT|BROKEN).)+?) BROKEN", flat)


def test_the_unmodified_copy_keeps_every_contract(tmp_path: Path) -> None:
    result = _lint_imports(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("rules/engine.py", "import sqlalchemy", DATABASE_CONTRACT),
        ("intake/service.py", "from sqlalchemy import select", DATABASE_CONTRACT),
        ("cli/db.py", "from alembic import command", DATABASE_CONTRACT),
        ("pipeline/scan.py", "import moto", EMULATOR_CONTRACT),
        ("aws.py", "import chipwise_devkit", EMULATOR_CONTRACT),
        ("store/session.py", "from chipwise_devkit import emulator", EMULATOR_CONTRACT),
    ],
)
def test_a_planted_import_breaks_its_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    # Given a copy of the package with one forbidden import planted
    copy = _copy(tmp_path)
    _plant(copy, module, line)
    # When lint-imports checks it
    result = _lint_imports(copy)
    # Then it fails, naming the contract and the module (rules/ also breaks the purity contract)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = _broken(result.stdout)
    assert any(name.startswith(contract) for name in broken), broken
    module_name = "chipwise." + module.removesuffix(".py").replace("/", ".")
    assert module_name in result.stdout


def test_sqlalchemy_inside_the_store_is_allowed(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    _plant(copy, "store/repositories/rows.py", "import sqlalchemy.exc")
    result = _lint_imports(copy)
    assert result.returncode == 0, result.stdout + result.stderr


def _database_sources() -> set[str]:
    document = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = document["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["name"].startswith(DATABASE_CONTRACT)]
    assert contract["type"] == "forbidden" and set(contract["forbidden_modules"]) == {"sqlalchemy", "alembic"}
    return {name.removeprefix("chipwise.") for name in contract["source_modules"]}


def test_the_database_contract_lists_every_module_above_the_store() -> None:
    present = {
        p.stem
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")
    }
    listed = _database_sources()
    assert present - NOT_SOURCES - listed == set(), "add these to the database contract's source_modules"
    assert listed - present == set(), "the contract names modules that do not exist"
    assert listed & NOT_SOURCES == set()


# What SQL looks like in Python source: the library, statements, raw SQL, a session's reads and writes.
SQL_CONSTRUCTS = re.compile(
    r"\bfrom sqlalchemy\b|\bimport sqlalchemy\b|\bfrom alembic\b|\bimport alembic\b"
    r"|(?<![\w.])select\(|(?<![\w.])text\(|\.execute\(|\bsessionmaker\b"
    r"|\bsession\.(?:scalars?|add|add_all|get|merge|delete|flush|commit|query|rollback|begin|begin_nested|refresh)\("
)


# Not Chipwise's database: the bill reader queries the export's Parquet files with its own DuckDB connection.
OTHER_ENGINES = {Path("collect/bill_export/duckdb_engine.py"): re.compile(r"\bcon\.execute\(")}


def _sql_outside_the_store(package: Path) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] == "store":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            other = OTHER_ENGINES.get(path.relative_to(package))
            if SQL_CONSTRUCTS.search(line) and not (other and other.search(line)):
                found.append(f"{path.relative_to(package)}:{number}: {line.strip()}")
    return found


def test_no_sql_construct_outside_the_store() -> None:
    assert _sql_outside_the_store(PACKAGE) == []


@pytest.mark.parametrize(
    "line",
    [
        "from sqlalchemy import select",
        "rows = session.execute(stmt)",
        "stmt = select(Finding)",
        'session.execute(text("SELECT 1"))',
        "session.add(row)",
        "factory: sessionmaker[Session]",
    ],
)
def test_the_sql_search_finds_a_planted_construct(tmp_path: Path, line: str) -> None:
    package = tmp_path / "chipwise"
    (package / "rules").mkdir(parents=True)
    (package / "store").mkdir()
    (package / "store" / "ok.py").write_text(f"{line}\n", encoding="utf-8")
    (package / "rules" / "planted.py").write_text(f"x = 1\n{line}\n", encoding="utf-8")
    assert _sql_outside_the_store(package) == [f"rules/planted.py:2: {line}"]
