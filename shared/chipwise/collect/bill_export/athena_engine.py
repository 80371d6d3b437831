"""The logical query with Amazon Athena over the export's table (the Data Exports Athena integration or a Glue
crawler), filtered on its ``billing_period`` partition, projecting only the columns read (what Athena bills for).
The table's columns come from Glue; the result is read page by page, each row to the caller as it comes."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.collect.bill_export.duckdb_engine import source_of
from chipwise.collect.bill_export.errors import BillError, denied
from chipwise.collect.bill_export.formats import export_format
from chipwise.collect.bill_export.query import (
    CUR_SPLIT_COLUMNS,
    RESULT_COLUMNS,
    QuerySource,
    required_columns,
)
from chipwise.collect.bill_export.validation import checked_query
from chipwise.errors import UpstreamError
from chipwise.models.bill import BillTable


@dataclass(frozen=True)
class AthenaTable:
    database: str
    table: str
    workgroup: str
    output_location: str | None = None
    poll_seconds: float = 1.0
    timeout_seconds: float = 600.0


def athena_source(
    table: BillTable, athena: AthenaTable, period: str, columns: Sequence[str] | None = None
) -> QuerySource:
    """The export's table as the query's source: ``columns`` are the table's (from Glue; every column of the
    format's data file when unknown)."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", athena.database) or not re.fullmatch(r"[A-Za-z0-9_]+", athena.table):
        raise BillError(f"athena table {athena.database}.{athena.table}: letters, digits and _ only")
    if columns is None:
        known = {**required_columns(table), **(CUR_SPLIT_COLUMNS if table == "COST_AND_USAGE_REPORT" else {})}
    else:  # Glue lower-cases names; Athena's identifiers are case-insensitive: use the documented spelling
        documented = {name.lower(): name for name in export_format(table).columns}
        known = {documented.get(name.lower(), name): "" for name in columns}
    relation = f'"{athena.database}"."{athena.table}"'
    src = source_of(table, "parquet", dict(known), relation, dialect="athena")
    # Data Exports' tables are partitioned by billing_period; a legacy report's Athena table by year and month
    partition = f"billing_period = '{period}'"
    if table == "LEGACY_CUR":
        partition = f"year = '{int(period[:4])}' AND month = '{int(period[5:7])}'"
    return QuerySource(src.table, relation, src.physical, src.tags, src.tags_are_map, "athena", "parquet", src.split,
                  filter=partition)  # fmt: skip


def athena_statement(table: BillTable, athena: AthenaTable, period: str, columns: Sequence[str] | None = None) -> str:
    """The logical query for Athena: the export's table, filtered on its ``billing_period`` partition."""
    src = athena_source(table, athena, period, columns)
    return checked_query(src, period)


def _wait(client: Any, athena: AthenaTable, execution_id: str, target: str) -> int:
    """Poll the query until it succeeds (the bytes it scanned), fails or times out (an UpstreamError)."""
    waited = 0.0
    while True:
        try:
            status = client.get_query_execution(QueryExecutionId=execution_id)["QueryExecution"]
        except ClientError as exc:
            raise denied(exc, "athena:GetQueryExecution", target) from exc
        state = status.get("Status", {}).get("State")
        if state == "SUCCEEDED":
            return int(status.get("Statistics", {}).get("DataScannedInBytes", 0) or 0)
        if state in ("FAILED", "CANCELLED"):
            reason = status.get("Status", {}).get("StateChangeReason", "")
            raise UpstreamError(f"Athena query {execution_id} on {target} {state.lower()}: {reason}")
        if waited >= athena.timeout_seconds:
            raise UpstreamError(f"Athena query {execution_id} on {target} still {state} after {waited:.0f} s")
        time.sleep(athena.poll_seconds)
        waited += athena.poll_seconds


def _columns(table_description: Mapping[str, Any]) -> list[str] | None:
    described = table_description.get("Table", {}).get("StorageDescriptor", {}).get("Columns")
    return [str(c["Name"]) for c in described] if described else None


def run_athena(
    aws: AwsContext, athena: AthenaTable, table: BillTable, period: str, sink: Callable[[Sequence[Any]], None]
) -> int:
    """Check the table (Glue), start the query, wait for it, pass every row of every page to ``sink`` (one page
    held at a time); returns the bytes Athena scanned."""
    target = f"{athena.database}.{athena.table}"
    try:
        described = aws.client("glue").get_table(DatabaseName=athena.database, Name=athena.table)
    except ClientError as exc:
        raise denied(exc, "glue:GetTable", target) from exc
    client = aws.client("athena")
    params: dict[str, Any] = {
        "QueryString": athena_statement(table, athena, period, _columns(described)),
        "QueryExecutionContext": {"Database": athena.database},
        "WorkGroup": athena.workgroup,
    }
    if athena.output_location:
        params["ResultConfiguration"] = {"OutputLocation": athena.output_location}
    try:
        execution_id = client.start_query_execution(**params)["QueryExecutionId"]
    except ClientError as exc:
        raise denied(exc, "athena:StartQueryExecution", target) from exc
    scanned = _wait(client, athena, execution_id, target)
    try:
        header: list[str] | None = None
        for page in client.get_paginator("get_query_results").paginate(QueryExecutionId=execution_id):
            for row in page.get("ResultSet", {}).get("Rows", []):
                values = [d.get("VarCharValue") for d in row.get("Data", [])]
                if header is None:
                    header = [str(v) for v in values]
                    continue
                found = dict(zip(header, values, strict=False))
                sink(tuple(found.get(name) for name in RESULT_COLUMNS))
    except ClientError as exc:
        raise denied(exc, "athena:GetQueryResults", target) from exc
    return scanned
