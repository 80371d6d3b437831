"""The bill: an AWS Data Exports export (CUR 2.0 or FOCUS 1.2) read per billing period, with DuckDB over the
Parquet files or with Amazon Athena over the export's table. One logical query for both engines.

Where an export lives (``data_export_uri`` = ``s3://bucket/prefix/export-name``, or a local directory laid out the
same way): ``metadata/BILLING_PERIOD=YYYY-MM/<export-name>-Manifest.json`` names the data files
(``data/BILLING_PERIOD=YYYY-MM/*.parquet``) and the columns. The manifest is read first and its list is the only
list of files read (never list-and-guess); its columns say which table the export is (CUR 2.0 or FOCUS 1.2).

Effective (amortised) cost, written once in :func:`logical_query`:

- ``Usage`` (on-demand, Spot): the unblended cost;
- ``SavingsPlanCoveredUsage``: the Savings Plan effective cost; its ``SavingsPlanNegation`` is excluded (it only
  cancels the covered usage's unblended cost);
- ``DiscountedUsage``: the reservation effective cost;
- ``SavingsPlanRecurringFee``: only its unused part (total commitment to date − used commitment) counts, as the
  commitment's cost, never a resource's; ``RIFee`` likewise (unused amortised upfront + unused recurring fee);
  upfront fees are already inside the covered usage's effective cost (``SavingsPlanUpfrontFee``, RI ``Fee``): 0;
- ``Credit``, ``Refund``, ``Tax`` and other fees: kept apart, with a reason, never a resource's cost.

FOCUS 1.2 states the same thing in its own columns: ``EffectiveCost`` of ``ChargeCategory`` Usage (commitment
``Used`` → Savings Plan or reservation; ``Unused`` → the commitment's waste), ``Purchase`` 0, Tax and Credit apart.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from chipwise.aws import AwsContext
from chipwise.catalog import platform_of
from chipwise.collect.costs import describe_usage_type
from chipwise.errors import ChipwiseError, InvalidInput, UpstreamError
from chipwise.models.bill import (
    BILLING_PERIOD,
    BillPeriod,
    BillTable,
    Commitment,
    ExportManifest,
    Pricing,
    ResourceCost,
    Unattributed,
)

if TYPE_CHECKING:
    import duckdb

Engine = Literal["duckdb", "athena"]
Dialect = Literal["duckdb", "athena"]


class BillError(InvalidInput):
    """An export that cannot be read as it is: the message names the file (and column)."""


class BillAccessDenied(UpstreamError):
    """AWS refused a call: the message names the IAM action to grant."""


# --- where an export lives ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportLocation:
    """``s3://bucket/prefix/export-name`` or a local directory named after the export."""

    uri: str
    bucket: str | None
    prefix: str  # the key prefix up to and including the export name (S3), or the local directory
    export_name: str

    @classmethod
    def parse(cls, uri: str) -> ExportLocation:
        uri = uri.rstrip("/")
        if uri.startswith("s3://"):
            bucket, _, key = uri[5:].partition("/")
            if not bucket or not key:
                raise BillError(f"data_export_uri {uri!r}: expected s3://bucket/prefix/export-name")
            return cls(uri, bucket, key, key.rsplit("/", 1)[-1])
        if "://" in uri:
            raise BillError(f"data_export_uri {uri!r}: only s3:// or a local directory")
        return cls(uri, None, uri, Path(uri).name)

    def manifest(self, period: str) -> str:
        return f"{self.uri}/metadata/BILLING_PERIOD={period}/{self.export_name}-Manifest.json"

    def key(self, uri: str) -> str:
        """The S3 key of an ``s3://`` URI in this export's bucket."""
        bucket, _, key = uri[5:].partition("/")
        if bucket != self.bucket:
            raise BillError(f"{uri}: the manifest names a file outside the export's bucket {self.bucket}")
        return key

    def local(self, uri: str) -> Path:
        """A data file of a local export: the manifest's S3 URI, from the export name on, under the directory."""
        marker = f"/{self.export_name}/"
        at = uri.find(marker)
        relative = uri[at + len(marker) :] if at >= 0 else uri.rsplit("/", 1)[-1]
        return Path(self.prefix) / relative


def period_of_manifest_key(key: str) -> str | None:
    """The billing period of a manifest object key (``.../metadata/BILLING_PERIOD=YYYY-MM/x-Manifest.json``)."""
    found = re.search(r"/metadata/BILLING_PERIOD=(\d{4}-\d{2})/[^/]+-Manifest\.json$", key)
    return found.group(1) if found else None


def denied(exc: ClientError, action: str, target: str) -> ChipwiseError:
    """An AWS error as one line: access denied names the IAM action; anything else its code."""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    message = str(exc.response.get("Error", {}).get("Message", "")).strip()
    if code in {"AccessDenied", "AccessDeniedException", "403", "UnauthorizedOperation"} or "not authorized" in message:
        return BillAccessDenied(f"access denied: {action} on {target} (grant {action} to Chipwise's role)")
    if code in {"NoSuchKey", "404", "NoSuchBucket", "EntityNotFoundException"}:
        return BillError(f"{target}: not found ({code})")
    return UpstreamError(f"{action} on {target} failed: {code} {message}".strip())


