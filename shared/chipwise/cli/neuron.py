"""``chipwise neuron-agent`` (the host-side shipper) and ``chipwise ingest-neuron`` (reports into the store)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from chipwise.cli.common import err, out, print_json, progress, settings

if TYPE_CHECKING:
    from chipwise.models.neuron import NeuronIngestResult


def neuron_agent_command(ctx: typer.Context) -> None:
    """Ship neuron-monitor reports to CloudWatch or S3 (the host agent; `python -m chipwise.neuron_agent`)."""
    from chipwise import neuron_agent

    raise typer.Exit(neuron_agent.main(list(ctx.args)))


_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def parse_s3_path(source: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` as (bucket, prefix); a path without a valid bucket name is an error that says so."""
    from chipwise.errors import InvalidInput

    bucket, _, prefix = source.removeprefix("s3://").partition("/")
    if not _BUCKET.match(bucket) or ".." in bucket:
        shown = bucket or "(none)"
        raise InvalidInput(
            f"{source!r} is not an S3 path: expected s3://bucket/prefix with a bucket name of 3-63 lower-case "
            f"letters, digits, dots and hyphens (got bucket {shown!r})"
        )
    return bucket, prefix


def ingest_neuron_command(
    source: str = typer.Argument(
        ..., help="A JSON-lines file (optionally .gz), a folder of them, or s3://bucket/prefix."
    ),
    account: str | None = typer.Option(None, "--account", help="Account the reports belong to (default: inferred)."),
    json_output: bool = typer.Option(False, "--json", help="Print the results as JSON on stdout."),
) -> None:
    """Parse neuron-monitor reports and store hourly rollups per instance and runtime (idempotent)."""
    from chipwise.aws import aws_context
    from chipwise.errors import InvalidInput, NotFound
    from chipwise.pipeline._store import store_factory
    from chipwise.pipeline.neuron_ingest import ObjectRef, ingest_file, ingest_object, list_objects

    cfg = settings()
    factory = store_factory()  # like every local command: an empty store gets its schema
    aws = aws_context(cfg.region)
    home = functools.cache(aws.account_id)  # the fallback account, asked at most once
    results: list[NeuronIngestResult] = []
    if source.startswith("s3://"):
        bucket, prefix = parse_s3_path(source)
        refs: list[ObjectRef] = list(list_objects(aws, bucket, prefix))
        if not refs:
            raise NotFound(f"no objects under {source}")
        with progress() as bar:
            task = bar.add_task("ingesting", total=len(refs))
            for ref in refs:
                results.append(ingest_object(aws, factory, ref, account_id=account, home_account=home))
                bar.advance(task)
    else:
        for path in _files(Path(source)):
            result = ingest_file(path, factory, account, home)
            if not result.accepted:
                err.print(f"[yellow]{result.source}[/]: rejected: {result.reason}", highlight=False)
            results.append(result)
    if json_output:
        print_json([r.model_dump(mode="json") for r in results])
    else:
        _print_results(results)
    if not any(r.accepted for r in results):
        raise InvalidInput(f"nothing ingested from {source}")


def _files(path: Path) -> list[Path]:
    from chipwise.errors import NotFound

    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz", ".json")))
    if not path.is_file():
        raise NotFound(f"{path} does not exist")
    return [path]


def _print_results(results: list[NeuronIngestResult]) -> None:
    from rich.table import Table

    table = Table(title="neuron-monitor reports")
    columns = ("source", "account", "reports", "malformed lines", "report errors", "missing (driver)", "hourly rollups")
    for column in columns:
        table.add_column(column, justify="left" if column in ("source", "account") else "right")
    for r in results:
        if not r.accepted:
            table.add_row(r.source, "", "", "", "", "", f"[red]rejected: {r.reason}[/]")
            continue
        lines = ", ".join(str(m.line) for m in r.malformed[:5]) + (" ..." if len(r.malformed) > 5 else "")
        table.add_row(
            r.source,
            r.account_id or "",
            str(r.reports),
            lines,
            str(r.report_errors),
            str(r.reports_missing),
            str(r.rollups),
        )
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command(
        "neuron-agent",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
        add_help_option=False,
    )(neuron_agent_command)
    app.command("ingest-neuron")(ingest_neuron_command)
