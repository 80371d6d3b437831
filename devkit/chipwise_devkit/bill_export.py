"""A realistic AWS export, written the way AWS delivers one: data files under ``data/BILLING_PERIOD=YYYY-MM/``
(Parquet written with DuckDB's ``COPY ... TO (FORMAT parquet)``, or gzip CSV) and
``metadata/BILLING_PERIOD=YYYY-MM/<export-name>-Manifest.json``, with every column the format's data file lists
(``chipwise/collect/bill_export/formats/*.json``: AWS's table dictionaries), so that a drift between what we write
and what AWS documents shows in the tests.

A bill is described once as :class:`Line` (CUR 2.0 line items); its FOCUS 1.0 and 1.2 exports are derived from it
the way AWS maps the two (negations folded away, a commitment's recurring fee as a Purchase plus its unused part as
Usage with ``CommitmentDiscountStatus`` Unused), its legacy CUR with one column per cost allocation tag."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from chipwise.collect.bill_export.formats import export_format, legacy_parquet_name
from chipwise.collect.bill_export.manifest import legacy_range

Table = Literal["COST_AND_USAGE_REPORT", "FOCUS_1_0_AWS", "FOCUS_1_2_AWS", "LEGACY_CUR"]
DataFormat = Literal["parquet", "csv"]
DUCK_TYPES = {
    "string": "VARCHAR",
    "double": "DOUBLE",
    "timestamp": "TIMESTAMP",
    "map<string,string>": "MAP(VARCHAR, VARCHAR)",
    "map<string,double>": "MAP(VARCHAR, DOUBLE)",
}


def schema(table: Table, tag_keys: Sequence[str] = (), data_format: DataFormat = "parquet") -> dict[str, str]:
    """The export's columns and DuckDB types, from the format's data file (AWS's table dictionary): every
    documented column, in AWS's names (legacy CUR: CSV headers or their Parquet names, plus one column per tag)."""
    fmt = export_format(table)
    if table != "LEGACY_CUR":
        return {name: DUCK_TYPES[kind] for name, kind in fmt.columns.items()}
    found = {
        (name if data_format == "csv" else legacy_parquet_name(name)): DUCK_TYPES[kind]
        for name, kind in fmt.columns.items()
    }
    for key in tag_keys:
        header = f"resourceTags/{key}"
        found[header if data_format == "csv" else legacy_parquet_name(header)] = "VARCHAR"
    return found


SERVICE_NAMES = {"AmazonEC2": "Amazon Elastic Compute Cloud", "AmazonSageMaker": "Amazon SageMaker"}


@dataclass(frozen=True)
class Line:
    """One CUR 2.0 line item (only what differs from line to line; the rest is derived)."""

    account_id: str
    line_item_type: str
    start: datetime
    usage_type: str = ""
    resource_id: str = ""
    product_code: str = "AmazonEC2"
    region: str = "us-east-1"
    hours: float = 0.0
    unblended_cost: float = 0.0
    public_on_demand_rate: float | None = None
    public_on_demand_cost: float = 0.0
    pricing_term: str = ""
    sp_arn: str = ""
    sp_effective_cost: float = 0.0
    sp_total_commitment: float = 0.0
    sp_used_commitment: float = 0.0
    sp_offering_type: str = ""
    sp_family: str = ""
    sp_end_time: str = ""
    sp_start_time: str = ""
    sp_region: str = ""
    ri_arn: str = ""
    ri_effective_cost: float = 0.0
    ri_unused_upfront: float = 0.0
    ri_unused_recurring: float = 0.0
    ri_end_time: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    split_parent: str = ""
    split_cost: float = 0.0
    split_usage: float = 0.0
    split_public_cost: float = 0.0
    payer: str = ""


def cur_row(line: Line) -> dict[str, Any]:
    period_start = line.start.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    instance_type = line.usage_type.split(":", 1)[1] if ":" in line.usage_type else ""
    return {
        "bill_billing_period_start_date": period_start,
        "bill_payer_account_id": line.payer or line.account_id,
        "line_item_usage_account_id": line.account_id,
        "line_item_line_item_type": line.line_item_type,
        "line_item_usage_start_date": line.start,
        "line_item_usage_end_date": line.start + timedelta(hours=max(line.hours, 1.0)),
        "line_item_product_code": line.product_code,
        "line_item_usage_type": line.usage_type,
        "line_item_operation": "RunInstances" if line.product_code == "AmazonEC2" else "",
        "line_item_resource_id": line.resource_id,
        "line_item_usage_amount": line.hours,
        "line_item_unblended_rate": "",
        "line_item_unblended_cost": line.unblended_cost,
        "line_item_line_item_description": line.line_item_type,
        "product_region_code": line.region,
        "product_instance_type": instance_type,
        "pricing_term": line.pricing_term,
        "pricing_public_on_demand_cost": line.public_on_demand_cost,
        "pricing_public_on_demand_rate": "" if line.public_on_demand_rate is None else repr(line.public_on_demand_rate),
        "savings_plan_savings_plan_a_r_n": line.sp_arn,
        "savings_plan_savings_plan_effective_cost": line.sp_effective_cost,
        "savings_plan_savings_plan_rate": 0.0,
        "savings_plan_total_commitment_to_date": line.sp_total_commitment,
        "savings_plan_used_commitment": line.sp_used_commitment,
        "savings_plan_offering_type": line.sp_offering_type,
        "savings_plan_instance_type_family": line.sp_family,
        "savings_plan_end_time": line.sp_end_time,
        "savings_plan_start_time": line.sp_start_time,
        "savings_plan_region": line.sp_region,
        "reservation_reservation_a_r_n": line.ri_arn,
        "reservation_effective_cost": line.ri_effective_cost,
        "reservation_unused_amortized_upfront_fee_for_billing_period": line.ri_unused_upfront,
        "reservation_unused_recurring_fee": line.ri_unused_recurring,
        "reservation_end_time": line.ri_end_time,
        "resource_tags": dict(line.tags),
        "split_line_item_parent_resource_id": line.split_parent or None,
        "split_line_item_split_cost": line.split_cost if line.split_parent else None,
        "split_line_item_split_usage": line.split_usage if line.split_parent else None,
        "split_line_item_public_on_demand_split_cost": line.split_public_cost if line.split_parent else None,
    }


def focus_rows(line: Line, table: Table = "FOCUS_1_2_AWS") -> list[dict[str, Any]]:
    """The FOCUS rows of one CUR line item (none for a negation or a split pod line): FOCUS 1.2 carries the usage
    type in ``SkuMeter``, FOCUS 1.0 in ``x_UsageType`` (AWS's migration page)."""
    if line.line_item_type == "SavingsPlanNegation" or line.split_parent:
        return []
    base: dict[str, Any] = {
        "BillingAccountId": line.payer or line.account_id,
        "BillingCurrency": "USD",
        "ProviderName": "AWS",
        "PublisherName": "AWS",
        "InvoiceIssuerName": "AWS",
        "BillingPeriodStart": line.start.replace(day=1, hour=0, minute=0, second=0, microsecond=0),
        "SubAccountId": line.account_id,
        "ChargePeriodStart": line.start,
        "ChargePeriodEnd": line.start + timedelta(hours=max(line.hours, 1.0)),
        "ChargeClass": None,
        "ChargeFrequency": "Usage-Based",
        "PricingCategory": "Standard",
        "RegionId": line.region,
        "ResourceId": line.resource_id or None,
        "ServiceName": SERVICE_NAMES.get(line.product_code, line.product_code),
        "CommitmentDiscountId": None,
        "CommitmentDiscountStatus": None,
        "CommitmentDiscountType": None,
        "BilledCost": line.unblended_cost,
        "EffectiveCost": line.unblended_cost,
        "ListCost": line.public_on_demand_cost,
        "ListUnitPrice": line.public_on_demand_rate,
        "ContractedCost": line.unblended_cost,
        "ConsumedQuantity": line.hours,
        "ConsumedUnit": "Hours" if line.hours else None,
        "Tags": dict(line.tags),
        "x_ServiceCode": line.product_code,
        ("x_UsageType" if table == "FOCUS_1_0_AWS" else "SkuMeter"): line.usage_type,
        "x_Operation": "RunInstances" if line.product_code == "AmazonEC2" else "",
    }
    kind = line.line_item_type
    if kind == "Usage":
        spot = line.pricing_term == "Spot" or "SpotUsage" in line.usage_type
        return [{**base, "ChargeCategory": "Usage", "PricingCategory": "Dynamic" if spot else "Standard"}]
    if kind in ("SavingsPlanCoveredUsage", "DiscountedUsage"):
        sp = kind == "SavingsPlanCoveredUsage"
        return [
            {
                **base,
                "ChargeCategory": "Usage",
                "PricingCategory": "Committed",
                "CommitmentDiscountId": line.sp_arn if sp else line.ri_arn,
                "CommitmentDiscountStatus": "Used",
                "CommitmentDiscountType": "Savings Plan" if sp else "Reservation",
                "BilledCost": 0.0 if sp else line.unblended_cost,
                "EffectiveCost": line.sp_effective_cost if sp else line.ri_effective_cost,
            }
        ]
    if kind in ("SavingsPlanRecurringFee", "RIFee"):
        sp = kind == "SavingsPlanRecurringFee"
        arn = line.sp_arn if sp else line.ri_arn
        unused = (
            (line.sp_total_commitment - line.sp_used_commitment)
            if sp
            else (line.ri_unused_upfront + line.ri_unused_recurring)
        )
        commitment = {
            "CommitmentDiscountId": arn,
            "CommitmentDiscountType": "Savings Plan" if sp else "Reservation",
            "ResourceId": arn,
        }
        rows = [
            {**base, **commitment, "ChargeCategory": "Purchase", "ChargeFrequency": "Recurring",
             "EffectiveCost": 0.0, "ListCost": 0.0, "ConsumedQuantity": 0.0}
        ]  # fmt: skip
        if unused:
            rows.append(
                {**base, **commitment, "ChargeCategory": "Usage", "PricingCategory": "Committed",
                 "CommitmentDiscountStatus": "Unused", "BilledCost": 0.0, "EffectiveCost": unused, "ListCost": 0.0,
                 "ConsumedQuantity": 0.0}
            )  # fmt: skip
        return rows
    category = {"Credit": "Credit", "Tax": "Tax", "Refund": "Adjustment"}.get(kind, "Purchase" if "Fee" in kind else "")
    if kind in ("SavingsPlanUpfrontFee", "Fee") and (line.sp_arn or line.ri_arn):
        return [{**base, "ChargeCategory": "Purchase", "ChargeFrequency": "One-Time", "EffectiveCost": 0.0}]
    return [{**base, "ChargeCategory": category or "Adjustment", "ChargeFrequency": "One-Time"}]


def _copy(rows: Sequence[dict[str, Any]], columns: dict[str, str], target: Path, data_format: DataFormat) -> None:
    """Write the rows with DuckDB: Parquet (snappy) with AWS's types, or gzip CSV (maps as JSON text, timestamps
    in ISO 8601 UTC, as Data Exports' CSV writes them)."""
    import duckdb

    target.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    try:
        typed = ", ".join(f'"{name}" {kind}' for name, kind in columns.items())
        con.execute(f"CREATE TABLE lines ({typed})")
        marks = ", ".join("?" for _ in columns)
        if rows:
            con.executemany(f"INSERT INTO lines VALUES ({marks})", [[row.get(n) for n in columns] for row in rows])
        path = str(target).replace("'", "''")
        if data_format == "csv":
            shown = ", ".join(_csv_column(n, k) for n, k in columns.items())
            con.execute(f"COPY (SELECT {shown} FROM lines) TO '{path}' (FORMAT csv, HEADER, COMPRESSION gzip)")
        else:
            con.execute(f"COPY lines TO '{path}' (FORMAT parquet, COMPRESSION snappy)")
    finally:
        con.close()


def _csv_column(name: str, kind: str) -> str:
    quoted = f'"{name}"'
    if kind.startswith("MAP"):
        return f"to_json({quoted}) AS {quoted}"
    if kind == "TIMESTAMP":
        return f"strftime({quoted}, '%Y-%m-%dT%H:%M:%S.000Z') AS {quoted}"
    return quoted


def _rows(lines: Sequence[Line], table: Table, data_format: DataFormat) -> tuple[list[dict[str, Any]], list[str]]:
    """The export's rows in the format's column names, and the tag keys (legacy CUR: one column each)."""
    if table in ("FOCUS_1_0_AWS", "FOCUS_1_2_AWS"):
        return [r for line in lines for r in focus_rows(line, table)], []
    rows = [cur_row(line) for line in lines]
    if table == "COST_AND_USAGE_REPORT":
        return rows, []
    keys = sorted({key for line in lines for key in line.tags})
    headers = {legacy_parquet_name(name): name for name in export_format("LEGACY_CUR").columns}
    legacy = []
    for row, line in zip(rows, lines, strict=True):
        flat = {(headers[k] if data_format == "csv" else k): v for k, v in row.items() if k in headers}
        for key in keys:
            header = f"resourceTags/{key}"
            flat[header if data_format == "csv" else legacy_parquet_name(header)] = line.tags.get(key)
        legacy.append(flat)
    return legacy, keys


def write_export(
    root: Path,
    export_name: str,
    period: str,
    lines: Iterable[Line],
    *,
    table: Table = "COST_AND_USAGE_REPORT",
    data_format: DataFormat = "parquet",
    bucket: str = "chipwise-bills",
    prefix: str = "exports",
    files: int = 1,
    execution_id: str = "00000000-0000-4000-8000-000000000001",
) -> Path:
    """Write one billing period of an export under ``root/<export_name>/`` (the layout Data Exports uses under
    ``s3://bucket/prefix/``) with every column AWS documents for the format; returns the export directory. The
    manifest's ``dataFiles`` are the S3 URIs the files would have in ``bucket``."""
    export_dir = root / export_name
    rows, tag_keys = _rows(list(lines), table, data_format)
    columns = schema(table, tag_keys, data_format)
    suffix = "csv.gz" if data_format == "csv" else "snappy.parquet"
    data_files: list[str] = []
    for part in range(files):
        name = f"{export_name}-{part + 1:05d}.{suffix}"
        relative = f"data/BILLING_PERIOD={period}/{name}"
        _copy(rows[part::files], columns, export_dir / relative, data_format)
        data_files.append(f"s3://{bucket}/{prefix}/{export_name}/{relative}")
    aws_types = {v: k for k, v in DUCK_TYPES.items()}
    manifest: dict[str, Any] = {
        "executionId": execution_id,
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:111122223333:export/{export_name}-0000",
        "columns": [{"name": name, "type": aws_types[kind]} for name, kind in columns.items()],
        "dataFiles": data_files,
        "billingPeriod": {"start": f"{period}-01T00:00:00Z"},
    }
    if table != "LEGACY_CUR":  # a Data Exports export carries its query; a legacy report has none
        manifest["queryStatement"] = f"SELECT {', '.join(columns)} FROM {table}"
    target = export_dir / f"metadata/BILLING_PERIOD={period}/{export_name}-Manifest.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest, indent=2))
    return export_dir


# A legacy report's manifest types its columns with the report's own names (the data dictionary's "Type").
LEGACY_MANIFEST_TYPES = {"VARCHAR": "OptionalString", "DOUBLE": "OptionalBigDecimal", "TIMESTAMP": "DateTime"}


LEGACY_ASSEMBLY = "8e1f4f5a-0c2b-4d7e-9a51-2f6b3c0d9e11"  # the report version's id, as AWS names its folder


def write_legacy_report(
    root: Path, report_name: str, period: str, lines: Iterable[Line], data_format: DataFormat = "csv",
    *, where: str = "chipwise-bills/cur", files: int = 1,
) -> Path:  # fmt: skip
    """One billing period of a legacy Cost and Usage Report in its own delivery layout under ``root/<report>/``
    (``s3://bucket/prefix/<report>/`` in the manifest), as AWS's CUR user guide describes it:

    - gzip CSV, "create new report versions": ``<report>/yyyymmdd-yyyymmdd/<assemblyId>/<report>-<n>.csv.gz``;
    - Parquet (the Athena integration, which overwrites):
      ``<report>/<report>/year=YYYY/month=M/<report>-0000n.snappy.parquet``, beside
      ``<report>/cost_and_usage_data_status/cost_and_usage_data_status.parquet`` (no bill line);

    and the period's manifest ``<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json`` (``assemblyId``, ``account``,
    ``columns`` as category and name, ``billingPeriod``, ``bucket``, ``reportKeys``: the data files' keys in the
    bucket). ``where`` is the report's bucket and prefix. Returns the report's directory (its ``data_export_uri``
    as a local export)."""
    bucket, _, prefix = where.partition("/")
    assembly_id = LEGACY_ASSEMBLY
    report_dir = root / report_name
    rows, tag_keys = _rows(list(lines), "LEGACY_CUR", data_format)
    columns = schema("LEGACY_CUR", tag_keys, data_format)
    folder = legacy_range(period)
    year, month = int(period[:4]), int(period[5:7])
    keys: list[str] = []
    for part in range(files):
        if data_format == "csv":
            relative = f"{folder}/{assembly_id}/{report_name}-{part + 1}.csv.gz"
        else:
            relative = f"{report_name}/year={year}/month={month}/{report_name}-{part + 1:05d}.snappy.parquet"
        _copy(rows[part::files], columns, report_dir / relative, data_format)
        keys.append(f"{prefix}/{report_name}/{relative}")
    if data_format == "parquet":
        status = report_dir / "cost_and_usage_data_status/cost_and_usage_data_status.parquet"
        _copy([{"status": "READY"}], {"status": "VARCHAR"}, status, "parquet")
    headers = {legacy_parquet_name(h): h for h in export_format("LEGACY_CUR").columns}
    headers.update({legacy_parquet_name(f"resourceTags/{key}"): f"resourceTags/{key}" for key in tag_keys})
    described = []
    for name, kind in columns.items():
        category, _, column = (name if data_format == "csv" else headers[name]).partition("/")
        described.append({"category": category, "name": column, "type": LEGACY_MANIFEST_TYPES[kind]})
    start, end = folder.split("-")
    manifest = {
        "assemblyId": assembly_id,
        "account": TEST_ACCOUNT,
        "columns": described,
        "charset": "UTF-8",
        "compression": "GZIP" if data_format == "csv" else "Parquet",
        "contentType": "text/csv" if data_format == "csv" else "Parquet",
        "reportId": "5d2c4b0e9f8a7c6b5e4d3c2b1a09f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1",
        "reportName": report_name,
        "billingPeriod": {"start": f"{start}T000000.000Z", "end": f"{end}T000000.000Z"},
        "bucket": bucket,
        "reportKeys": keys,
        "additionalArtifactKeys": [],
    }
    target = report_dir / f"{folder}/{report_name}-Manifest.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest, indent=2))
    return report_dir


def upload_export(s3: Any, export_dir: Path, bucket: str, prefix: str) -> str:
    """Put a written export in S3 (data files first, the manifest last, as Data Exports delivers); returns its
    ``data_export_uri``."""
    files = sorted(p for p in export_dir.rglob("*") if p.is_file())
    for path in sorted(files, key=lambda p: p.name.endswith("-Manifest.json")):
        key = f"{prefix}/{export_dir.name}/{path.relative_to(export_dir).as_posix()}"
        s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    return f"s3://{bucket}/{prefix}/{export_dir.name}"


TEST_ACCOUNT = "111111111111"
TEST_SP = f"arn:aws:savingsplans::{TEST_ACCOUNT}:savingsplan/0a1b2c3d-sp"
TEST_RI = f"arn:aws:ec2:us-east-1:{TEST_ACCOUNT}:reserved-instances/ri-0123"
TEST_START = datetime(2026, 11, 3, tzinfo=UTC).replace(tzinfo=None)  # CUR timestamps: UTC, written without a zone


def line_item_type_bill() -> list[Line]:
    """One line of each line item type of account 111111111111 (the tests check each effective cost by hand)."""
    return [
        # on-demand: 10 h × 0.7582 → effective 7.582 (unblended)
        Line(
            TEST_ACCOUNT,
            "Usage",
            TEST_START,
            "USE1-BoxUsage:inf2.xlarge",
            "i-0d000000000000001",
            hours=10,
            unblended_cost=7.582,
            public_on_demand_rate=0.7582,
            public_on_demand_cost=7.582,
            pricing_term="OnDemand",
            tags={"user:team": "ml-platform", "user:owner": "ana"},
        ),
        # Savings Plan: 10 h of trn1.32xlarge, on-demand 215.00, SP effective 150.50 (15.05/h)
        Line(
            TEST_ACCOUNT,
            "SavingsPlanCoveredUsage",
            TEST_START,
            "USE1-BoxUsage:trn1.32xlarge",
            "i-0e000000000000002",
            hours=10,
            unblended_cost=215.0,
            public_on_demand_rate=21.5,
            public_on_demand_cost=215.0,
            pricing_term="OnDemand",
            sp_arn=TEST_SP,
            sp_effective_cost=150.5,
            sp_offering_type="EC2InstanceSavingsPlans",
            sp_family="trn1",
            sp_end_time="2027-06-30T23:59:59.000Z",
            sp_start_time="2026-07-01T00:00:00.000Z",
            sp_region="us-east-1",
        ),
        # its negation cancels the covered usage's unblended cost: excluded
        Line(
            TEST_ACCOUNT,
            "SavingsPlanNegation",
            TEST_START,
            "USE1-BoxUsage:trn1.32xlarge",
            "i-0e000000000000002",
            hours=0,
            unblended_cost=-215.0,
            sp_arn=TEST_SP,
        ),
        # the recurring fee: 20/h committed for 10 h = 200, 150.50 used → 49.50 unused (the commitment's, no resource's)
        Line(
            TEST_ACCOUNT,
            "SavingsPlanRecurringFee",
            TEST_START,
            "",
            TEST_SP,
            product_code="ComputeSavingsPlans",
            hours=10,
            unblended_cost=200.0,
            sp_arn=TEST_SP,
            sp_total_commitment=200.0,
            sp_used_commitment=150.5,
            sp_offering_type="EC2InstanceSavingsPlans",
            sp_family="trn1",
            sp_end_time="2027-06-30T23:59:59.000Z",
        ),
        # a reservation: 10 h of inf2.8xlarge at an effective 1.20/h = 12.00 (unblended 0), on-demand 19.6786
        Line(
            TEST_ACCOUNT,
            "DiscountedUsage",
            TEST_START,
            "USE1-BoxUsage:inf2.8xlarge",
            "i-0f000000000000003",
            hours=10,
            unblended_cost=0.0,
            public_on_demand_rate=1.96786,
            public_on_demand_cost=19.6786,
            pricing_term="Reserved",
            ri_arn=TEST_RI,
            ri_effective_cost=12.0,
            ri_end_time="2027-01-31T00:00:00.000Z",
        ),
        # the RI fee: 14.00 billed, 1.00 unused upfront + 2.00 unused recurring → 3.00 unused (not double counted)
        Line(
            TEST_ACCOUNT,
            "RIFee",
            TEST_START,
            "USE1-HeavyUsage:inf2.8xlarge",
            TEST_RI,
            hours=10,
            unblended_cost=14.0,
            ri_arn=TEST_RI,
            ri_unused_upfront=1.0,
            ri_unused_recurring=2.0,
            ri_end_time="2027-01-31T00:00:00.000Z",
        ),
        # Spot: 5 h of g5.xlarge at 0.3018 → 1.509; public on-demand 5 × 1.006 = 5.03
        Line(
            TEST_ACCOUNT,
            "Usage",
            TEST_START,
            "USE1-SpotUsage:g5.xlarge",
            "i-0a000000000000004",
            hours=5,
            unblended_cost=1.509,
            public_on_demand_rate=1.006,
            public_on_demand_cost=5.03,
            pricing_term="Spot",
        ),
        # a credit and tax: kept apart, never a resource's cost
        Line(TEST_ACCOUNT, "Credit", TEST_START, "", "", product_code="AmazonEC2", unblended_cost=-50.0),
        Line(TEST_ACCOUNT, "Tax", TEST_START, "", "", product_code="AmazonEC2", region="", unblended_cost=12.34),
    ]
