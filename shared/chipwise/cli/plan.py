"""``chipwise plan``: the intake planner offline (the same plan ``POST /intake`` makes, not stored or sent)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from chipwise.cli.common import err

if TYPE_CHECKING:
    from chipwise.plan.document import PlanDocument
    from chipwise.plan.intake import IntakeRequest


class Format(StrEnum):
    json = "json"
    md = "md"
    html = "html"


def read_intake(path: Path) -> IntakeRequest:
    """The intake from a JSON file ("-" for stdin); InvalidInput names every bad field."""
    from pydantic import ValidationError

    from chipwise.errors import InvalidInput
    from chipwise.plan.intake import IntakeRequest, field_errors

    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        raw = json.loads(text)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}") from exc
    try:
        return IntakeRequest.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{where or 'intake'}: {message}" for where, message in field_errors(exc).items())
        raise InvalidInput(f"invalid intake in {path}: {problems}") from exc


def render_plan(plan: PlanDocument, fmt: Format) -> str:
    from chipwise.intake import views

    if fmt is Format.json:
        return views.plan_json(plan)
    if fmt is Format.md:
        return views.plan_markdown(plan)
    return views.plan_page(plan, permalink=f"#{plan.plan_id}")


def plan(
    input_path: Path = typer.Option(..., "--input", "-i", help="Intake JSON (the POST /intake body); - for stdin."),
    fmt: Format = typer.Option(Format.md, "--format", "-f", help="Output: json, md (Markdown) or html."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
) -> None:
    """Make the credits-and-migration plan for an intake file, offline (nothing is stored or sent)."""
    from rich.markup import escape

    from chipwise.clock import utcnow
    from chipwise.intake.service import new_plan_id
    from chipwise.plan.planner import build_plan
    from chipwise.presentation import plural
    from chipwise.render import money

    intake = read_intake(input_path)
    document = build_plan(intake, plan_id=new_plan_id(), created_at=utcnow())
    text = render_plan(document, Format.json if as_json else fmt)
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        output.write_text(text, encoding="utf-8")
    where = f", written to {output}" if output else ""
    err.print(
        f"plan for [bold]{escape(document.company)}[/]: {plural(len(document.workloads), 'workload')}, "
        f"{money(document.total_monthly_savings_usd)} a month to save{escape(where)}",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
