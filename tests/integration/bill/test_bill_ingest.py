"""The bill ingested from the emulator's S3 (DuckDB) and through the emulator's Athena: stored per billing period,
a re-delivered period replacing the earlier one, a bad period storing nothing, denied calls naming the action; a
legacy Cost and Usage Report in its own delivery layout (its period manifest and the ``reportKeys`` it lists)
stored like any export, the delivered legacy manifest's object key storing its period."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.aws import aws_context
from chipwise.collect.bill_export import RESULT_COLUMNS, AthenaTable, BillAccessDenied, BillError, parse_tags
from chipwise.collect.bill_export.duckdb_engine import run_duckdb
from chipwise.pipeline.bill_ingest import ingest_bill, ingest_manifest_object
from chipwise.store.tables import BillCommitment, BillPeriodRow, BillResourceCost, BillUnattributed
from chipwise_devkit.bill_export import Line, line_item_type_bill, upload_export, write_export, write_legacy_report

# Hand-computed effective costs of line_item_type_bill (see tests/unit/collect/test_collect_bill.py)
EFFECTIVE = {
    "i-0d000000000000001": Decimal("7.582"),
    "i-0e000000000000002": Decimal("150.5"),
    "i-0f000000000000003": Decimal("12"),
    "i-0a000000000000004": Decimal("1.509"),
}

BUCKET = "chipwise-payer-bills"
DENY_GET = {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{BUCKET}/*"}


def _export(tmp_path: Path, lines: list[Line], period: str = "2026-11", **kw: Any) -> Path:
    return write_export(tmp_path, "chipwise-cur", period, lines, bucket=BUCKET, prefix="cur", **kw)


def _upload(export: Path) -> str:
    s3 = boto3.client("s3", region_name="us-east-1")
    if BUCKET not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
        s3.create_bucket(Bucket=BUCKET)
    return upload_export(s3, export, BUCKET, "cur")


def _stored(session: Session) -> dict[str, Decimal]:
    found: dict[str, Decimal] = {}
    for row in session.scalars(select(BillResourceCost)):
        found[row.resource_id] = found.get(row.resource_id, Decimal(0)) + row.effective_cost
    return found


def test_ingest_from_s3_with_duckdb_and_redelivery_replaces(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    uri = _upload(_export(tmp_path / "first", line_item_type_bill()))
    assert uri == f"s3://{BUCKET}/cur/chipwise-cur"
    (stored,) = ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    assert (stored.table_name, stored.line_items) == ("COST_AND_USAGE_REPORT", 9)  # every line read, the negation too
    with session_factory() as session:
        assert _stored(session) == EFFECTIVE
        assert session.query(BillCommitment).count() == 2
    # Data Exports re-delivers the period (overwrite): the on-demand instance ran 2 more hours
    first = line_item_type_bill()
    longer = Line(first[0].account_id, "Usage", first[0].start, first[0].usage_type, first[0].resource_id, hours=12,
                  unblended_cost=9.0984, public_on_demand_rate=0.7582, public_on_demand_cost=9.0984)  # fmt: skip
    again = [*first[1:], longer]
    _upload(_export(tmp_path / "second", again, execution_id="00000000-0000-4000-8000-000000000002"))
    ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 1
        assert session.scalars(select(BillPeriodRow.execution_id)).one().endswith("0002")
        assert _stored(session)["i-0d000000000000001"] == Decimal("9.0984")  # replaced, not added to
        assert session.query(BillCommitment).count() == 2
        assert session.query(BillUnattributed).count() == 3


def test_a_bad_period_stores_nothing_of_itself(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    october = [replace(line, start=line.start.replace(month=10)) for line in line_item_type_bill()]
    good = _export(tmp_path, october, period="2026-10")
    bad = _export(tmp_path, line_item_type_bill(), period="2026-11")
    data = next((bad / "data/BILLING_PERIOD=2026-11").glob("*.parquet"))
    data.write_bytes(data.read_bytes()[: len(data.read_bytes()) // 2])  # a truncated delivery
    uri = _upload(good)
    with pytest.raises(BillError, match=r"BILLING_PERIOD=2026-11/chipwise-cur-00001.snappy.parquet: unreadable"):
        ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-10", "2026-11"], engine="duckdb")
    with session_factory() as session:
        assert list(session.scalars(select(BillPeriodRow.billing_period))) == ["2026-10"]


def test_missing_manifest_and_denied_read_name_the_file_and_the_action(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    uri = _upload(_export(tmp_path, line_item_type_bill()))
    with pytest.raises(BillError, match=r"BILLING_PERIOD=2026-09/chipwise-cur-Manifest.json: manifest not found"):
        ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-09"], engine="duckdb")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.put_bucket_policy(
        Bucket=BUCKET,
        Policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Deny",
                        "Principal": "*",
                        "Action": "s3:GetObject",
                        "Resource": f"arn:aws:s3:::{BUCKET}/*",
                    }
                ],
            }
        ),
    )
    try:
        with pytest.raises(BillAccessDenied, match=r"s3:GetObject"):
            ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    finally:
        s3.delete_bucket_policy(Bucket=BUCKET)


def _athena_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DuckDB's result rows as Athena's GetQueryResults prints them: the header row first, every value a string
    (a map as ``{k=v, ...}``, null as an empty datum)."""

    def cell(value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if isinstance(value, dict):
            return {"VarCharValue": "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"}
        return {"VarCharValue": value.isoformat() if isinstance(value, date) else str(value)}

    header = {"Data": [{"VarCharValue": name} for name in RESULT_COLUMNS]}
    return [header, *({"Data": [cell(row[name]) for name in RESULT_COLUMNS]} for row in rows)]


def test_athena_statement_and_its_result_stored_like_duckdb(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    export = _export(tmp_path, line_item_type_bill())
    uri = _upload(export)
    glue = boto3.client("glue", region_name="us-east-1")
    glue.create_database(DatabaseInput={"Name": "cur"})
    glue.create_table(
        DatabaseName="cur",
        TableInput={"Name": "chipwise_cur", "PartitionKeys": [{"Name": "billing_period", "Type": "string"}]},
    )
    files = [(p, p.name) for p in sorted((export / "data").rglob("*.parquet"))]
    records: list[Any] = []
    run_duckdb(files, "COST_AND_USAGE_REPORT", "parquet", "2026-11", records.append)
    expected = [dict(zip(RESULT_COLUMNS, record, strict=True)) for record in records]
    aws.inject_athena_results([{"rows": _athena_rows(expected), "column_info": []}])
    aws._post("/moto-api/state-manager/set-transition",
              {"model_name": "athena::execution", "transition": {"progression": "immediate"}})  # fmt: skip
    athena = AthenaTable("cur", "chipwise_cur", "primary", "s3://chipwise-athena-results/", poll_seconds=0.01)
    (stored,) = ingest_bill(
        aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="athena", athena=athena
    )
    assert stored.engine == "athena"
    client = boto3.client("athena", region_name="us-east-1")
    (execution_id,) = client.list_query_executions()["QueryExecutionIds"]
    sent = client.get_query_execution(QueryExecutionId=execution_id)["QueryExecution"]["Query"]
    assert 'FROM "cur"."chipwise_cur" WHERE billing_period = \'2026-11\'' in sent
    assert "SELECT *" not in sent and "bill_invoice_id" not in sent
    with session_factory() as session:
        by_athena = _stored(session)
        tags = {r.resource_id: r.tags for r in session.scalars(select(BillResourceCost))}
    assert by_athena == EFFECTIVE
    assert tags["i-0d000000000000001"] == {"user:team": "ml-platform", "user:owner": "ana"}
    assert parse_tags("{user:team=ml-platform, user:owner=ana}") == tags["i-0d000000000000001"]


def test_athena_denied_names_the_action(aws: Any, session_factory: sessionmaker[Session], tmp_path: Path) -> None:
    uri = _upload(_export(tmp_path, line_item_type_bill()))
    athena = AthenaTable("cur", "chipwise_cur", "primary", poll_seconds=0.01)
    aws.inject_fault("glue", "get_table", "AccessDeniedException")
    with pytest.raises(BillAccessDenied, match=r"glue:GetTable on cur.chipwise_cur"):
        ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="athena",
                    athena=athena)  # fmt: skip
    glue = boto3.client("glue", region_name="us-east-1")
    glue.create_database(DatabaseInput={"Name": "cur"})
    glue.create_table(DatabaseName="cur", TableInput={"Name": "chipwise_cur"})
    aws.inject_fault("athena", "start_query_execution", "AccessDeniedException")
    with pytest.raises(BillAccessDenied, match=r"athena:StartQueryExecution"):
        ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="athena",
                    athena=athena)  # fmt: skip
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 0


