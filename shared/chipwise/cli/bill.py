"""``chipwise bill``: ingest the bill (an AWS Data Exports export) and show what it says."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import typer

from chipwise.cli import common
from chipwise.cli.common import more_line, out, print_json, row_limit, settings

if TYPE_CHECKING:
    from chipwise.pipeline import bill_view as bill_store

bill_app = typer.Typer(
    help="The bill: AWS exports (CUR 2.0, FOCUS 1.0/1.2 with AWS columns, legacy CUR) as the cost source.",
    no_args_is_help=True,
)


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
            f"{s.billing_period} (payer {s.payer_account_id}): {s.table_name} ({s.data_format}) via {s.engine}, "
            f"{s.line_items:,} line items → {s.resources:,} resource-days, {s.service_costs:,} service totals, "
            f"{plural(s.commitments, 'commitment')}, {plural(s.unattributed, 'unattributed line')}",
            markup=False,
            highlight=False,
            soft_wrap=True,  # a long export URI stays whole (it is copied from here)
        )
        if s.other_providers:
            out.print(f"  {not_read(s.other_providers)}", markup=False)


def _money(value: Decimal) -> str:
    return f"${value:,.2f}"


def not_read(providers: dict[str, int]) -> str:
    """Rows of other clouds in a FOCUS file: "n rows of Microsoft, Oracle: not read"."""
    return f"{sum(providers.values()):,} rows of {', '.join(sorted(providers))}: not read"


@bill_app.command("show")
def show_command(
    account: common.AccountFilter = None,
    team: common.TeamFilter = None,
    region: common.RegionFilter = None,
    limit: common.LimitOption = None,
    json_output: bool = typer.Option(False, "--json", help="Print as JSON (written as it is read)."),
    json_lines: bool = typer.Option(False, "--lines", help="Print JSON lines: one per resource, then the totals."),
    top: int | None = typer.Option(None, "--top", min=0, hidden=True, help="The same as --limit (older name)."),
) -> None:
    """Spend by account, service and resource; commitments with coverage, utilisation and end dates; which export
    each billing period came from. Resources are streamed from the store, never held all at once."""
    from chipwise.pipeline import bill_view as bill_store

    common.check_account_id(account)
    common.check_region(region)
    cfg = settings()
    with bill_store.reading() as session:
        stored = bill_store.stored_periods(session)
        periods = [_period(p) for p in stored]
        commitments = [_commitment(c, period) for c, period in bill_store.commitments(session, account)]
        # what no resource carries has no team: a team's view is its resources' spend alone
        unattributed = [] if team is not None else bill_store.unattributed(session, account, region)
        apart = [_unattributed(u) for u in unattributed]
        services = [] if team is not None else bill_store.service_costs(session, account, region)
        totals = _Totals(services)
        keys = cfg.team_tag_keys
        if json_output or json_lines:  # every line streamed, summed as it passes
            spend = bill_store.iter_spend(session, account, keys, region=region, team=team)
            most = row_limit(limit if limit is not None else top, None)
            _stream_json((totals.add(x) for x in spend), most, totals, periods, commitments, apart, as_lines=json_lines)
            return
        # a table: the database sums every line and cuts the largest; the other lines never reach Python
        most = row_limit(limit if limit is not None else top)
        shown, groups = bill_store.spend_table(session, account, keys, region=region, team=team, limit=most)
        for group in groups:
            totals.add_group(group)
    if not periods:
        out.print("no bill stored: run `chipwise bill ingest`")
        return
    _print_show(periods, totals, shown, commitments, team)


def _print_show(
    periods: list[dict[str, Any]],
    totals: _Totals,
    shown: list[bill_store.SpendLine],
    commitments: list[dict[str, Any]],
    team: str | None,
) -> None:
    from rich.table import Table

    for p in periods:
        out.print(
            f"{p['billing_period']} (payer {p['payer_account_id'] or 'unknown'}): {p['table']} ({p['data_format']}) "
            f"from {p['export_uri']}, {p['line_items']:,} line items",
            markup=False,
            highlight=False,
            soft_wrap=True,  # a long export URI stays whole (it is copied from here)
        )
        if p["not_read"]:
            out.print(f"  {not_read(p['not_read'])}", markup=False)
    spend = Table(title="effective spend by account and service", title_justify="left")
    for column in ("account", "service", "effective"):
        spend.add_column(column)
    for (a, svc), v in sorted(totals.by_service.items()):
        spend.add_row(a, svc, _money(v))
    out.print(spend)
    teams = Table(title="by team (cost allocation tags)", title_justify="left")
    teams.add_column("team")
    teams.add_column("effective")
    for name, v in sorted(totals.by_team.items(), key=lambda kv: -kv[1]):
        teams.add_row(name, _money(v))
    out.print(teams)
    of_team = f" of team {team}" if team is not None else ""
    biggest = Table(
        title=f"resources{of_team} (largest first, {len(shown)} of {totals.resources:,})", title_justify="left"
    )
    for column in ("account", "resource", "type", "team", "effective", "public on-demand", "hours"):
        biggest.add_column(column)
    for x in shown:
        biggest.add_row(
            x.account_id, x.resource_id, x.instance_type or "", x.team or "", _money(x.effective_cost),
            _money(x.public_on_demand_cost), f"{x.usage_hours:,.1f}",
        )  # fmt: skip
    out.print(biggest)
    rest = more_line(len(shown), totals.resources, "resource", "--limit 0, --lines or --json")
    if rest is not None:
        out.print(rest, highlight=False, markup=False, soft_wrap=True)
    if team is not None:
        out.print(f"totals of team {team}'s resources only (the services Chipwise does not inventory carry no team)")
    held = Table(title="commitments", title_justify="left")
    for column in ("period", "commitment", "family", "$/h", "accelerator coverage", "utilisation", "ends"):
        held.add_column(column, overflow="fold", min_width=10 if column in ("period", "ends") else None)
    for c in commitments:
        held.add_row(
            c["billing_period"], c["arn"].rsplit("/", 1)[-1], c["family"] or c["offering_type"] or c["kind"],
            c["hourly_commitment_usd"] or "", _pct(c["accelerator_coverage"]), _pct(c["utilisation"]),
            c["end_date"] or "",
        )  # fmt: skip
    out.print(held)


class _Totals:
    """Spend summed as resources stream past: per account, per account and service, per team; the services
    Chipwise does not inventory count in the account and service totals."""

    def __init__(self, services: list[bill_store.StoredServiceCost]) -> None:
        self.by_account: dict[str, Decimal] = {}
        self.by_service: dict[tuple[str, str], Decimal] = {}
        self.by_team: dict[str, Decimal] = {}
        self.resources = 0
        self.services = services
        for c in services:
            self._count(c.account_id, c.service, c.effective_cost)

    def _count(self, account: str, service: str, amount: Decimal) -> None:
        self.by_account[account] = self.by_account.get(account, Decimal(0)) + amount
        self.by_service[(account, service)] = self.by_service.get((account, service), Decimal(0)) + amount

    def add_group(self, group: bill_store.SpendTotal) -> None:
        """The database's sum of a group of lines (account, service, team), as :meth:`add` of each would count it."""
        self.resources += group.resources
        self._count(group.account_id, group.service, group.effective_cost)
        team = group.team or "(no team tag)"
        self.by_team[team] = self.by_team.get(team, Decimal(0)) + group.effective_cost

    def add(self, line: bill_store.SpendLine) -> bill_store.SpendLine:
        self.resources += 1
        self._count(line.account_id, line.service, line.effective_cost)
        team = line.team or "(no team tag)"  # the resources' teams (the services' totals have none)
        self.by_team[team] = self.by_team.get(team, Decimal(0)) + line.effective_cost
        return line

    def document(self) -> dict[str, Any]:
        return {
            "by_account": {k: str(v) for k, v in sorted(self.by_account.items())},
            "by_service": [
                {"account_id": a, "service": s, "effective_usd": str(v)}
                for (a, s), v in sorted(self.by_service.items())
            ],
            "by_team": {k: str(v) for k, v in sorted(self.by_team.items())},
            "services_not_inventoried": [
                {
                    "billing_period": c.billing_period,
                    "account_id": c.account_id,
                    "region": c.region,
                    "service": c.service,
                    "effective_usd": str(c.effective_cost),
                    "line_items": c.line_items,
                }
                for c in self.services
            ],
        }


