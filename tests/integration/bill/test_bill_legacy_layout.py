"""A legacy Cost and Usage Report in its own delivery layout, ingested from the emulator's S3 (its period manifest
``<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json`` and the ``reportKeys`` it lists) and stored like any export;
the delivered manifest's event stores its period."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.collect.bill_export import BillError
from chipwise.pipeline.bill_ingest import ingest_bill, ingest_manifest_object
from chipwise.store.tables import BillPeriodRow, BillResourceCost
from chipwise_devkit.bill_export import line_item_type_bill, upload_export, write_legacy_report

EFFECTIVE = {
    "i-0d000000000000001": Decimal("7.582"),
    "i-0e000000000000002": Decimal("150.5"),
    "i-0f000000000000003": Decimal("12"),
    "i-0a000000000000004": Decimal("1.509"),
}
BUCKET = "chipwise-legacy-bills"
MANIFEST = "cur/chipwise-legacy/20261101-20261201/chipwise-legacy-Manifest.json"


def _upload(tmp_path: Path, data_format: str) -> str:
    report = write_legacy_report(tmp_path, "chipwise-legacy", "2026-11", line_item_type_bill(), bucket=BUCKET,
                                 prefix="cur", data_format=data_format)  # type: ignore[arg-type]  # fmt: skip
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    return upload_export(s3, report, BUCKET, "cur")


def _stored(session: Session) -> dict[str, Decimal]:
    found: dict[str, Decimal] = {}
    for row in session.scalars(select(BillResourceCost)):
        found[row.resource_id] = found.get(row.resource_id, Decimal(0)) + row.effective_cost
    return found


@pytest.mark.parametrize("data_format", ["csv", "parquet"])
def test_a_legacy_report_from_s3_is_stored_like_any_export(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path, data_format: str
) -> None:
    uri = _upload(tmp_path, data_format)
    assert uri == f"s3://{BUCKET}/cur/chipwise-legacy"
    (stored,) = ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    assert (stored.table_name, stored.line_items) == ("LEGACY_CUR", 9)
    with session_factory() as session:
        assert _stored(session) == EFFECTIVE
        row = session.scalars(select(BillPeriodRow)).one()
        assert row.manifest_uri == f"s3://{BUCKET}/{MANIFEST}"


def test_a_legacy_manifest_naming_another_bucket_stores_nothing(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    uri = _upload(tmp_path, "parquet")
    s3 = boto3.client("s3", region_name="us-east-1")
    body = json.loads(s3.get_object(Bucket=BUCKET, Key=MANIFEST)["Body"].read())
    s3.put_object(Bucket=BUCKET, Key=MANIFEST, Body=json.dumps({**body, "bucket": "someone-elses-bucket"}).encode())
    with pytest.raises(BillError, match=r"data file s3://someone-elses-bucket/cur/chipwise-legacy/.* is not under"):
        ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 0


def test_the_delivered_legacy_manifest_stores_its_period(
    aws: Any, use_db: str, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    _upload(tmp_path, "csv")
    stored = ingest_manifest_object(BUCKET, MANIFEST)
    assert (stored.billing_period, stored.line_items, stored.table_name) == ("2026-11", 9, "LEGACY_CUR")
    with session_factory() as session:
        assert _stored(session) == EFFECTIVE
