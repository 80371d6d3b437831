"""Rows stay in the store: `make imports` (part of `make lint`) fails when a module above the store, or a Lambda
handler, imports what only the store may (planted in a temporary copy of the tree); no module outside ``store/``
names a table's class, and none assigns to an attribute of what a repository returned.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chipwise_devkit.handler_imports import breaches

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "shared" / "chipwise"
VENV = Path(sys.executable).parent.parent
ROWS_CONTRACT = "Rows stay in the store"
EMULATOR_CONTRACT = "The product never imports the emulator or the development kit"
DATABASE_CONTRACT = "Only the store talks to the database"


def _copy(tmp_path: Path) -> Path:
    """What `make imports` reads, under ``tmp_path``: the package, the handlers, pyproject.toml and the Makefile."""
    shutil.copytree(PACKAGE, tmp_path / "shared" / "chipwise", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "functions", tmp_path / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "Makefile"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _plant(path: Path, line: str) -> None:
    source = path.read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    assert future in source, f"{path} has no __future__ import to plant after"
    path.write_text(source.replace(future, f"{future}\n{line}\n", 1), encoding="utf-8")


def _make_imports(copy: Path) -> subprocess.CompletedProcess[str]:
    """`make imports` in the copy with this interpreter's virtualenv (never reinstalled: -o), the copy's package
    first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy / "shared"), os.environ.get("PYTHONPATH", "")])}
    installed = VENV / ".dev-installed"
    command = ["make", "--no-print-directory", f"VENV={VENV}", "-o", str(installed), "imports"]
    return subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_make_imports_passes_on_the_unmodified_tree(tmp_path: Path) -> None:
    result = _make_imports(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert "Handlers: 10 checked, 0 broken import(s)." in result.stdout


@pytest.mark.parametrize(
    ("where", "line", "contract"),
    [
        ("shared/chipwise/pipeline/evaluate.py", "import psycopg", ROWS_CONTRACT),
        ("shared/chipwise/pipeline/evaluate.py", "from chipwise.store.engine import get_engine", ROWS_CONTRACT),
        ("shared/chipwise/intake/limits.py", "from chipwise.store.tables import Finding", ROWS_CONTRACT),
        ("shared/chipwise/cli/resources.py", "from chipwise.store.tables.findings import Finding", ROWS_CONTRACT),
        ("shared/chipwise/pipeline/fanout.py", "from chipwise.store.session import session_scope", ROWS_CONTRACT),
        ("functions/scan_account/app.py", "import sqlalchemy", DATABASE_CONTRACT),
        ("functions/notify/app.py", "import moto", EMULATOR_CONTRACT),
        ("functions/intake/app.py", "import psycopg", ROWS_CONTRACT),
        ("functions/migrate/app.py", "from chipwise.store import session_scope", ROWS_CONTRACT),
        ("functions/slack_actions/app.py", "from chipwise.store.tables import Finding", ROWS_CONTRACT),
        ("functions/slack_actions/app.py", "from chipwise.remediate.runner import apply_finding", "Layers point down"),
    ],
)
def test_a_planted_import_fails_make_imports(tmp_path: Path, where: str, line: str, contract: str) -> None:
    # Given a copy of the tree with one forbidden import planted
    copy = _copy(tmp_path)
    target = copy / where
    if not target.exists():
        pytest.fail(f"{where} is gone: plant in another module of the same layer")
    _plant(target, line)
    # When make's import check reads it
    result = _make_imports(copy)
    # Then it fails, naming the contract and where
    assert result.returncode != 0, result.stdout + result.stderr
    flat = " ".join(result.stdout.split())
    assert contract in flat, result.stdout
    if where.startswith("functions/"):
        assert f"{where}:" in result.stdout
    else:
        assert "chipwise." + where.removeprefix("shared/chipwise/").removesuffix(".py").replace("/", ".") in flat


def test_the_handler_check_reads_every_import_wherever_it_stands(tmp_path: Path) -> None:
    handler = tmp_path / "app.py"
    handler.write_text(
        "from typing import TYPE_CHECKING\n"
        "from chipwise.pipeline.scan import scan_account_request\n"
        "from chipwise import store\n"
        "if TYPE_CHECKING:\n"
        "    from sqlalchemy.orm import Session\n"
        "def handler(event, context):\n"
        "    import moto.core\n"
        "    from . import helpers\n",
        encoding="utf-8",
    )
    found = [(b.line, b.module) for b in breaches(handler)]
    assert found == [(3, "chipwise.store"), (5, "sqlalchemy.orm"), (7, "moto.core"), (8, ".")]


# --- No module outside store/ names a table's class ------------------------------------------------------------

STORE_INTERNALS = ("chipwise.store.tables", "chipwise.store.base", "chipwise.store.engine", "chipwise.store.session")


def _orm_class_names() -> set[str]:
    from chipwise.store import tables

    names = set(tables.__all__)
    assert {"Finding", "BenchmarkRun", "OutboxMessage", "Scan"} <= names
    return names


def _modules_outside_the_store(package: Path) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] != "store":
            yield path.relative_to(package), ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _internal(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in STORE_INTERNALS)