def _resource(x: bill_store.SpendLine) -> dict[str, Any]:
    return {
        **common.fields(x, "account_id service resource_id instance_type team"),
        "effective_usd": str(x.effective_cost),
        "public_on_demand_usd": str(x.public_on_demand_cost),
        "usage_hours": str(x.usage_hours),
    }


def _stream_json(
    lines: Iterator[bill_store.SpendLine],
    most: int | None,
    totals: _Totals,
    periods: list[dict[str, Any]],
    commitments: list[dict[str, Any]],
    apart: list[dict[str, Any]],
    *,
    as_lines: bool,
) -> None:
    """One JSON document (or JSON lines), written as the resources are read (the first ``most`` of them; the rest
    count in the totals): the totals come last."""
    write = sys.stdout.write
    shown = lines if most is None else _first(lines, most)
    if as_lines:
        for x in shown:
            write(json.dumps({"resource": _resource(x)}) + "\n")
        write(json.dumps({"totals": {"billing_periods": periods, **totals.document(), "commitments": commitments,
                                     "unattributed": apart}}) + "\n")  # fmt: skip
        return
    head = {"billing_periods": [p["billing_period"] for p in periods], "periods": periods}
    write(json.dumps(head, indent=2)[:-2] + ',\n  "resources": [')
    for n, x in enumerate(shown):
        write(("," if n else "") + "\n    " + json.dumps(_resource(x)))
    tail = {**totals.document(), "commitments": commitments, "unattributed": apart}
    write("\n  ],\n" + json.dumps(tail, indent=2)[2:] + "\n")


