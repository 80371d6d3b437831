"""``chipwise findings realised``: what resolved findings really saved, measured in Cost Explorer."""

from __future__ import annotations

import typer

from chipwise.cli import common
from chipwise.cli.common import check_account_id, check_region, more_line, out, print_json_lines, row_limit
from chipwise.cli.findings import findings_app


@findings_app.command("realised")
def realised_command(
    account: common.AccountFilter = None,
    team: common.TeamFilter = None,
    region: common.RegionFilter = None,
    limit: common.LimitOption = None,
    json_output: bool = typer.Option(False, "--json", help="Print the measured fixes as JSON lines."),
) -> None:
    """What resolved findings really saved: each fix measured in Cost Explorer (the usage type's daily cost before
    against after the change), next to its estimate, and each rule's accuracy."""
    from rich.table import Table

    from chipwise.economics import usd
    from chipwise.links import short_id
    from chipwise.pipeline.findings import measured_total, realised_savings
    from chipwise.rules.titles import rule_title

    check_account_id(account)
    check_region(region)
    view = realised_savings(account, region=region, team=team, limit=row_limit(limit, None if json_output else 50))
    if json_output:
        print_json_lines(view.fixes)
        return
    if not view.fixes:
        out.print("no resolved finding has been measured yet: a fix is measured after the scan that resolves it")
        return
    table = Table("finding", "resource · rule", "cause", "estimated / month", "realised / month", "days before · after")
    for f in view.fixes:
        realised = f["realised_monthly_usd"]
        table.add_row(
            short_id(str(f["finding_id"])),
            f"{f['resource']}\n{f['rule']}",
            str(f["cause"]),
            usd(f["estimated_monthly_usd"]),
            "pending" if realised is None else usd(realised),
            f"{f['days_before']} · {f['days_after']}",
        )
    out.print(table)
    rest = more_line(len(view.fixes), view.total, "measured fix", "--limit 0 or --json", "measured fixes")
    if rest is not None:
        out.print(rest, highlight=False)
    out.print(f"realised to date: {usd(measured_total(view.rules))} a month")
    for r in view.rules:
        ratio = "" if r.accuracy is None else f", {r.accuracy:.0%} of the estimate"
        out.print(f"  {rule_title(r.rule_id)}: {r.measured} measured, {r.pending} pending{ratio}")
