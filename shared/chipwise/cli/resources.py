"""``chipwise resources``: one verdict per resource of the latest scan; ``chipwise findings explain``: each rule's
outcome on one resource (why each rule did or did not fire)."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from chipwise.cli.common import out, print_json, store_session
from chipwise.cli.findings import findings_app
from chipwise.errors import InvalidInput, NotFound
from chipwise.models.resources import split_key
from chipwise.models.scan import ScanDocument
from chipwise.models.verdicts import OUTCOME_WORDS, VERDICT_WORDS, ResourceVerdict
from chipwise.pipeline.verdicts import latest_verdicts
from chipwise.rules.registry import rule_title

VERDICT_COLOUR = {
    "waste": "red",
    "efficient": "green",
    "cannot_judge": "yellow",
    "not_counted": "magenta",
    "out_of_scope": "dim",
}


def _scan(account: str | None, region: str | None) -> ScanDocument:
    with store_session() as session:
        return latest_verdicts(session, account, region)


def resources_command(
    json_output: bool = typer.Option(False, "--json", help="Print the verdicts (JSON) on stdout."),
    account: str | None = typer.Option(None, "--account", help="The account (12 digits); default: the latest scan."),
    region: str | None = typer.Option(None, "--region", help="The region; default: the latest scan's."),
) -> None:
    """Every resource of the latest scan with its one verdict: waste (a counted finding), efficient, cannot judge,
    not counted (its findings set apart from the totals) or out of scope."""
    document = _scan(account, region)
    if json_output:
        print_json([v.model_dump(mode="json") for v in document.verdicts])
        return
    counts = {k: sum(1 for v in document.verdicts if v.verdict == k) for k in VERDICT_WORDS}
    summary = ", ".join(f"{n} {VERDICT_WORDS[k]}" for k, n in counts.items() if n)
    table = Table(
        title=f"{len(document.verdicts)} resources of scan {document.scan_id[:8]} "
        f"({document.account_id} {document.region}): {summary}",
        title_justify="left",
    )
    table.add_column("resource", ratio=2, overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("why", ratio=3, overflow="fold")
    for v in document.verdicts:
        now = v.instance_type or v.kind.replace("_", " ")
        table.add_row(
            f"[bold]{escape(v.name)}[/]\n[dim]{now}[/]",
            f"[{VERDICT_COLOUR[v.verdict]}]{VERDICT_WORDS[v.verdict]}[/]",
            escape(v.reason),
        )
    out.print(table)


def find_verdict(document: ScanDocument, resource: str) -> ResourceVerdict:
    """A resource by its name, ARN, or the end of its ARN (an instance id)."""
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
    verdict = find_verdict(_scan(account, region), resource)
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