def test_the_lambda_stores_the_period_its_manifest_event_names(
    aws: Any,
    use_db: str,
    session_factory: sessionmaker[Session],
    tmp_path: Path,
    lambda_context: Any,
) -> None:
    import importlib.util

    _upload(_export(tmp_path, line_item_type_bill()))
    root = Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location("ingest_bill_app", root / "functions/ingest_bill/app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    event = json.loads((root / "events/ingest_bill/s3_manifest_created.json").read_text())
    answer = module.handler(event, lambda_context)
    assert answer == {
        "status": "stored",
        "stored": [{"billing_period": "2026-11", "line_items": 9, "table": "COST_AND_USAGE_REPORT"}],
        "errors": [],
    }
    with session_factory() as session:
        assert _stored(session) == EFFECTIVE
    # a data file's event is not a manifest: nothing to do
    event["Records"][0]["s3"]["object"]["key"] = "cur/chipwise-cur/data/BILLING_PERIOD%3D2026-11/x.parquet"
    assert module.handler(event, lambda_context)["status"] == "ignored"


LEGACY_BUCKET = "chipwise-legacy-bills"
LEGACY_MANIFEST = "cur/chipwise-legacy/20261101-20261201/chipwise-legacy-Manifest.json"


def _upload_legacy(tmp_path: Path, data_format: str) -> str:
    report = write_legacy_report(tmp_path, "chipwise-legacy", "2026-11", line_item_type_bill(), data_format,  # type: ignore[arg-type]
                                 where=f"{LEGACY_BUCKET}/cur")  # fmt: skip
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=LEGACY_BUCKET)
    return upload_export(s3, report, LEGACY_BUCKET, "cur")


