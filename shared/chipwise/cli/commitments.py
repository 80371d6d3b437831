"""``chipwise commitments``: which Savings Plan, reservation or capacity to buy, keep or let lapse, given the moves
and quick wins Chipwise recommends (issue 38). It advises; the ledger's totals do not include it."""

from __future__ import annotations

import typer

from chipwise.cli.common import out, print_json, store_session
from chipwise.clock import utcnow
from chipwise.errors import InvalidInput
from chipwise.models.common import is_account_id
from chipwise.pipeline.commitments import commitments_advice, known_accounts
from chipwise.report.commitments import commitments_document, commitments_lines


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
    if account is not None and not is_account_id(account):
        raise InvalidInput(f"--account {account!r} is not a 12-digit AWS account id")
    now = utcnow()
    with store_session() as session:
        accounts = [account] if account else known_accounts(session)
        results = [commitments_advice(session, account_id=a, now=now, ask_aws=ask_aws) for a in accounts]
    if json_output:
        print_json({"accounts": [commitments_document(r) for r in results]})
        return
    if not results:
        out.print("no bill stored: run `chipwise bill ingest`", highlight=False)
    for result in results:
        for line in commitments_lines(result):
            out.print(line, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("commitments")(commitments_command)
