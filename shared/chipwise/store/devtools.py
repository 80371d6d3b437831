"""Developer tooling for the schema (not used at run time)."""

from __future__ import annotations

import tempfile
from importlib import resources
from pathlib import Path

from alembic import command

from chipwise.store.session import alembic_config


def regenerate_initial_migration() -> Path:
    """Rewrite ``0001_initial`` from the models (only while nothing has been released)."""
    versions = Path(str(resources.files("chipwise.store") / "migrations" / "versions"))
    for old in versions.glob("*.py"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/empty.db"
        cfg = alembic_config(url)
        command.revision(cfg, message="initial schema", autogenerate=True, rev_id="0001_initial")
    return versions / "0001_initial_initial_schema.py"
