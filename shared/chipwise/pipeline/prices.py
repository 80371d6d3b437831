"""``chipwise catalog refresh``: the catalog's prices rebuilt from the AWS Price List API into a file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from chipwise.collect.prices import DEFAULT_OUTPUT, RefreshResult, refresh_catalog

__all__ = ["DEFAULT_OUTPUT", "RefreshResult", "refresh_prices"]


def refresh_prices(
    output: Path | None, *, regions: Sequence[str], progress: Callable[[str, int, int], None] | None = None
) -> RefreshResult:
    """Fetch us-east-1's prices (and ``regions``' exact ones) and write the refreshed catalog to ``output``."""
    return refresh_catalog(output or DEFAULT_OUTPUT, regions=list(regions), progress=progress)
