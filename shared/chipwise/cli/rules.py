"""``chipwise rules`` (the registry and its thresholds) and ``chipwise findings evaluate`` (the rules again on
what the store holds, under a policy)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from chipwise.cli.common import check_account_id, err, out, print_json
from chipwise.cli.findings import findings_app

if TYPE_CHECKING:
    from chipwise.rules.policy import Policy


@findings_app.command("evaluate")
def evaluate_command(
    account: str | None = typer.Option(
        None, "--account", help="Account whose stored data to evaluate (default: every account in the store)."
    ),
    region: str | None = typer.Option(None, "--region", help="Region (default: the home region)."),
    config: Path | None = typer.Option(None, "--config", help="Policy file with [rules.<rule_id>] thresholds."),
    json_output: bool = typer.Option(False, "--json", help="Print the open findings (JSON) on stdout."),
) -> None:
    """Run the rules again on what the store holds (no AWS calls), as the latest scan ran them (its moment, its
    window, its bill): an unchanged store gives the same findings; a policy file tries thresholds without
    rescanning."""
    from chipwise.cli._findings_view import findings_table
    from chipwise.pipeline.findings import reevaluate
    from chipwise.presentation import plural

    check_account_id(account)
    result = reevaluate(account, region, config)
    if json_output:
        print_json([d.model_dump(mode="json") for d in result.documents])
        return
    accounts = result.accounts
    scope = f"account {accounts[0]}" if len(accounts) == 1 else plural(len(accounts), "account")
    out.print(findings_table(result.documents, title=f"{plural(len(result.documents), 'open finding')} for {scope}"))


def rules_command(
    config: Path | None = typer.Option(None, "--config", help="Policy file with [rules.<rule_id>] thresholds."),
    json_output: bool = typer.Option(False, "--json", help="Print the registry (JSON) on stdout."),
) -> None:
    """The rules Chipwise runs, with their thresholds (defaults, or as the policy overrides them)."""
    from rich.table import Table

    from chipwise.pipeline.policy import load_policy

    policy = load_policy(config)
    described = describe_rules(policy)
    if json_output:
        print_json(described)
        return
    table = Table(title=f"{len(described)} rules", title_justify="left", show_lines=True)
    table.add_column("rule", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("what it finds", ratio=1)
    table.add_column("thresholds", ratio=1, overflow="fold")
    for item in described:
        thresholds = "\n".join(
            f"{'[bold]' if key in item['overridden'] else ''}{key} = {_show(value)}"
            f"{' (policy)[/]' if key in item['overridden'] else ''}"
            for key, value in item["params"].items()
        )
        state = "" if item["params"]["enabled"] else " [dim](disabled)[/]"
        table.add_row(
            f"{item['id']}{state}", item["severity"], f"{item['title']}\n[dim]{item['rationale']}[/]", thresholds
        )
    out.print(table)
    if policy.overrides():
        err.print("[dim]bold thresholds come from the policy; the others are defaults[/]")


def describe_rules(policy: Policy) -> list[dict[str, Any]]:
    """Every registered rule: metadata, current thresholds, which ones the policy overrides, and what each means."""
    from chipwise.rules import registry

    overrides = policy.overrides()
    described = []
    for cls in registry().all():
        params = policy.params(cls.meta.id).model_dump(mode="json")
        fields = cls.params_model.model_fields
        described.append(
            {
                **cls.meta.model_dump(mode="json"),
                "params": params,
                "defaults": cls.params_model().model_dump(mode="json"),
                "descriptions": {name: fields[name].description for name in params},
                "overridden": sorted(overrides.get(cls.meta.id, {})),
            }
        )
    return described


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def register(app: typer.Typer) -> None:
    app.command("rules")(rules_command)