@pytest.mark.parametrize("data_format", ["csv", "parquet"])
def test_a_legacy_report_from_s3_is_stored_like_any_export(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path, data_format: str
) -> None:
    uri = _upload_legacy(tmp_path, data_format)
    assert uri == f"s3://{LEGACY_BUCKET}/cur/chipwise-legacy"
    (stored,) = ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    assert (stored.table_name, stored.line_items) == ("LEGACY_CUR", 9)
    with session_factory() as session:
        assert _stored(session) == EFFECTIVE
        row = session.scalars(select(BillPeriodRow)).one()
        assert row.manifest_uri == f"s3://{LEGACY_BUCKET}/{LEGACY_MANIFEST}"


def test_a_legacy_manifest_naming_another_bucket_stores_nothing(
    aws: Any, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    uri = _upload_legacy(tmp_path, "parquet")
    s3 = boto3.client("s3", region_name="us-east-1")
    body = json.loads(s3.get_object(Bucket=LEGACY_BUCKET, Key=LEGACY_MANIFEST)["Body"].read())
    s3.put_object(
        Bucket=LEGACY_BUCKET, Key=LEGACY_MANIFEST, Body=json.dumps({**body, "bucket": "someone-elses-bucket"}).encode()
    )
    with pytest.raises(BillError, match=r"data file s3://someone-elses-bucket/cur/chipwise-legacy/.* is not under"):
        ingest_bill(aws_context("us-east-1"), session_factory, uri=uri, periods=["2026-11"], engine="duckdb")
    with session_factory() as session:
        assert session.query(BillPeriodRow).count() == 0


def test_the_delivered_legacy_manifest_stores_its_period(
    aws: Any, use_db: str, session_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    _upload_legacy(tmp_path, "csv")
    stored = ingest_manifest_object(LEGACY_BUCKET, LEGACY_MANIFEST)
    assert (stored.billing_period, stored.line_items, stored.table_name) == ("2026-11", 9, "LEGACY_CUR")
    with session_factory() as session:
        assert _stored(session) == EFFECTIVE