# --- the manifest --------------------------------------------------------------------------------------------------


def read_manifest(aws: AwsContext | None, location: ExportLocation, period: str) -> tuple[str, ExportManifest]:
    """The manifest of one billing period (its URI and contents); a missing or unreadable one is a BillError
    naming it."""
    if not BILLING_PERIOD.match(period):
        raise BillError(f"billing period {period!r}: expected YYYY-MM")
    uri = location.manifest(period)
    raw: bytes
    if location.bucket is None:
        path = Path(uri)
        if not path.is_file():
            raise BillError(f"{uri}: manifest not found")
        raw = path.read_bytes()
    else:
        if aws is None:
            raise BillError(f"{uri}: an s3:// export needs AWS access")
        try:
            raw = aws.client("s3").get_object(Bucket=location.bucket, Key=location.key(uri))["Body"].read()
        except ClientError as exc:
            raise denied(exc, "s3:GetObject", uri) from exc
        except BotoCoreError as exc:
            raise UpstreamError(f"s3:GetObject on {uri} failed: {exc}") from exc
    try:
        manifest = ExportManifest.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise BillError(f"{uri}: not a Data Exports manifest ({first})") from exc
    if not manifest.data_files:
        raise BillError(f"{uri}: the manifest lists no data files")
    return uri, manifest


def table_of(manifest: ExportManifest, manifest_uri: str) -> BillTable:
    """CUR 2.0 (``COST_AND_USAGE_REPORT``) or FOCUS 1.2 (``FOCUS_1_2_AWS``), as the manifest says: the table its
    query statement reads when it carries one, else its columns."""
    if manifest.query_statement:
        found = re.search(r"\bFROM\s+\"?([A-Za-z0-9_]+)\"?", manifest.query_statement, re.IGNORECASE)
        name = found.group(1).upper() if found else ""
        if name in ("COST_AND_USAGE_REPORT", "FOCUS_1_2_AWS"):
            return "COST_AND_USAGE_REPORT" if name == "COST_AND_USAGE_REPORT" else "FOCUS_1_2_AWS"
        raise BillError(
            f"{manifest_uri}: unknown table {name or '?'} (Chipwise reads COST_AND_USAGE_REPORT, FOCUS_1_2_AWS)"
        )
    names = manifest.column_names
    if "line_item_line_item_type" in names:
        return "COST_AND_USAGE_REPORT"
    if "EffectiveCost" in names and "ChargeCategory" in names:
        return "FOCUS_1_2_AWS"
    raise BillError(f"{manifest_uri}: unknown table (neither CUR 2.0 nor FOCUS 1.2 columns)")


# --- the logical query ---------------------------------------------------------------------------------------------

# Column kinds the query needs, by table: the columns read (and their expected type family), nothing else.
NUMERIC, TEXT, TIME, MAP = "numeric", "text", "timestamp", "map"

CUR_COLUMNS: dict[str, str] = {
    "line_item_usage_account_id": TEXT,
    "product_region_code": TEXT,
    "line_item_usage_start_date": TIME,
    "line_item_resource_id": TEXT,
    "line_item_product_code": TEXT,
    "line_item_usage_type": TEXT,
    "line_item_line_item_type": TEXT,
    "pricing_term": TEXT,
    "line_item_unblended_cost": NUMERIC,
    "line_item_usage_amount": NUMERIC,
    "pricing_public_on_demand_cost": NUMERIC,
    "pricing_public_on_demand_rate": TEXT,  # a string in CUR 2.0 (the rate as AWS prints it)
    "savings_plan_savings_plan_effective_cost": NUMERIC,
    "savings_plan_total_commitment_to_date": NUMERIC,
    "savings_plan_used_commitment": NUMERIC,
    "savings_plan_savings_plan_a_r_n": TEXT,
    "savings_plan_offering_type": TEXT,
    "savings_plan_instance_type_family": TEXT,
    "savings_plan_end_time": TEXT,
    "reservation_effective_cost": NUMERIC,
    "reservation_unused_amortized_upfront_fee_for_billing_period": NUMERIC,
    "reservation_unused_recurring_fee": NUMERIC,
    "reservation_reservation_a_r_n": TEXT,
    "reservation_end_time": TEXT,
    "resource_tags": MAP,
}
# Split cost allocation (opt-in): read when the export has it.
CUR_SPLIT_COLUMNS: dict[str, str] = {
    "split_line_item_parent_resource_id": TEXT,
    "split_line_item_split_cost": NUMERIC,
    "split_line_item_split_usage": NUMERIC,
    "split_line_item_public_on_demand_split_cost": NUMERIC,
}
FOCUS_COLUMNS: dict[str, str] = {
    "SubAccountId": TEXT,
    "RegionId": TEXT,
    "ChargePeriodStart": TIME,
    "ResourceId": TEXT,
    "x_ServiceCode": TEXT,
    "x_UsageType": TEXT,
    "ChargeCategory": TEXT,
    "PricingCategory": TEXT,
    "CommitmentDiscountId": TEXT,
    "CommitmentDiscountStatus": TEXT,
    "EffectiveCost": NUMERIC,
    "BilledCost": NUMERIC,
    "ListCost": NUMERIC,
    "ListUnitPrice": NUMERIC,
    "ConsumedQuantity": NUMERIC,
    "Tags": MAP,
}

