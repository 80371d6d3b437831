"""``chipwise catalog``: the instance catalog, its prices and their sources."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from chipwise.cli.common import err, out, progress

if TYPE_CHECKING:
    from rich.progress import TaskID

    from chipwise.catalog import Catalog, InstanceType
    from chipwise.pipeline.prices import RefreshResult

DEFAULT_OUTPUT = Path("chipwise-catalog.json")  # the file `catalog refresh` writes unless told (collect.prices's)

app = typer.Typer(help="The instance catalog: types, prices and their sources.", no_args_is_help=True)


def _accelerators(item: InstanceType) -> str:
    """``8 × B300``; a fractional-GPU type's share of one (``0.125 × L4``)."""
    if not item.accelerator:
        return "–"
    return f"{item.accelerator_fraction or item.accelerator_count} × {item.accelerator}"


def _cores(item: InstanceType) -> str:
    if not item.neuron_cores:
        return "–"
    if item.logical_neuron_cores != item.neuron_cores:
        return f"{item.neuron_cores} ({item.logical_neuron_cores} logical)"
    return str(item.neuron_cores)


def _memory(item: InstanceType) -> str:
    accel = f"{item.accelerator_memory_gib} GiB / " if item.accelerator_memory_gib else ""
    return f"{accel}{item.vcpu} vCPU, {item.memory_gib} GiB"


def _price(price: Decimal | None, estimate: bool) -> str:
    if price is None:
        return "[dim]n/a[/]"
    text = f"{price.normalize():f}"
    return f"≈{text}" if estimate else text


def _rows(catalog: Catalog, family: str | None, sagemaker: bool) -> list[InstanceType]:
    from chipwise.errors import InvalidInput

    if family is None:
        items = [t for t in catalog.all() if t.sagemaker == sagemaker]
        return sorted(items, key=lambda t: (t.platform, t.family, t.price_usd_per_hour or Decimal("Infinity")))
    items = catalog.family(family, sagemaker=sagemaker)
    if not items:
        known = ", ".join(catalog.families())
        raise InvalidInput(f"no instance family {family!r} in the catalog (known: {known})")
    return items


@app.command("show")
def show_command(
    family: str | None = typer.Argument(None, help="A family such as inf2, trn1 or g5 (default: every type)."),
    sagemaker: bool = typer.Option(False, "--sagemaker", help="Show the SageMaker ml.* types instead of EC2."),
    region: str = typer.Option("us-east-1", "--region", help="Price in this region (multiplier or refreshed)."),
) -> None:
    """List instance types with accelerators, NeuronCores, memory, $/hour and the price's source."""
    from rich.table import Table

    from chipwise.catalog import get_catalog
    from chipwise.errors import InvalidInput

    catalog = get_catalog()
    region = region.strip().lower()
    if catalog.regions.get(region) is None and region not in catalog.document.regional_prices:
        raise InvalidInput(
            f"--region {region!r} is not a region the catalog prices: `chipwise catalog regions` lists the "
            f"{len(catalog.regions.all())} it knows"
        )
    rows = _rows(catalog, family, sagemaker)
    table = Table(title=f"Chipwise catalog ({region}, on-demand Linux, as of {catalog.as_of})", title_justify="left")
    table.add_column("type", no_wrap=True)
    for column in ("platform", "accelerators", "NeuronCores", "memory"):
        table.add_column(column)
    table.add_column("$/h", justify="right")
    table.add_column("confidence")
    table.add_column("source")
    used: set[str] = set()
    for item in rows:
        price = catalog.price(item.name, region)
        regional = region.strip().lower() != catalog.region
        estimate = item.price_is_estimate or (regional and price is not None)
        confidence = "derived (region)" if regional and price is not None else item.price_confidence
        source = item.price_source or "–"
        if item.price_source:
            used.add(item.price_source)
        table.add_row(
            item.name,
            item.platform,
            _accelerators(item),
            _cores(item),
            _memory(item),
            _price(price, estimate),
            confidence,
            source,
        )
    out.print(table)
    out.print(
        "confidence: verified (AWS Price List or a table matching it), single (one public source), derived (computed: "
        "SageMaker premium or regional multiplier, ≈), none (n/a: never the basis of a saving).",
        highlight=False,
        soft_wrap=True,
    )
    for item in rows:
        if item.price_note and item.price_confidence in ("derived", "none"):
            out.print(f"[bold]{item.name}[/]: {item.price_note}", highlight=False, soft_wrap=True)
    for code in sorted(used):
        src = catalog.sources[code]
        link = f" {src.url}" if src.url else ""
        out.print(
            f"[bold]{code}[/] ({src.as_of}, {src.confidence}): {src.citation}{link}", highlight=False, soft_wrap=True
        )