def orm_names(tree: ast.Module, orm_classes: set[str]) -> list[str]:
    """Where ``tree`` imports the store's internals or a table's class, or names ``chipwise.store.tables``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if _internal(node.module):
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif node.module.startswith("chipwise.store"):
                found += [f"{node.lineno}: {node.module}.{a.name}" for a in node.names if a.name in orm_classes]
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if _internal(a.name)]
        elif isinstance(node, ast.Attribute) and ast.unparse(node).startswith("chipwise.store.tables"):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_the_store_names_a_table_class() -> None:
    classes = _orm_class_names()
    found = {str(path): orm_names(tree, classes) for path, tree in _modules_outside_the_store(PACKAGE)}
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize(
    "line",
    [
        "from chipwise.store.tables import Finding",
        "from chipwise.store.tables.findings import Finding as F",
        "import chipwise.store.tables",
        "from chipwise.store.session import session_scope",
        "from chipwise.store import Finding",
        "x = chipwise.store.tables.Finding",
    ],
)
def test_the_table_class_search_finds_a_planted_name(line: str) -> None:
    assert orm_names(ast.parse(line), {"Finding"}) != []


def test_the_table_class_search_lets_records_and_repositories_through() -> None:
    tree = ast.parse(
        "from chipwise.store import Session, session_scope\n"
        "from chipwise.store.repositories.findings import FindingRepository, FindingRecord\n"
    )
    assert orm_names(tree, {"Finding"}) == []


# --- Nothing outside store/ assigns to an attribute of what a repository returned ------------------------------


def _repository_names(tree: ast.Module) -> set[str]:
    """The names a module imports from ``chipwise.store.repositories`` (classes and functions)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chipwise.store.repositories"):
            names |= {a.asname or a.name for a in node.names}
    return names


def _calls_the_store(value: ast.AST, repositories: set[str], held: set[str]) -> bool:
    """Whether ``value`` is (or iterates, or indexes) a call on a repository or on a name bound to one."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            root = node.func
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name) and (root.id in repositories or root.id in held):
                return True
    return False


def _bound(target: ast.AST) -> set[str]:
    """The names an assignment target binds (``a``, ``a, b``; not ``a.x`` nor ``a[k]``)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound(t) for t in target.elts))
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return set()


def _row_parameters(scope: ast.FunctionDef | ast.AsyncFunctionDef, orm_classes: set[str]) -> set[str]:
    """The parameters annotated with a table's class (``run: BenchmarkRun``, ``f: Finding | None``)."""
    arguments = scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
    return {
        a.arg
        for a in arguments
        if a.annotation is not None and orm_classes & {n.id for n in ast.walk(a.annotation) if isinstance(n, ast.Name)}
    }