MONEY = "DECIMAL(38,10)"


def _n(column: str) -> str:
    return f"COALESCE(CAST({column} AS {MONEY}), 0)"


def _s(column: str) -> str:
    return f"COALESCE(CAST({column} AS VARCHAR), '')"


def _cur_lines(split: bool) -> dict[str, str]:
    """CUR 2.0 → the canonical line: one expression per canonical column (the amortised-cost rules above)."""
    kind = (
        "CASE line_item_line_item_type"
        " WHEN 'Usage' THEN CASE WHEN pricing_term = 'Spot' OR line_item_usage_type LIKE '%SpotUsage%'"
        " THEN 'spot' ELSE 'on_demand' END"
        " WHEN 'SavingsPlanCoveredUsage' THEN 'savings_plan'"
        " WHEN 'DiscountedUsage' THEN 'reservation'"
        " WHEN 'SavingsPlanNegation' THEN 'negation'"
        " WHEN 'SavingsPlanRecurringFee' THEN 'commitment_unused'"
        " WHEN 'RIFee' THEN 'commitment_unused'"
        " WHEN 'SavingsPlanUpfrontFee' THEN 'upfront_fee'"
        " WHEN 'Fee' THEN CASE WHEN COALESCE(reservation_reservation_a_r_n, '') <> '' THEN 'upfront_fee' ELSE 'fee' END"
        " WHEN 'Credit' THEN 'credit' WHEN 'Refund' THEN 'refund' WHEN 'Tax' THEN 'tax'"
        " ELSE 'other' END"
    )
    effective = (
        "CASE line_item_line_item_type"
        f" WHEN 'SavingsPlanCoveredUsage' THEN {_n('savings_plan_savings_plan_effective_cost')}"
        f" WHEN 'DiscountedUsage' THEN {_n('reservation_effective_cost')}"
        " WHEN 'SavingsPlanNegation' THEN 0"
        f" WHEN 'SavingsPlanRecurringFee' THEN {_n('savings_plan_total_commitment_to_date')}"
        f" - {_n('savings_plan_used_commitment')}"
        f" WHEN 'RIFee' THEN {_n('reservation_unused_amortized_upfront_fee_for_billing_period')}"
        f" + {_n('reservation_unused_recurring_fee')}"
        " WHEN 'SavingsPlanUpfrontFee' THEN 0"
        " WHEN 'Fee' THEN CASE WHEN COALESCE(reservation_reservation_a_r_n, '') <> '' THEN 0"
        f" ELSE {_n('line_item_unblended_cost')} END"
        f" ELSE {_n('line_item_unblended_cost')} END"
    )
    unblended = _n("line_item_unblended_cost")
    billed = f"CASE WHEN line_item_line_item_type = 'SavingsPlanCoveredUsage' THEN 0 ELSE {unblended} END"
    commitment = (
        "CASE WHEN COALESCE(savings_plan_savings_plan_a_r_n, '') <> '' THEN savings_plan_savings_plan_a_r_n"
        " WHEN COALESCE(reservation_reservation_a_r_n, '') <> '' THEN reservation_reservation_a_r_n ELSE '' END"
    )
    lines = {
        "account_id": _s("line_item_usage_account_id"),
        "region": _s("product_region_code"),
        "day": "CAST(line_item_usage_start_date AS DATE)",
        "resource_id": _s("line_item_resource_id"),
        "parent_resource_id": "''",
        "service": _s("line_item_product_code"),
        "usage_type": _s("line_item_usage_type"),
        "kind": kind,
        "commitment_arn": commitment,
        "effective": effective,
        "billed": billed,
        "list_cost": _n("pricing_public_on_demand_cost"),
        "list_rate": "CAST(NULLIF(pricing_public_on_demand_rate, '') AS DECIMAL(38,10))",
        "hours": _n("line_item_usage_amount"),
        "commitment_total": (
            f"CASE WHEN line_item_line_item_type = 'SavingsPlanRecurringFee'"
            f" THEN {_n('savings_plan_total_commitment_to_date')} ELSE 0 END"
        ),
        "offering_type": _s("savings_plan_offering_type"),
        "family": _s("savings_plan_instance_type_family"),
        "end_time": "CASE WHEN COALESCE(savings_plan_end_time, '') <> '' THEN savings_plan_end_time"
        " ELSE COALESCE(reservation_end_time, '') END",
        "tags": "resource_tags",
    }
    if split:
        pod = "COALESCE(split_line_item_parent_resource_id, '') <> ''"
        lines["parent_resource_id"] = _s("split_line_item_parent_resource_id")
        lines["effective"] = f"CASE WHEN {pod} THEN {_n('split_line_item_split_cost')} ELSE {effective} END"
        lines["billed"] = f"CASE WHEN {pod} THEN {_n('split_line_item_split_cost')} ELSE {billed} END"
        lines["list_cost"] = (
            f"CASE WHEN {pod} THEN {_n('split_line_item_public_on_demand_split_cost')} ELSE {lines['list_cost']} END"
        )
        lines["hours"] = f"CASE WHEN {pod} THEN {_n('split_line_item_split_usage')} ELSE {lines['hours']} END"
    return lines


