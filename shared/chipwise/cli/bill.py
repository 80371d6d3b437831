"""``chipwise bill``: ingest the bill (an AWS Data Exports export) and show what it says."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import typer

from chipwise.cli.common import out, print_json, settings

bill_app = typer.Typer(help="The bill: AWS Data Exports (CUR 2.0, FOCUS 1.2) as the cost source.", no_args_is_help=True)


@bill_app.command("ingest")
def ingest_command(
    uri: str | None = typer.Option(None, "--uri", help="s3://bucket/prefix/export-name (default: data_export_uri)."),
    engine: str | None = typer.Option(None, "--engine", help="duckdb or athena (default: bill_engine)."),
    period: list[str] = typer.Option(
        [], "--period", help="Billing period YYYY-MM (repeatable; default: the periods of the scan window)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print what was stored as JSON."),
) -> None:
    """Read the export's billing periods (manifest first) and store them, each replacing its earlier delivery."""
    from chipwise.aws import aws_context
    from chipwise.clock import utcnow
    from chipwise.errors import ConfigError
    from chipwise.pipeline._store import store_factory
    from chipwise.pipeline.bill_ingest import athena_table, ingest_bill, window_periods
    from chipwise.presentation import plural

    cfg = settings()
    export = uri or cfg.data_export_uri
    if not export:
        raise ConfigError("no export: pass --uri s3://bucket/prefix/export-name or set data_export_uri")
    chosen = engine or cfg.bill_engine
    if chosen not in ("duckdb", "athena"):
        raise ConfigError(f"--engine {chosen}: duckdb or athena")
    athena = athena_table(cfg)
    if chosen == "athena" and athena is None:
        raise ConfigError("the athena engine needs athena_database and athena_table (and athena_workgroup)")
    factory = store_factory()
    periods = list(period) or window_periods(utcnow(), cfg.lookback_days)
    aws = aws_context(cfg.region) if export.startswith("s3://") or chosen == "athena" else None
    stored = ingest_bill(
        aws,
        factory,
        uri=export,
        periods=periods,
        engine="athena" if chosen == "athena" else "duckdb",
        athena=athena,
    )
    if json_output:
        print_json([s.__dict__ for s in stored])
        return
    for s in stored:
        out.print(
            f"{s.billing_period}: {s.table_name} via {s.engine}, {s.line_items:,} line items → {s.resources:,} "
            f"resource-days, {plural(s.commitments, 'commitment')}, {plural(s.unattributed, 'unattributed line')}"
        )


def _money(value: Decimal) -> str:
    return f"${value:,.2f}"


@bill_app.command("show")
def show_command(
    account: str | None = typer.Option(None, "--account", help="One account (default: every account)."),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Spend by account, service and resource; commitments with coverage, utilisation and end dates."""
    from rich.table import Table

    from chipwise.pipeline.bill_view import stored_bill

    stored = stored_bill(account)
    lines, commitments, apart, periods = stored.lines, stored.commitments, stored.unattributed, stored.periods
    by_account: dict[str, Decimal] = {}
    by_service: dict[tuple[str, str], Decimal] = {}
    by_team: dict[str, Decimal] = {}
    for line in lines:
        by_account[line.account_id] = by_account.get(line.account_id, Decimal(0)) + line.effective_cost
        key = (line.account_id, line.service)
        by_service[key] = by_service.get(key, Decimal(0)) + line.effective_cost
        team = line.team or "(no team tag)"
        by_team[team] = by_team.get(team, Decimal(0)) + line.effective_cost
    document: dict[str, Any] = {
        "billing_periods": periods,
        "by_account": {k: str(v) for k, v in sorted(by_account.items())},
        "by_service": [
            {"account_id": a, "service": s, "effective_usd": str(v)} for (a, s), v in sorted(by_service.items())
        ],
        "by_team": {k: str(v) for k, v in sorted(by_team.items())},
        "resources": [
            {
                "account_id": x.account_id,
                "service": x.service,
                "resource_id": x.resource_id,
                "instance_type": x.instance_type,
                "team": x.team,
                "effective_usd": str(x.effective_cost),
                "public_on_demand_usd": str(x.public_on_demand_cost),
                "usage_hours": str(x.usage_hours),
            }
            for x in lines
        ],
        "commitments": [
            {
                "billing_period": period,
                "arn": c.arn,
                "account_id": c.account_id,
                "kind": c.kind,
                "offering_type": c.offering_type,
                "family": c.family,
                "hourly_commitment_usd": None if c.hourly_commitment is None else str(c.hourly_commitment),
                "end_date": c.end_date.isoformat() if c.end_date else None,
                "used_usd": str(c.used_cost),
                "unused_usd": str(c.unused_cost),
                "accelerator_coverage": _ratio(c.covered_accelerator_hours, c.accelerator_hours),
                "utilisation": _ratio(c.used_cost, c.used_cost + c.unused_cost),
            }
            for c, period in commitments
        ],
        "unattributed": [
            {
                "account_id": u.account_id,
                "region": u.region,
                "category": u.category,
                "reason": u.reason,
                "usd": str(u.amount),
            }
            for u in apart
        ],
    }
    if json_output:
        print_json(document)
        return
    if not periods:
        out.print("no bill stored: run `chipwise bill ingest`")
        return
    out.print(f"billing periods: {', '.join(periods)}")
    spend = Table(title="effective spend by account and service", title_justify="left")
    for column in ("account", "service", "effective"):
        spend.add_column(column)
    for (a, s), v in sorted(by_service.items()):
        spend.add_row(a, s, _money(v))
    out.print(spend)
    teams = Table(title="by team (cost allocation tags)", title_justify="left")
    teams.add_column("team")
    teams.add_column("effective")
    for team, v in sorted(by_team.items(), key=lambda kv: -kv[1]):
        teams.add_row(team, _money(v))
    out.print(teams)
    top = Table(title="resources (largest first)", title_justify="left")
    for column in ("account", "resource", "type", "team", "effective", "public on-demand", "hours"):
        top.add_column(column)
    for x in lines[:20]:
        top.add_row(
            x.account_id, x.resource_id, x.instance_type or "", x.team or "", _money(x.effective_cost),
            _money(x.public_on_demand_cost), f"{x.usage_hours:,.1f}",
        )  # fmt: skip
    out.print(top)
    held = Table(title="commitments", title_justify="left")
    for column in ("period", "commitment", "family", "$/h", "accelerator coverage", "utilisation", "ends"):
        held.add_column(column, overflow="fold", min_width=10 if column in ("period", "ends") else None)
    for c in document["commitments"]:
        held.add_row(
            c["billing_period"], c["arn"].rsplit("/", 1)[-1], c["family"] or c["offering_type"] or c["kind"],
            c["hourly_commitment_usd"] or "", _pct(c["accelerator_coverage"]), _pct(c["utilisation"]),
            c["end_date"] or "",
        )  # fmt: skip
    out.print(held)


def _ratio(part: Decimal, whole: Decimal) -> str | None:
    return str((part / whole).quantize(Decimal("0.0001"))) if whole > 0 else None


def _pct(value: str | None) -> str:
    return f"{Decimal(value) * 100:.1f}%" if value is not None else "–"


def register(app: typer.Typer) -> None:
    app.add_typer(bill_app, name="bill")