def _held(scope: ast.FunctionDef | ast.AsyncFunctionDef, repositories: set[str], orm_classes: set[str]) -> set[str]:
    """The names in ``scope`` that hold rows, repository instances or what they returned."""
    held = _row_parameters(scope, orm_classes)
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _calls_the_store(node.value, repositories, held):
                held |= set().union(*(_bound(t) for t in targets))
        elif isinstance(node, (ast.For, ast.comprehension)) and _calls_the_store(node.iter, repositories, held):
            held |= _bound(node.target)
    return held


def _assigned(node: ast.AST) -> list[ast.AST]:
    """What ``node`` assigns to (``setattr(x, ...)`` as ``x.?``)."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
        return [ast.Attribute(value=node.args[0], attr="?", ctx=ast.Store())]
    return []


def stored_attributes(tree: ast.Module, orm_classes: set[str]) -> list[str]:
    """Attribute assignments (``x.a = ...``, ``x.a += ...``, ``a.x, a.y = ...``, ``setattr(x, ...)``) to a name
    that holds a row: bound from a repository call (or a loop over one) or a table's class, or a parameter
    annotated with one."""
    repositories = _repository_names(tree) | orm_classes
    found = []
    for scope in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        held = _held(scope, repositories, orm_classes)
        for node in ast.walk(scope):
            for target in _assigned(node):
                for attribute in (
                    n for n in ast.walk(target) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                ):
                    if isinstance(attribute.value, ast.Name) and attribute.value.id in held:
                        found.append(f"{getattr(node, 'lineno', 0)}: {ast.unparse(attribute)}")
    return found


def test_nothing_outside_the_store_assigns_to_what_a_repository_returned() -> None:
    classes = _orm_class_names()
    found = {str(path): stored_attributes(tree, classes) for path, tree in _modules_outside_the_store(PACKAGE)}
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize(
    "body",
    [
        "finding = FindingRepository(session).get(finding_id)\n    finding.status = 'withdrawn'",
        "repo = FindingRepository(session)\n    f = repo.get(finding_id)\n    f.summary += '!'",
        "for run in runs_for(session, finding_id):\n        run.status = 'failed'",
        "run = runs_for(session, finding_id)[0]\n    setattr(run, 'status', 'failed')",
        "run = BenchmarkRun(id='r')\n    run.status = 'failed'",
        "run = runs_for(session, finding_id)[0]\n    run.status, run.job_id = 'failed', None",
    ],
)
def test_the_assignment_search_finds_a_planted_change(body: str) -> None:
    source = (
        "from chipwise.store.repositories.findings import FindingRepository\n"
        "from chipwise.store.repositories.benchmarks import runs_for\n"
        f"def change(session, finding_id):\n    {body}\n"
        "def mark(run: BenchmarkRun | None) -> None:\n    run.status = 'failed'\n"
    )
    assert stored_attributes(ast.parse(source), {"BenchmarkRun"}) != []


def test_the_assignment_search_lets_local_objects_through() -> None:
    source = (
        "from chipwise.store.repositories.findings import FindingRepository\n"
        "def change(session, report):\n"
        "    report.planned = FindingRepository(session).count()\n"
        "    total = Totals()\n"
        "    total.calls = 3\n"
    )
    assert stored_attributes(ast.parse(source), {"BenchmarkRun"}) == []


def test_the_rows_contract_covers_every_module_the_database_contract_does() -> None:
    import tomllib

    document = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = document["tool"]["importlinter"]["contracts"]
    (database,) = [c for c in contracts if c["name"].startswith(DATABASE_CONTRACT)]
    (rows,) = [c for c in contracts if c["name"].startswith(ROWS_CONTRACT)]
    assert rows["source_modules"] == database["source_modules"]
    assert {"chipwise.store.tables", "chipwise.store.engine", "chipwise.store.session", "psycopg"} <= set(
        rows["forbidden_modules"]
    )
