"""The import contracts, for the Lambda handlers too: ``functions/*/app.py`` are not a package, so lint-imports
cannot see them; ``make lint`` runs this check on them (``python -m chipwise_devkit.handler_imports functions``).

A handler sits above every layer of chipwise but enters it through one door: it may import
``chipwise.pipeline``, ``chipwise.edges``, ``chipwise.models``, ``chipwise.observability`` and
``chipwise.errors`` only. It never imports the database's libraries, the store, the driver, the emulator or the
development kit. Every import is read, wherever it stands in the file (inside a function or a ``TYPE_CHECKING``
block too).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

# The chipwise modules a handler may import (and their submodules).
DOORS = ("chipwise.pipeline", "chipwise.edges", "chipwise.models", "chipwise.observability", "chipwise.errors")

# Forbidden roots, each with the contract of pyproject.toml it extends to the handlers.
FORBIDDEN = {
    "sqlalchemy": "Only the store talks to the database",
    "alembic": "Only the store talks to the database",
    "psycopg": "Rows stay in the store",
    "chipwise.store": "Rows stay in the store",
    "moto": "The product never imports the emulator or the development kit",
    "chipwise_devkit": "The product never imports the emulator or the development kit",
}
LAYERS = "Layers point down: a handler enters chipwise through " + ", ".join(DOORS)


@dataclass(frozen=True, slots=True)
class Breach:
    path: Path
    line: int
    module: str
    contract: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.module}: {self.contract}"


def _within(module: str, root: str) -> bool:
    return module == root or module.startswith(root + ".")


def _imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a handler is no package: a relative import cannot work
                yield node.lineno, "." * node.level + (node.module or "")
            elif node.module == "chipwise":  # ``from chipwise import store`` names the module
                yield from ((node.lineno, f"chipwise.{alias.name}") for alias in node.names)
            elif node.module is not None:
                yield node.lineno, node.module


def breaches(path: Path) -> list[Breach]:
    """What ``path`` imports against the contracts (empty when it keeps them)."""
    found = []
    for line, module in _imports(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        contract = next((c for root, c in FORBIDDEN.items() if _within(module, root)), None)
        ours = module.startswith(".") or _within(module, "chipwise")
        if contract is None and ours and not any(_within(module, door) for door in DOORS):
            contract = LAYERS
        if contract is not None:
            found.append(Breach(path, line, module, contract))
    return found


def handlers(root: Path) -> list[Path]:
    return sorted(root.glob("*/app.py"))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(args[0] if args else "functions")
    paths = handlers(root)
    if not paths:
        print(f"no handler found under {root}/*/app.py", file=sys.stderr)
        return 2
    found = [breach for path in paths for breach in breaches(path)]
    for breach in found:
        print(breach)
    print(f"Handlers: {len(paths)} checked, {len(found)} broken import(s).")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