@app.command("regions")
def regions_command() -> None:
    """List the regions the catalog prices: code, Price List location, multiplier against us-east-1, source."""
    from rich.table import Table

    from chipwise.catalog import get_catalog

    catalog = get_catalog()
    table = Table(title=f"{len(catalog.regions.all())} regions (prices against {catalog.region})", title_justify="left")
    for column in ("region", "location", "multiplier", "source"):
        table.add_column(column)
    for item in sorted(catalog.regions.all(), key=lambda r: r.code):
        multiplier = "1" if item.code == catalog.region else item.multiplier
        table.add_row(
            item.code, item.location, "unknown" if multiplier is None else f"{multiplier}", item.source or "–"
        )
    out.print(table)


def _summary(result: RefreshResult) -> None:
    from chipwise.catalog.instances import CATALOG_FILE_ENV

    for region in result.regions:
        missing = result.missing.get(region, [])
        line = f"{region}: {result.updated.get(region, 0)} prices from the Price List API"
        if missing:
            shown = ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
            line += f"; kept the previous figure for {len(missing)} ({shown})"
        err.print(line, highlight=False)
    err.print(f"{result.api_calls} Price List requests")
    out.print(f"[green]wrote {result.output}[/] (as of {result.as_of})")
    err.print(f"use it with: export {CATALOG_FILE_ENV}={result.output.resolve()}", highlight=False, soft_wrap=True)


@app.command("refresh")
def refresh_command(
    output: Path = typer.Option(DEFAULT_OUTPUT, "--output", "-o", help="Where to write the refreshed catalog."),
    regions: list[str] = typer.Option(
        [],
        "--region",
        metavar="REGION",
        help="Also fetch exact prices for this region (repeatable); us-east-1 is always fetched.",
    ),
) -> None:
    """Rebuild the catalog's prices from the AWS Price List API (needs pricing:GetProducts)."""
    from chipwise.pipeline.prices import refresh_prices

    bar = progress()  # started at the first price, so a failure before it prints nothing but the error
    tasks: dict[str, TaskID] = {}

    def report(region: str, done: int, total: int) -> None:
        if not tasks:
            bar.start()
        if region not in tasks:
            tasks[region] = bar.add_task(f"prices {region}", total=total)
        bar.update(tasks[region], completed=done)

    try:
        result = refresh_prices(output, regions=regions, progress=report)
    finally:
        if tasks:
            bar.stop()
    _summary(result)
    _savings_plan_rates(result.output)


def _savings_plan_rates(catalog_file: Path) -> None:
    """The Savings Plans rates beside the catalog (issue 38); a failure says why and leaves the catalog written."""
    from chipwise.pipeline.prices import refresh_savings_plan_rates

    rates = refresh_savings_plan_rates(catalog_file)
    if rates.error is not None:
        err.print(f"Savings Plans rates not refreshed: {rates.error}", highlight=False, markup=False)
        return
    out.print(f"[green]wrote {rates.output}[/] ({rates.rates} plan rates, {rates.api_calls} Savings Plans requests)")
    err.print(f"use it with: export {rates.env}={rates.output.resolve()}", highlight=False, soft_wrap=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="catalog")
