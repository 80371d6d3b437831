"""``chipwise catalog refresh``: the catalog's prices rebuilt from the AWS Price List API into a file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chipwise.collect.prices import DEFAULT_OUTPUT, RefreshResult, refresh_catalog

__all__ = ["DEFAULT_OUTPUT", "RatesRefresh", "RefreshResult", "refresh_prices", "refresh_savings_plan_rates"]


def refresh_prices(
    output: Path | None, *, regions: Sequence[str], progress: Callable[[str, int, int], None] | None = None
) -> RefreshResult:
    """Fetch us-east-1's prices (and ``regions``' exact ones) and write the refreshed catalog to ``output``."""
    return refresh_catalog(output or DEFAULT_OUTPUT, regions=list(regions), progress=progress)


@dataclass(frozen=True)
class RatesRefresh:
    """What `catalog refresh` wrote of the Savings Plans rates, or why it could not."""

    output: Path
    rates: int
    api_calls: int
    env: str  # the variable that makes Chipwise read the file
    error: str | None = None


def refresh_savings_plan_rates(catalog_file: Path) -> RatesRefresh:
    """The Savings Plans rates (DescribeSavingsPlansOfferingRates) priced against ``catalog_file``'s on-demand
    prices, written beside it (issue 38)."""
    from botocore.exceptions import BotoCoreError, ClientError

    from chipwise.aws import aws_context
    from chipwise.catalog import get_catalog
    from chipwise.catalog.savings_plan_rates import RATES_FILE, RATES_FILE_ENV
    from chipwise.clock import utcnow
    from chipwise.collect.savings_plan_rates import write_rates

    path = catalog_file.with_name(RATES_FILE)
    catalog = get_catalog(catalog_file)
    try:
        client = aws_context("us-east-1").client("savingsplans")
        written = write_rates(client, catalog.price, path, utcnow().date().isoformat())
    except (ClientError, BotoCoreError) as exc:
        return RatesRefresh(path, 0, 0, RATES_FILE_ENV, error=str(exc))
    return RatesRefresh(written.output, written.rates, written.api_calls, RATES_FILE_ENV)
