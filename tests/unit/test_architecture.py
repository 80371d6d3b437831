"""The shape of the package: the import contract holds, names every subpackage, and fails on a wrong order;
pure layers load without a database or AWS library; no two classes share a name."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "shared" / "chipwise"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# Modules deliberately outside the layers: the package root and the host-side agent (its own contract).
OUTSIDE_LAYERS = {"neuron_agent", "py.typed"}


def _contracts() -> list[dict[str, object]]:
    document = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = document["tool"]["importlinter"]["contracts"]
    return contracts


def _layers() -> list[str]:
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    names = layers["layers"]
    assert isinstance(names, list)
    return names


def _run_lint_imports(config: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(LINT_IMPORTS)] + (["--config", str(config)] if config else [])
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_the_import_contract_holds() -> None:
    result = _run_lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_module_without_a_layer_breaks_the_contract(tmp_path: Path) -> None:
    # Given the contract with one layer line removed (exhaustive: every module of chipwise must have a layer)
    layers = [layer for layer in _layers() if layer != "analyse"]
    config = tmp_path / "contract.toml"
    layer_lines = ",\n".join(f'  "{layer}"' for layer in layers)
    config.write_text(
        '[tool.importlinter]\nroot_package = "chipwise"\n\n[[tool.importlinter.contracts]]\nname = "missing"\n'
        'type = "layers"\ncontainers = ["chipwise"]\nexhaustive = true\nexhaustive_ignores = ["neuron_agent"]\n'
        f"layers = [\n{layer_lines},\n]\n",
        encoding="utf-8",
    )
    result = _run_lint_imports(config)
    assert result.returncode != 0
    assert "not listed as layers" in result.stdout and "chipwise.analyse" in result.stdout


def test_every_subpackage_has_a_layer() -> None:
    named = {part.strip().removeprefix("chipwise.") for line in _layers() for part in line.split("|")}
    present = {p.stem for p in PACKAGE.iterdir() if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
    present -= {"__init__"} | OUTSIDE_LAYERS
    assert present - named == set(), "add these to the layers contract in pyproject.toml"
    assert named - present == set(), "the contract names modules that do not exist"


def test_a_wrong_order_breaks_the_contract(tmp_path: Path) -> None:
    # Given the contract with rules placed above the planner and act (rules import nothing of theirs, but act
    # and the pipeline import rules: those imports now point up)
    layers = _layers()
    swapped = [layer for layer in layers if layer != "rules"]
    swapped.insert(1, "rules")
    config = tmp_path / "contract.toml"
    layer_lines = ",\n".join(f'  "{layer}"' for layer in swapped)
    config.write_text(
        '[tool.importlinter]\nroot_package = "chipwise"\n\n[[tool.importlinter.contracts]]\nname = "swapped"\n'
        f'type = "layers"\ncontainers = ["chipwise"]\nlayers = [\n{layer_lines},\n]\n',
        encoding="utf-8",
    )
    result = _run_lint_imports(config)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    assert "is not allowed to import chipwise.rules" in result.stdout


@pytest.mark.parametrize(
    "module",
    ["chipwise.rules.builtin", "chipwise.rules.engine", "chipwise.analyse.profiles", "chipwise.plan.planner"],
)
def test_pure_layers_load_without_database_or_aws_libraries(module: str) -> None:
    script = (
        "import importlib, pkgutil, sys\n"
        f"m = importlib.import_module({module!r})\n"
        "for info in pkgutil.walk_packages(getattr(m, '__path__', []), m.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        "loaded = sorted(n for n in ('sqlalchemy', 'boto3', 'botocore', 'chipwise.settings') if n in sys.modules)\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == ""


def test_no_two_classes_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(path.relative_to(PACKAGE)))
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert shared == {}


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other (strongly connected components of more than one module)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(imports.get(module, ())):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(imports):
        if module not in order:
            visit(module)
    return groups


def test_cycles_finds_a_circle_and_no_line() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "d": {"a"}}) == []


def test_no_two_modules_of_chipwise_import_each_other() -> None:
    import grimp

    # Every import counts, also those inside functions and under TYPE_CHECKING (grimp reads them all)
    graph = grimp.build_graph("chipwise", cache_dir=None)
    imports = {
        module: {m for m in graph.find_modules_directly_imported_by(module) if m.startswith("chipwise")}
        for module in graph.modules
        if module.startswith("chipwise")
    }
    assert len(imports) > 100
    assert _cycles(imports) == []


def _local_imports(directory: Path) -> dict[str, set[str]]:
    """For the scripts of ``directory`` (run with the directory on the path): which of them each one imports,
    at any depth (in functions, under TYPE_CHECKING)."""
    names = {path.stem for path in directory.glob("*.py")}
    imports: dict[str, set[str]] = {}
    for path in directory.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
        imports[path.stem] = found & names - {path.stem}
    return imports


def test_the_benchmark_container_scripts_do_not_import_each_other() -> None:
    imports = _local_imports(ROOT / "iac" / "benchmark")
    assert imports["entrypoint"] >= {"harness", "neuron_runners"}  # the check sees function-level imports
    assert _cycles(imports) == []


def test_the_complexity_gate_fails_a_function_with_thirteen_branches(tmp_path: Path) -> None:
    # Given a function of 13 branches and one of 51 statements, checked with the project's ruff settings
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(12))
    statements = "".join(f"    y{i} = {i}\n" for i in range(51))
    module = tmp_path / "planted.py"
    module.write_text(f"def branchy(x: int) -> int:\n{branches}    return -1\n\n\ndef long() -> None:\n{statements}")
    ruff = Path(sys.executable).with_name("ruff")
    command = [str(ruff), "check", "--config", str(ROOT / "pyproject.toml"), "--select", "C901,PLR0915", str(module)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert "C901 `branchy` is too complex (13 > 12)" in result.stdout
    assert "PLR0915 Too many statements (51 > 50)" in result.stdout
    # and the project itself selects both (make lint runs `ruff check` on the sources)
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert {"C90", "PLR0915"} <= set(lint["select"]) and lint["mccabe"]["max-complexity"] == 12