def _first(lines: Iterator[bill_store.SpendLine], most: int) -> Iterator[bill_store.SpendLine]:
    """The first ``most`` lines; the rest are read too (into the totals) but not yielded."""
    for n, x in enumerate(lines):
        if n < most:
            yield x


def _period(p: Any) -> dict[str, Any]:
    return {
        **common.fields(p, "billing_period payer_account_id export_uri"),
        "table": p.table_name,
        **common.fields(p, "data_format engine line_items"),
        "ingested_at": p.ingested_at.isoformat(),
        "not_read": dict(p.other_providers or {}),
    }


def _commitment(c: Any, period: str) -> dict[str, Any]:
    return {
        "billing_period": period,
        **common.fields(c, "arn account_id kind offering_type family"),
        "hourly_commitment_usd": None if c.hourly_commitment is None else str(c.hourly_commitment),
        "end_date": c.end_date.isoformat() if c.end_date else None,
        "used_usd": str(c.used_cost),
        "unused_usd": str(c.unused_cost),
        "accelerator_coverage": _ratio(c.covered_accelerator_hours, c.accelerator_hours),
        "utilisation": _ratio(c.used_cost, c.used_cost + c.unused_cost),
    }


def _unattributed(u: Any) -> dict[str, Any]:
    return {"account_id": u.account_id, "region": u.region, "category": u.category, "reason": u.reason,
            "usd": str(u.amount)}  # fmt: skip


def _ratio(part: Decimal, whole: Decimal) -> str | None:
    return str((part / whole).quantize(Decimal("0.0001"))) if whole > 0 else None


def _pct(value: str | None) -> str:
    return f"{Decimal(value) * 100:.1f}%" if value is not None else "–"


def register(app: typer.Typer) -> None:
    app.add_typer(bill_app, name="bill")
