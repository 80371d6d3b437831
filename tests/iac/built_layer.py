"""Helpers for the tests of built artifacts: the host's Lambda architecture, ELF headers, the layer's contents."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "iac" / "layer-constraints.txt"
ELF_MACHINES = {"arm64": 0xB7, "x86_64": 0x3E}  # e_machine: EM_AARCH64, EM_X86_64


def host_arch() -> str:
    """This machine's architecture as Lambda names it."""
    return "arm64" if platform.machine().lower() in ("aarch64", "arm64") else "x86_64"


def elf_machine(path: Path) -> int | None:
    """``e_machine`` from an ELF header (None when the file is not ELF)."""
    with path.open("rb") as handle:
        header = handle.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    byteorder = "little" if header[5] == 1 else "big"
    return int.from_bytes(header[18:20], byteorder)


def install_tool(target: str) -> Path:
    """A tool from the Makefile's own venvs (``.venv/sam/bin/sam``, ``.venv/checkov/bin/checkov``), installed once."""
    subprocess.run(["make", "--no-print-directory", target], cwd=ROOT, check=True, capture_output=True)
    return ROOT / target


def pinned() -> dict[str, str]:
    """iac/layer-constraints.txt as {canonical name: version}."""
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins
