"""The layer as deployed: ``make build-ChipwiseLayer`` with the Makefile's defaults, whatever this machine is, holds
native code for the template's architecture only, stays under 80 MB unzipped, carries exactly the pinned runtime
(no CLI, no emulator, no dev tools) and every template, migration and data file of the package."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from built_layer import ELF_MACHINES, ROOT, elf_machine, pinned
from cfnlint.decode import cfn_yaml
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

TEMPLATE = ROOT / "iac" / "template.yaml"
PACKAGE = ROOT / "shared" / "chipwise"
MAX_UNZIPPED_BYTES = 80_000_000


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layer built as ``sam build`` builds it (no LAYER_ARCH: the Makefile's default)."""
    artifacts = tmp_path_factory.mktemp("layer")
    env = {k: v for k, v in os.environ.items() if k != "LAYER_ARCH"} | {"ARTIFACTS_DIR": str(artifacts)}
    done = subprocess.run(
        ["make", "--no-print-directory", "build-ChipwiseLayer"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return artifacts / "python"


def test_every_native_extension_is_for_the_template_s_architecture(layer: Path) -> None:
    (architecture,) = cfn_yaml.loads(TEMPLATE.read_text(), str(TEMPLATE))["Globals"]["Function"]["Architectures"]
    machines = {path.relative_to(layer): elf_machine(path) for path in layer.rglob("*") if path.is_file()}
    native = {path: machine for path, machine in machines.items() if machine is not None}
    assert len(native) > 10  # pydantic-core, psycopg-binary and its libraries, SQLAlchemy, MarkupSafe, wrapt...
    wrong = {str(path): hex(machine) for path, machine in native.items() if machine != ELF_MACHINES[architecture]}
    assert wrong == {}


def test_the_layer_is_under_80_mb_unzipped(layer: Path) -> None:
    size = sum(path.stat().st_size for path in layer.rglob("*") if path.is_file())
    assert size < MAX_UNZIPPED_BYTES, f"{size / 1e6:.1f} MB"


def test_the_layer_holds_exactly_the_pinned_runtime(layer: Path) -> None:
    installed = {}
    for info in layer.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").rpartition("-")
        installed[canonicalize_name(name)] = version
    assert installed.pop("chipwise")
    assert installed == pinned()
    assert not (layer / "chipwise" / "cli").exists()  # the command line is not deployed
    # nor any development machinery: no devkit, no emulator, no demo, no moto
    for dev in ("chipwise_devkit", "chipwise/emulator", "chipwise/demo", "moto", "werkzeug", "flask"):
        assert not (layer / dev).exists(), dev
    assert all(p.is_relative_to(layer / "chipwise") for p in layer.rglob("*.py"))  # dependencies: bytecode only


def test_every_template_migration_and_data_file_is_in_the_layer(layer: Path) -> None:
    # Every file of templates/, and every non-Python file of the deployed package (data, the migrations' template,
    # py.typed); the command line, the demo and the emulator are not deployed
    wanted = {Path("chipwise/templates") / p.relative_to(ROOT / "templates") for p in (ROOT / "templates").rglob("*")}
    wanted |= {
        Path("chipwise") / p.relative_to(PACKAGE)
        for p in PACKAGE.rglob("*")
        if p.is_file()
        and p.suffix not in (".py", ".pyc")
        and "__pycache__" not in p.parts
        and p.relative_to(PACKAGE).parts[0] not in ("cli", "demo", "emulator")
    }
    # And every migration, with its source (Alembic reads the files)
    wanted |= {Path("chipwise") / p.relative_to(PACKAGE) for p in (PACKAGE / "store" / "migrations").rglob("*.py")}
    missing = sorted(str(p) for p in wanted if not (layer / p).exists())
    assert missing == []
