"""``chipwise resources``: one verdict per resource of the latest scan of each account and region;
``chipwise findings explain``: each rule's outcome on one resource (why each rule did or did not fire)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from chipwise.cli import common
from chipwise.cli.common import more_line, out, print_json, print_json_lines, row_limit
from chipwise.cli.findings import findings_app

if TYPE_CHECKING:
    from chipwise.models.scan import ScanDocument
    from chipwise.models.verdicts import ResourceVerdict

VERDICT_COLOUR = {
    "waste": "red",
    "efficient": "green",
    "cannot_judge": "yellow",
    "not_counted": "magenta",
    "out_of_scope": "dim",
}


def resources_command(
    json_output: bool = typer.Option(False, "--json", help="Print the verdicts as JSON lines (one per line)."),
    account: common.AccountFilter = None,
    team: common.TeamFilter = None,
    region: common.RegionFilter = None,
    limit: common.LimitOption = None,
    cursor: common.CursorOption = None,
) -> None:
    """Every resource of the latest scan (of each account and region) with its one verdict: waste, efficient,
    cannot judge, out of scope. The table shows the top rows and the counts of all."""
    from rich.markup import escape
    from rich.table import Table

    from chipwise.models.verdicts import VERDICT_WORDS
    from chipwise.pipeline.resources import stream_verdicts, verdict_page

    common.check_account_id(account)
    common.check_region(region)
    if json_output:
        from itertools import islice

        rows = islice(stream_verdicts(account, region, team, cursor), row_limit(limit, None))
        print_json_lines(
            {**r.verdict.model_dump(mode="json"), "account_id": r.account_id, "region": r.region, "team": r.team}
            for r in rows
        )
        return
    page = verdict_page(account, region, team, limit=row_limit(limit), cursor=cursor)
    if page.total == 0:
        noun = "resource of the latest scans"
        out.print(common.no_match_line(noun, account=account, team=team, region=region, cursor=cursor), highlight=False)
        return
    summary = ", ".join(f"{page.counts[k]:,} {VERDICT_WORDS[k]}" for k in VERDICT_WORDS if page.counts[k])
    if len(page.scans) == 1:
        scan_id, account_id, scan_region = page.scans[0]
        where = f"scan {scan_id[:8]} ({account_id} {scan_region})"
    else:
        where = f"the latest scans of {len(page.scans)} accounts and regions"
    shown = f"top {len(page.rows)} of " if len(page.rows) < page.total else ""
    table = Table(title=f"{shown}{page.total:,} resources of {where}: {summary}", title_justify="left")
    table.add_column("resource", ratio=2, overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("why", ratio=3, overflow="fold")
    for row in page.rows:
        v = row.verdict
        now = v.instance_type or v.kind.replace("_", " ")
        table.add_row(
            f"[bold]{escape(v.name)}[/]\n[dim]{now}[/]",
            f"[{VERDICT_COLOUR[v.verdict]}]{VERDICT_WORDS[v.verdict]}[/]",
            escape(v.reason),
        )
    out.print(table)
    last = page.rows[-1].verdict.resource_id if page.rows else ""
    rest = more_line(len(page.rows), page.total, "resource", f"--cursor {last}")
    if rest is not None:
        out.print(rest, highlight=False, markup=False, soft_wrap=True)


def find_verdict(document: ScanDocument, resource: str) -> ResourceVerdict:
    """A resource by its name, ARN, or the end of its ARN (an instance id)."""
    from chipwise.errors import InvalidInput, NotFound
    from chipwise.models.resources import split_key

    wanted = resource.strip()
    matches = []
    for v in document.verdicts:
        arn = split_key(v.resource_id)[0]
        if wanted in (v.name, v.resource_id, arn) or arn.rsplit("/", 1)[-1] == wanted:
            matches.append(v)
    if not matches:
        raise NotFound(f"no resource {wanted!r} in scan {document.scan_id[:8]}: `chipwise resources` lists them")
    if len(matches) > 1:
        listed = ", ".join(sorted(v.name for v in matches))
        raise InvalidInput(f"{wanted!r} names several resources ({listed}): give one of those names")
    return matches[0]


@findings_app.command("explain")
def explain_command(
    resource: str = typer.Argument(..., help="The resource's name, ARN or instance id."),
    json_output: bool = typer.Option(False, "--json", help="Print the verdict and each rule's outcome (JSON)."),
    account: str | None = typer.Option(None, "--account", help="The account (12 digits); default: the latest scan."),
    region: str | None = typer.Option(None, "--region", help="The region; default: the latest scan's."),
) -> None:
    """Each rule's outcome on one resource: fired, passed (with what it read), could not judge (the missing input)
    or does not apply (why)."""
    from rich.markup import escape
    from rich.table import Table

    from chipwise.models.verdicts import OUTCOME_WORDS, VERDICT_WORDS
    from chipwise.pipeline.resources import latest_scan
    from chipwise.rules.titles import rule_title

    verdict = find_verdict(latest_scan(account, region), resource)
    if json_output:
        print_json(verdict.model_dump(mode="json"))
        return
    table = Table(title=f"{verdict.name}: {VERDICT_WORDS[verdict.verdict]} ({verdict.reason})", title_justify="left")
    table.add_column("rule", ratio=1)
    table.add_column("outcome", no_wrap=True)
    table.add_column("why", ratio=3, overflow="fold")
    for o in verdict.outcomes:
        table.add_row(rule_title(o.rule_id), OUTCOME_WORDS[o.outcome], escape(o.reason))
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("resources")(resources_command)