def _focus_lines() -> dict[str, str]:
    """FOCUS 1.2 (with AWS columns) → the same canonical line."""
    kind = (
        "CASE WHEN ChargeCategory = 'Usage' AND CommitmentDiscountStatus = 'Unused' THEN 'commitment_unused'"
        " WHEN ChargeCategory = 'Usage' AND CommitmentDiscountStatus = 'Used'"
        " AND CommitmentDiscountId LIKE '%:savingsplan/%' THEN 'savings_plan'"
        " WHEN ChargeCategory = 'Usage' AND CommitmentDiscountStatus = 'Used' THEN 'reservation'"
        " WHEN ChargeCategory = 'Usage' AND PricingCategory = 'Dynamic' THEN 'spot'"
        " WHEN ChargeCategory = 'Usage' THEN 'on_demand'"
        " WHEN ChargeCategory = 'Purchase' THEN 'upfront_fee'"
        " WHEN ChargeCategory = 'Credit' THEN 'credit' WHEN ChargeCategory = 'Tax' THEN 'tax'"
        " WHEN ChargeCategory = 'Adjustment' THEN 'refund' ELSE 'other' END"
    )
    return {
        "account_id": _s("SubAccountId"),
        "region": _s("RegionId"),
        "day": "CAST(ChargePeriodStart AS DATE)",
        "resource_id": "CASE WHEN CommitmentDiscountStatus = 'Unused' THEN '' ELSE COALESCE(ResourceId, '') END",
        "parent_resource_id": "''",
        "service": _s("x_ServiceCode"),
        "usage_type": _s("x_UsageType"),
        "kind": kind,
        "commitment_arn": _s("CommitmentDiscountId"),
        "effective": _n("EffectiveCost"),
        "billed": _n("BilledCost"),
        "list_cost": _n("ListCost"),
        "list_rate": "CAST(ListUnitPrice AS DECIMAL(38,10))",
        "hours": _n("ConsumedQuantity"),
        "commitment_total": "CAST(0 AS DECIMAL(38,10))",
        "offering_type": "''",
        "family": "''",
        "end_time": "''",
        "tags": "Tags",
    }


GROUP_COLUMNS = (
    "account_id",
    "region",
    "day",
    "resource_id",
    "parent_resource_id",
    "service",
    "usage_type",
    "kind",
    "commitment_arn",
)
RESULT_COLUMNS = (
    *GROUP_COLUMNS,
    "effective",
    "billed",
    "list_cost",
    "list_rate",
    "hours",
    "commitment_total",
    "offering_type",
    "family",
    "end_time",
    "tags",
    "line_items",
)


def columns_read(table: BillTable, split: bool) -> list[str]:
    """The export columns the query reads (projection: nothing else is read)."""
    if table == "FOCUS_1_2_AWS":
        return list(FOCUS_COLUMNS)
    return [*CUR_COLUMNS, *(CUR_SPLIT_COLUMNS if split else {})]


# How each engine returns a resource's tags (the one dialect difference): DuckDB as JSON text (unambiguous, and
# text crosses into Python far cheaper than a MAP becomes a dict), Athena the map as it prints it (``{k=v, ...}``).
TAGS_AS_TEXT: dict[Dialect, str] = {"duckdb": "to_json(arbitrary(tags))", "athena": "arbitrary(tags)"}


def logical_query(
    table: BillTable, source: str, where: str = "", split: bool = False, dialect: Dialect = "duckdb"
) -> str:
    """The one query: the table's lines in canonical form, then summed per account, region, day, resource, pricing
    and commitment (the tags of a resource are the same on its lines: any one is kept; negations stay as their own
    rows, at 0, so that every line item read is counted). ``source`` is the FROM
    item (DuckDB's ``read_parquet([...])`` or Athena's table) and ``where`` the partition filter; ``split``: the
    CUR export has the split cost allocation columns. Sums leave as exact decimal text (``CAST(SUM(..) AS
    VARCHAR)``: one ``Decimal(text)`` each in Python, the cheapest exact way across for DuckDB, what Athena returns
    anyway); ``dialect`` only changes how the tags leave (:data:`TAGS_AS_TEXT`)."""
    lines = _focus_lines() if table == "FOCUS_1_2_AWS" else _cur_lines(split)
    projection = ",\n  ".join(f"{expr} AS {name}" for name, expr in lines.items())
    group = ", ".join(GROUP_COLUMNS)
    sums = ", ".join(
        f"CAST({agg}({name}) AS VARCHAR) AS {name}"
        for agg, name in (
            ("SUM", "effective"),
            ("SUM", "billed"),
            ("SUM", "list_cost"),
            ("MAX", "list_rate"),
            ("SUM", "hours"),
            ("SUM", "commitment_total"),
        )
    )
    return (
        f"WITH lines AS (\n  SELECT\n  {projection}\n  FROM {source}{f' WHERE {where}' if where else ''}\n)\n"
        f"SELECT {group},\n  {sums},\n"
        "  MAX(offering_type) AS offering_type, MAX(family) AS family, MAX(end_time) AS end_time,\n"
        f"  {TAGS_AS_TEXT[dialect]} AS tags, COUNT(*) AS line_items\n"
        f"FROM lines\nGROUP BY {group}"
    )


