"""``chipwise commitments``: which Savings Plan, reservation or capacity to buy, keep or let lapse, given the moves
and quick wins Chipwise recommends (issue 38). It advises; the ledger's totals do not include it."""

from __future__ import annotations

import typer

from chipwise.cli.common import check_account_id, out, print_json


def commitments_command(
    account: str | None = typer.Option(None, "--account", help="One account (default: every account in the bill)."),
    json_output: bool = typer.Option(False, "--json", help="Print as JSON."),
    ask_aws: bool = typer.Option(
        False,
        "--ask-aws",
        help="Also read AWS's own recommendation (Cost Explorer GetSavingsPlansPurchaseRecommendation).",
    ),
) -> None:
    """Per account: commitments held (from the bill), what each recommended move strands (or a Compute plan
    follows), what to buy after the fixes (a stated percentile, its rate's source), what to let lapse within 90 days,
    and held capacity priced for its days left."""
    from chipwise.pipeline.commitments import commitments_for

    check_account_id(account)
    advice = commitments_for(account, ask_aws=ask_aws)
    if json_output:
        print_json({"accounts": advice.documents})
        return
    if not advice.documents:
        out.print("no bill stored: run `chipwise bill ingest`", highlight=False)
    for line in advice.lines:
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("commitments")(commitments_command)
