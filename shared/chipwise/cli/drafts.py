"""``chipwise drafts ACCOUNT``: the credits-application and partner-referral drafts for an account."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer

from chipwise.cli.common import out, print_json, settings

STAGES = ("bootstrapped", "pre_seed", "seed", "series_a", "series_b", "later")  # chipwise.catalog.CompanyStage


def drafts_command(
    account: Annotated[str, typer.Argument(help="The 12-digit AWS account id (scanned before).")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Folder for the files [default: ./chipwise-drafts/ACCOUNT].")
    ] = None,
    company: Annotated[str | None, typer.Option(help="Company name [default: the account's name].")] = None,
    stage: Annotated[
        str | None, typer.Option(help=f"Company stage: {', '.join(STAGES)} [default: unknown, marked in the drafts].")
    ] = None,
    funded: Annotated[
        bool | None,
        typer.Option(
            "--funded/--self-funded", help="Institutional funding (VC, accelerator, angels) [default: unknown]."
        ),
    ] = None,
    org_id: Annotated[str | None, typer.Option(help="AWS Activate Provider Org ID, if the company has one.")] = None,
    website: Annotated[str | None, typer.Option(help="Company website for the referral.")] = None,
    country: Annotated[str, typer.Option(help="Two-letter country code.")] = "US",
    contact_name: Annotated[str, typer.Option(help="Customer contact's name for the referral.")] = "",
    contact_email: Annotated[
        str | None, typer.Option(help="Customer contact's email [default: the first digest recipient].")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored drafts as JSON on stdout.")] = False,
) -> None:
    """Draft a credits application and a partner referral (ACE CreateOpportunity JSON + email) from the account's
    spend, workloads and findings; store them, write them to files and queue them to the advisory address.

    Nothing is submitted to AWS or a partner: a person reviews and sends them (`chipwise notify` sends the
    review email).
    """
    from rich.table import Table

    from chipwise.errors import InvalidInput
    from chipwise.models.common import is_account_id
    from chipwise.pipeline.drafts import CompanyFacts, draft_account
    from chipwise.render import money

    if not is_account_id(account):
        raise InvalidInput(f"{account!r} is not a 12-digit AWS account id")
    if stage is not None and stage not in STAGES:
        raise InvalidInput(f"unknown stage {stage!r}: use one of {', '.join(STAGES)}")
    facts = CompanyFacts(
        company_name=company,
        stage=cast(Any, stage),  # checked against STAGES above
        institutional_funding=funded,
        activate_provider_org_id=org_id,
        website=website,
        country=country.upper(),
        contact_name=contact_name,
        contact_email=contact_email,
    )
    result = draft_account(account, facts, output or Path("chipwise-drafts") / account)
    paths = result.paths
    if as_json:
        print_json({"drafts": result.stored, "files": [str(p) for p in paths], "review_queued": result.review_queued})
        return
    figures = result.drafts.figures
    out.print(f"[bold]{figures.company}[/] ({figures.account_id})", highlight=False)
    out.print(
        f"accelerator spend {money(figures.monthly_accelerator_spend_usd, 0)}/mo · savings "
        f"{money(figures.monthly_savings_usd, 0)}/mo across {figures.open_findings} findings · "
        f"{len(figures.workloads)} workloads",
        highlight=False,
    )
    table = Table(title="Credit programs", title_justify="left")
    for column in ("program", "amount", "fit"):
        table.add_column(column, overflow="fold")
    for m in result.drafts.programs:
        amount = f"up to {money(m.max_amount_usd, 0)}" if m.max_amount_usd is not None else "no fixed amount"
        fit = {"likely": "[green]likely[/]", "possible": "[yellow]possible[/]", "unlikely": "[dim]unlikely now[/]"}
        table.add_row(m.name, amount, fit[m.likelihood])
    out.print(table)
    for path in paths:
        out.print(f"wrote {path}")
    review = "queued for review to " + settings().advisory_email if result.review_queued else "unchanged: already sent"
    out.print(f"[green]drafts stored[/]; {review} (`chipwise notify` sends it). Nothing was submitted.")


def register(app: typer.Typer) -> None:
    app.command("drafts")(drafts_command)