# --- the engines ---------------------------------------------------------------------------------------------------


def _type_family(duck_type: str) -> str:
    t = duck_type.upper()
    if t.startswith(("DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "HUGEINT", "SMALLINT", "TINYINT")):
        return NUMERIC
    if t.startswith("TIMESTAMP") or t == "DATE":
        return TIME
    if t.startswith("MAP"):
        return MAP
    if t.startswith("VARCHAR"):
        return TEXT
    return t.lower()


def _required(table: BillTable) -> dict[str, str]:
    return FOCUS_COLUMNS if table == "FOCUS_1_2_AWS" else CUR_COLUMNS


def _check_manifest_columns(manifest: ExportManifest, uri: str, table: BillTable) -> bool:
    """Every needed column is in the manifest (when it lists columns); returns whether split columns are there."""
    names = manifest.column_names
    if names:
        missing = sorted(set(_required(table)) - names)
        if missing:
            raise BillError(f"{uri}: column {missing[0]} missing from the export ({len(missing)} needed ones missing)")
    return table == "COST_AND_USAGE_REPORT" and set(CUR_SPLIT_COLUMNS) <= names


def _check_file(con: duckdb.DuckDBPyConnection, path: Path, shown: str, table: BillTable, split: bool) -> None:
    """The file is Parquet with every needed column of the right type family; else a BillError naming both."""
    import duckdb

    if not path.is_file():
        raise BillError(f"{shown}: data file not found")
    try:
        described = {
            str(row[0]): str(row[1])
            for row in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{_quote(path)}')").fetchall()
        }
    except duckdb.Error as exc:
        raise BillError(f"{shown}: unreadable Parquet ({str(exc).splitlines()[0]})") from exc
    wanted = {**_required(table), **(CUR_SPLIT_COLUMNS if split else {})}
    for column, family in wanted.items():
        if column not in described:
            raise BillError(f"{shown}: column {column} missing")
        found = _type_family(described[column])
        if found != family:
            raise BillError(f"{shown}: column {column} is {described[column]}, expected {family}")


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


@dataclass
class ReadResult:
    """The query's aggregated rows as tuples in :data:`RESULT_COLUMNS` order (``rows``: the same as mappings)."""

    records: Sequence[Sequence[Any]]
    bytes_read: int

    @property
    def rows(self) -> Iterator[dict[str, Any]]:
        for record in self.records:
            yield dict(zip(RESULT_COLUMNS, record, strict=True))


def _cores() -> int:
    """The CPU cores this process may run on (DuckDB's threads)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


FETCH_BATCH = 50_000  # result rows fetched at a time when they are consumed as they come


def run_duckdb(
    files: Sequence[tuple[Path, str]],
    table: BillTable,
    split: bool,
    sink: Callable[[Sequence[Any]], None] | None = None,
) -> ReadResult:
    """The logical query over the period's Parquet files (each checked first: named in any error). With ``sink``,
    each result row goes to it as it is fetched (in batches: the whole result is never held) and the returned
    records are empty."""
    import duckdb

    con = duckdb.connect(config={"threads": _cores()})
    try:
        for path, shown in files:
            _check_file(con, path, shown, table, split)
        paths = ", ".join(f"'{_quote(p)}'" for p, _ in files)
        sql = logical_query(table, f"read_parquet([{paths}], union_by_name = true)", split=split)
        try:
            cursor = con.execute(sql)
        except duckdb.Error as exc:
            raise BillError(f"{files[0][1]}: the bill query failed ({str(exc).splitlines()[0]})") from exc
        names = tuple(d[0] for d in cursor.description or [])
        if names != RESULT_COLUMNS:
            raise BillError(f"{files[0][1]}: the bill query returned {', '.join(names)}")
        size = sum(p.stat().st_size for p, _ in files)
        try:
            return ReadResult(_fetch(cursor, sink), size)
        except duckdb.Error as exc:
            raise BillError(f"{files[0][1]}: the bill query failed ({str(exc).splitlines()[0]})") from exc
    finally:
        con.close()


def _fetch(cursor: duckdb.DuckDBPyConnection, sink: Callable[[Sequence[Any]], None] | None) -> list[Any]:
    """Every result row (tuples, no mapping per row), or, with ``sink``, each to it in batches (none returned)."""
    if sink is None:
        return cursor.fetchall()
    while batch := cursor.fetchmany(FETCH_BATCH):
        for record in batch:
            sink(record)
    return []


def _download(
    aws: AwsContext, location: ExportLocation, data_files: Sequence[str], into: Path
) -> list[tuple[Path, str]]:
    s3 = aws.client("s3")
    found: list[tuple[Path, str]] = []
    for index, uri in enumerate(data_files):
        target = into / f"{index:05d}.parquet"
        try:
            s3.download_file(location.bucket or "", location.key(uri), str(target))
        except ClientError as exc:
            raise denied(exc, "s3:GetObject", uri) from exc
        except BotoCoreError as exc:
            raise UpstreamError(f"s3:GetObject on {uri} failed: {exc}") from exc
        found.append((target, uri))
    return found


@dataclass(frozen=True)
class AthenaTable:
    database: str
    table: str
    workgroup: str
    output_location: str | None = None
    poll_seconds: float = 1.0
    timeout_seconds: float = 600.0


def athena_statement(table: BillTable, athena: AthenaTable, period: str, split: bool) -> str:
    """The logical query for Athena: the export's table, filtered on its ``billing_period`` partition."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", athena.database) or not re.fullmatch(r"[A-Za-z0-9_]+", athena.table):
        raise BillError(f"athena table {athena.database}.{athena.table}: letters, digits and _ only")
    source = f'"{athena.database}"."{athena.table}"'
    return logical_query(table, source, where=f"billing_period = '{period}'", split=split, dialect="athena")


def _wait_for_athena(client: Any, athena: AthenaTable, execution_id: str, target: str) -> int:
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


def run_athena(aws: AwsContext, athena: AthenaTable, table: BillTable, period: str, split: bool) -> ReadResult:
    """Check the table (Glue), start the query, wait for it, read every page of its result."""
    target = f"{athena.database}.{athena.table}"
    try:
        aws.client("glue").get_table(DatabaseName=athena.database, Name=athena.table)
    except ClientError as exc:
        raise denied(exc, "glue:GetTable", target) from exc
    client = aws.client("athena")
    params: dict[str, Any] = {
        "QueryString": athena_statement(table, athena, period, split),
        "QueryExecutionContext": {"Database": athena.database},
        "WorkGroup": athena.workgroup,
    }
    if athena.output_location:
        params["ResultConfiguration"] = {"OutputLocation": athena.output_location}
    try:
        execution_id = client.start_query_execution(**params)["QueryExecutionId"]
    except ClientError as exc:
        raise denied(exc, "athena:StartQueryExecution", target) from exc
    scanned = _wait_for_athena(client, athena, execution_id, target)
    rows: list[dict[str, Any]] = []
    try:
        pages = client.get_paginator("get_query_results").paginate(QueryExecutionId=execution_id)
        header: list[str] | None = None
        for page in pages:
            for row in page.get("ResultSet", {}).get("Rows", []):
                values = [d.get("VarCharValue") for d in row.get("Data", [])]
                if header is None:
                    header = [str(v) for v in values]
                    continue
                rows.append(dict(zip(header, values, strict=False)))
    except ClientError as exc:
        raise denied(exc, "athena:GetQueryResults", target) from exc
    return ReadResult([tuple(row.get(name) for name in RESULT_COLUMNS) for row in rows], scanned)


# --- from rows to a billing period ---------------------------------------------------------------------------------

USAGE_KINDS: frozenset[str] = frozenset({"on_demand", "spot", "savings_plan", "reservation"})
REASONS = {
    "commitment_unused": "a Savings Plan's or reservation's unused commitment: the commitment's cost, no resource's",
    "credit": "credits apply to the bill, not to a resource",
    "refund": "refunds apply to the bill, not to a resource",
    "tax": "tax is kept apart from resource costs",
    "fee": "a fee with no resource (support, subscriptions)",
    "upfront_fee": "an upfront commitment fee: already inside the covered usage's effective cost",
    "other": "a line item type that is no resource's usage",
    "no_resource": "usage without a resource id",
}


def _decimal(value: Any) -> Decimal:
    if type(value) is str and value:  # the query's sums, as exact decimal text
        return Decimal(value)
    if type(value) is Decimal:
        return value
    if value is None or value == "":
        return Decimal(0)
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _day(value: Any) -> date:
    if type(value) is date:  # DuckDB's
        return value
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def parse_tags(value: Any) -> dict[str, str]:
    """A map column as a dict, as DuckDB's ``to_json`` writes it (``{"k":"v"}``) or as Athena prints it
    (``{k=v, k2=v2}``)."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items() if v is not None and v != ""}
    text = str(value).strip()
    if text.startswith('{"'):  # DuckDB's to_json
        try:
            found_json = json.loads(text)
        except ValueError:
            found_json = None
        if isinstance(found_json, dict):
            return parse_tags(found_json)
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    found: dict[str, str] = {}
    for part in text.split(", "):
        key, sep, item = part.partition("=")
        if sep and key.strip() and item.strip():
            found[key.strip()] = item.strip()
    return found


def _end_date(value: str) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def _accelerator(instance_type: str | None) -> bool:
    platform = platform_of(instance_type) if instance_type else None
    return platform is not None and platform not in ("cpu", "other")


def assemble(
    rows: Iterable[Mapping[str, Any]],
    *,
    period: str,
    table: BillTable,
    export_uri: str,
    manifest_uri: str,
    execution_id: str,
    engine: Engine,
    bytes_read: int,
) -> BillPeriod:
    """The query's rows (mappings by column name) as one billing period: see :func:`assemble_records`."""
    return assemble_records(
        (tuple(row.get(name) for name in RESULT_COLUMNS) for row in rows),
        period=period,
        table=table,
        export_uri=export_uri,
        manifest_uri=manifest_uri,
        execution_id=execution_id,
        engine=engine,
        bytes_read=bytes_read,
    )


def assemble_records(
    records: Iterable[Sequence[Any]],
    *,
    period: str,
    table: BillTable,
    export_uri: str,
    manifest_uri: str,
    execution_id: str,
    engine: Engine,
    bytes_read: int,
) -> BillPeriod:
    """The query's aggregated rows (tuples in :data:`RESULT_COLUMNS` order) as one billing period: resources,
    commitments (with coverage of accelerator hours and utilisation), and what no resource carries."""
    result = BillPeriod(
        billing_period=period,
        table=table,
        export_uri=export_uri,
        manifest_uri=manifest_uri,
        execution_id=execution_id,
        engine=engine,
        bytes_read=bytes_read,
    )
    assembler = _Assembler(result)
    for record in records:
        assembler.add(record)
    return assembler.finish()


# Positions of the result columns in a record (the query's SELECT order).
(
    _ACCOUNT, _REGION, _DAY, _RESOURCE, _PARENT, _SERVICE, _USAGE_TYPE, _KIND, _ARN, _EFFECTIVE, _BILLED, _LIST_COST,
    _LIST_RATE, _HOURS, _COMMITMENT_TOTAL, _OFFERING, _FAMILY, _END, _TAGS, _LINE_ITEMS,
) = range(len(RESULT_COLUMNS))  # fmt: skip


class _Assembler:
    """Adds the query's records to a billing period. Per-row work is only what the row itself carries: the usage
    type's instance type and a tag set are parsed once per distinct value (the caches), sums arrive as Decimals."""

    def __init__(self, result: BillPeriod) -> None:
        self.result = result
        self.unattributed: dict[tuple[str, str, str], Decimal] = defaultdict(Decimal)
        self.commitments: dict[str, dict[str, Any]] = {}
        self.shared_tags: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}  # one dict per distinct tag set
        self.tags_seen: dict[Any, dict[str, str]] = {}  # the raw value (its items, or Athena's text) → that dict
        self.instance_types: dict[str, str | None] = {}

    def add(self, r: Sequence[Any]) -> None:
        kind = r[_KIND] or ""
        self.result.line_items += int(r[_LINE_ITEMS] or 0)
        if kind == "negation":  # cancels the covered usage's unblended cost: nobody's effective cost
            return
        account = r[_ACCOUNT] or ""
        effective = _decimal(r[_EFFECTIVE])
        arn = r[_ARN] or ""
        if arn:
            entry = self.commitments.get(arn)
            if entry is None:
                entry = self.commitments[arn] = _commitment_entry(account)
            for key, at in (("offering", _OFFERING), ("family", _FAMILY), ("end", _END)):
                entry[key] = entry.get(key) or _text(r[at])
        if kind in USAGE_KINDS and r[_RESOURCE]:
            self._resource(r, kind, account, effective, arn)
            return
        if kind == "commitment_unused" and arn:
            entry = self.commitments[arn]
            total = _decimal(r[_COMMITMENT_TOTAL])
            entry["unused"] += effective
            entry["total"] += total
            entry["fee_hours"] += _decimal(r[_HOURS]) if total else 0
        category = "no_resource" if kind in USAGE_KINDS else kind
        if effective:
            self.unattributed[(account, _text(r[_REGION]), category)] += effective

    def finish(self) -> BillPeriod:
        """The period with what no resource carries and the commitments (once every record is added)."""
        self.result.unattributed = [
            Unattributed(account, region, category, REASONS.get(category, REASONS["other"]), amount)
            for (account, region, category), amount in sorted(self.unattributed.items())
        ]
        self.result.commitments = _commitments(self.commitments, self.result.resources)
        return self.result

    def _resource(self, r: Sequence[Any], kind: str, account: str, effective: Decimal, arn: str) -> None:
        usage_type = r[_USAGE_TYPE] or ""
        rate = r[_LIST_RATE]
        cost = ResourceCost(
            account_id=account,
            region=r[_REGION] or "",
            day=_day(r[_DAY]),
            resource_id=r[_RESOURCE],
            service=r[_SERVICE] or "",
            usage_type=usage_type,
            instance_type=self._instance_type(usage_type),
            pricing=_pricing(kind),
            effective_cost=effective,
            billed_cost=_decimal(r[_BILLED]),
            public_on_demand_cost=_decimal(r[_LIST_COST]),
            public_on_demand_rate=None if rate is None or rate == "" else _decimal(rate),
            usage_hours=_decimal(r[_HOURS]),
            commitment_arn=arn or None,
            parent_resource_id=r[_PARENT] or None,
            tags=self._tags(r[_TAGS]),
        )
        self.result.resources.append(cost)
        if arn and cost.parent_resource_id is None:
            entry = self.commitments[arn]
            entry["used"] += effective
            entry["accounts"].add(account)

    def _instance_type(self, usage_type: str) -> str | None:
        if usage_type not in self.instance_types:
            self.instance_types[usage_type] = describe_usage_type(usage_type)[1] if usage_type else None
        return self.instance_types[usage_type]

    def _tags(self, value: Any) -> dict[str, str]:
        """The same dict for the same tags (a resource's lines all carry its tags: one copy, not one per day)."""
        key = (
            value
            if value is None or type(value) is str
            else tuple(value.items())
            if isinstance(value, Mapping)
            else value
        )
        try:
            return self.tags_seen[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable value: parsed, not remembered
            return _shared(self.shared_tags, parse_tags(value))
        found = self.tags_seen[key] = _shared(self.shared_tags, parse_tags(value))
        return found


def _shared(cache: dict[tuple[tuple[str, str], ...], dict[str, str]], tags: dict[str, str]) -> dict[str, str]:
    """The same dict for the same tags (a resource's lines all carry its tags: one copy, not one per day)."""
    key = tuple(sorted(tags.items()))
    return cache.setdefault(key, tags)


def _commitment_entry(account: str) -> dict[str, Any]:
    zero = Decimal(0)
    return {"accounts": set(), "used": zero, "unused": zero, "total": zero, "fee_hours": zero, "account": account}


def _pricing(kind: str) -> Pricing:
    if kind == "spot":
        return "spot"
    if kind == "savings_plan":
        return "savings_plan"
    if kind == "reservation":
        return "reservation"
    return "on_demand"


def _commitments(found: Mapping[str, Mapping[str, Any]], resources: Sequence[ResourceCost]) -> list[Commitment]:
    hours_by_account: dict[str, Decimal] = defaultdict(Decimal)
    covered: dict[str, Decimal] = defaultdict(Decimal)
    accelerator: dict[str | None, bool] = {}
    for cost in resources:
        if cost.instance_type not in accelerator:
            accelerator[cost.instance_type] = _accelerator(cost.instance_type)
        if cost.parent_resource_id is None and accelerator[cost.instance_type]:
            hours_by_account[cost.account_id] += cost.usage_hours
            if cost.commitment_arn:
                covered[cost.commitment_arn] += cost.usage_hours
    commitments = []
    for arn, entry in sorted(found.items()):
        hourly = (entry["total"] / entry["fee_hours"]).quantize(Decimal("0.0001")) if entry["fee_hours"] > 0 else None
        accounts = entry["accounts"] or {entry["account"]}
        entry = {"offering": "", "family": "", "end": "", **entry}
        commitments.append(
            Commitment(
                arn=arn,
                account_id=str(entry["account"]),
                kind="savings_plan" if ":savingsplan/" in arn else "reservation",
                offering_type=entry["offering"] or None,
                family=entry["family"] or None,
                hourly_commitment=hourly,
                end_date=_end_date(str(entry["end"])),
                used_cost=entry["used"],
                unused_cost=entry["unused"],
                covered_accelerator_hours=covered.get(arn, Decimal(0)),
                accelerator_hours=sum((hours_by_account[a] for a in accounts), Decimal(0)),
            )
        )
    return commitments


# --- reading one billing period ------------------------------------------------------------------------------------


def read_period(
    aws: AwsContext | None,
    data_export_uri: str,
    period: str,
    *,
    engine: Engine = "duckdb",
    athena: AthenaTable | None = None,
) -> BillPeriod:
    """One billing period of the export: the manifest first, then its files (DuckDB) or the export's table
    (Athena), through the one logical query."""
    location = ExportLocation.parse(data_export_uri)
    manifest_uri, manifest = read_manifest(aws, location, period)
    table = table_of(manifest, manifest_uri)
    split = _check_manifest_columns(manifest, manifest_uri, table)
    result = BillPeriod(
        billing_period=period,
        table=table,
        export_uri=location.uri,
        manifest_uri=manifest_uri,
        execution_id=manifest.execution_id,
        engine=engine,
        bytes_read=0,
    )
    assembler = _Assembler(result)  # DuckDB's rows are assembled as they are fetched
    found: ReadResult
    if engine == "athena":
        if aws is None or athena is None:
            raise BillError("the athena engine needs athena_database, athena_table and athena_workgroup")
        found = run_athena(aws, athena, table, period, split)
    elif location.bucket is None:
        files = [(location.local(uri), uri) for uri in manifest.data_files]
        found = run_duckdb(files, table, split, sink=assembler.add)
    else:
        if aws is None:
            raise BillError(f"{location.uri}: an s3:// export needs AWS access")
        scratch = Path(tempfile.mkdtemp(prefix="chipwise-bill-"))
        try:
            found = run_duckdb(_download(aws, location, manifest.data_files, scratch), table, split, assembler.add)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    for record in found.records:
        assembler.add(record)
    result.bytes_read = found.bytes_read
    return assembler.finish()
