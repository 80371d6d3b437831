"""The bill at scale: a synthetic CUR 2.0 export of 10 million line items (one month, 1,000 accounts, 10,000
resources, hourly lines: on-demand, Spot, Savings Plan covered usage with its negations, tax and credits) read
with DuckDB through :func:`chipwise.collect.bill.read_period` and stored in SQLite, in a child process so its
peak memory is the ingest's own.

Figures: line items per CPU second (the child's process time: every DuckDB thread's CPU and Python's, so per CPU
second is per core; DuckDB runs on the cores the process may use) and per wall second, peak resident memory, and
the bytes the projection needs (the column chunks of the columns read, from the Parquet metadata) against the
export's size. Goals (issue 23): ≥ 1 M line items a second per core, peak memory under 1 GiB, only the needed
columns read. ``CHIPWISE_BENCH_BILL_LINES`` makes the export smaller (a quick run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import BenchResult

LINES = int(os.environ.get("CHIPWISE_BENCH_BILL_LINES", "10000000"))
RESOURCES = 10_000  # 10 per account
FILES = 4
PERIOD = "2026-10"
EXPORT = "bench-cur"


def _generate(root: Path, lines: int) -> Path:
    """The export written by DuckDB (``COPY ... TO (FORMAT parquet)``) plus its manifest, in the devkit's CUR 2.0
    column names and types."""
    import duckdb

    from chipwise_devkit.bill_export import CUR_SCHEMA

    export = root / EXPORT
    data = export / f"data/BILLING_PERIOD={PERIOD}"
    data.mkdir(parents=True)
    kind = (
        "CASE WHEN slot < 720 THEN CASE WHEN r % 4 = 0 THEN 'SavingsPlanCoveredUsage' ELSE 'Usage' END"
        " WHEN r % 4 = 0 THEN 'SavingsPlanNegation' WHEN r % 10 = 1 THEN 'Credit' ELSE 'Tax' END"
    )
    types = "['trn1.32xlarge', 'inf2.xlarge', 'g5.xlarge', 'p4d.24xlarge', 'inf2.48xlarge']"
    rate = "[21.5, 0.7582, 1.006, 21.957642, 12.98127][(r % 5) + 1]"
    resource = "CASE WHEN slot < 720 OR r % 4 = 0 THEN 'i-' || lpad(CAST(r AS VARCHAR), 17, '0') ELSE '' END"
    values = {
        "bill_billing_period_start_date": f"TIMESTAMP '{PERIOD}-01'",
        "bill_payer_account_id": "'999999999999'",
        "line_item_usage_account_id": "CAST(100000000000 + r // 10 AS VARCHAR)",
        "line_item_line_item_type": "kind",
        "line_item_usage_start_date": f"TIMESTAMP '{PERIOD}-01' + to_hours(CAST(slot % 720 AS BIGINT))",
        "line_item_usage_end_date": f"TIMESTAMP '{PERIOD}-01' + to_hours(CAST(slot % 720 + 1 AS BIGINT))",
        "line_item_product_code": "'AmazonEC2'",
        "line_item_usage_type": f"CASE WHEN kind IN ('Tax', 'Credit') THEN '' WHEN r % 10 = 3 THEN"
        f" 'USE1-SpotUsage:' || {types}[(r % 5) + 1] ELSE 'USE1-BoxUsage:' || {types}[(r % 5) + 1] END",
        "line_item_operation": "'RunInstances'",
        "line_item_resource_id": resource,
        "line_item_usage_amount": "CASE WHEN slot < 720 THEN 1.0 ELSE 0.0 END",
        "line_item_unblended_rate": "''",
        "line_item_unblended_cost": f"CASE WHEN kind = 'Tax' THEN 0.01 WHEN kind = 'Credit' THEN -0.05"
        f" WHEN kind = 'SavingsPlanNegation' THEN -{rate} WHEN r % 10 = 3 THEN {rate} * 0.35 ELSE {rate} END",
        "line_item_line_item_description": "'synthetic line item for the benchmark ' || kind",
        "product_region_code": "'us-east-1'",
        "product_instance_type": f"{types}[(r % 5) + 1]",
        "pricing_term": "CASE WHEN r % 10 = 3 THEN 'Spot' ELSE 'OnDemand' END",
        "pricing_public_on_demand_cost": f"CASE WHEN slot < 720 THEN {rate} ELSE 0.0 END",
        "pricing_public_on_demand_rate": f"CAST({rate} AS VARCHAR)",
        "savings_plan_savings_plan_a_r_n": "CASE WHEN r % 4 = 0 THEN 'arn:aws:savingsplans::' ||"
        " CAST(100000000000 + r // 10 AS VARCHAR) || ':savingsplan/sp-' || CAST(r // 10 AS VARCHAR) ELSE '' END",
        "savings_plan_savings_plan_effective_cost": f"CASE WHEN kind = 'SavingsPlanCoveredUsage' THEN {rate} * 0.72"
        " ELSE 0.0 END",
        "savings_plan_savings_plan_rate": "0.0",
        "savings_plan_total_commitment_to_date": "0.0",
        "savings_plan_used_commitment": "0.0",
        "savings_plan_offering_type": "CASE WHEN r % 4 = 0 THEN 'ComputeSavingsPlans' ELSE '' END",
        "savings_plan_instance_type_family": "''",
        "savings_plan_end_time": "CASE WHEN r % 4 = 0 THEN '2028-01-31T23:59:59.000Z' ELSE '' END",
        "reservation_reservation_a_r_n": "''",
        "reservation_effective_cost": "0.0",
        "reservation_unused_amortized_upfront_fee_for_billing_period": "0.0",
        "reservation_unused_recurring_fee": "0.0",
        "reservation_end_time": "''",
        "resource_tags": "MAP {'user:team': 'team-' || CAST(r % 7 AS VARCHAR),"
        " 'user:owner': 'o' || CAST(r AS VARCHAR)}",
        "split_line_item_parent_resource_id": "CAST(NULL AS VARCHAR)",
        "split_line_item_split_cost": "CAST(NULL AS DOUBLE)",
        "split_line_item_split_usage": "CAST(NULL AS DOUBLE)",
        "split_line_item_public_on_demand_split_cost": "CAST(NULL AS DOUBLE)",
    }
    assert set(values) == set(CUR_SCHEMA)
    select = ", ".join(f"CAST({values[name]} AS {kind_}) AS {name}" for name, kind_ in CUR_SCHEMA.items())
    con = duckdb.connect()
    data_files = []
    per_file = -(-lines // FILES)
    for part in range(FILES):
        start, stop = part * per_file, min(lines, (part + 1) * per_file)
        target = data / f"{EXPORT}-{part + 1:05d}.snappy.parquet"
        con.execute(
            f"COPY (SELECT {select} FROM (SELECT *, {kind} AS kind FROM (SELECT i % {RESOURCES} AS r,"
            f" i // {RESOURCES} AS slot FROM range({start}, {stop}) t(i)))) TO '{target}' (FORMAT parquet)"
        )
        data_files.append(f"s3://bench-bills/cur/{EXPORT}/data/BILLING_PERIOD={PERIOD}/{target.name}")
    con.close()
    manifest = {
        "executionId": "bench",
        "exportArn": f"arn:aws:bcm-data-exports:us-east-1:999999999999:export/{EXPORT}",
        "columns": [{"name": n, "type": t.lower()} for n, t in CUR_SCHEMA.items()],
        "dataFiles": data_files,
        "queryStatement": "SELECT * FROM COST_AND_USAGE_REPORT",
    }
    meta = export / f"metadata/BILLING_PERIOD={PERIOD}/{EXPORT}-Manifest.json"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps(manifest))
    return export


CHILD = """
import json, resource, sys, time
from datetime import UTC, datetime
from chipwise.collect.bill import _cores, read_period
from chipwise.store import ensure_schema, get_session_factory
from chipwise.store.repositories.bill import replace_period
export, url, out = sys.argv[1], sys.argv[2], sys.argv[3]
ensure_schema(url)
start = time.perf_counter()
cpu = time.process_time()
period = read_period(None, export, "2026-10")
read_wall, read_cpu = time.perf_counter() - start, time.process_time() - cpu
read_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with get_session_factory(url).begin() as session:
    replace_period(session, period, datetime.now(UTC))
open(out, "w").write(json.dumps({"line_items": period.line_items, "peak_rss_after_read_mib": read_rss,
    "resource_days": len(period.resources), "commitments": len(period.commitments), "read_wall": read_wall,
    "read_cpu": read_cpu, "threads": _cores(),
    "total_wall": time.perf_counter() - start,
    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _projected_bytes(export: Path) -> tuple[int, int]:
    """(bytes of the column chunks the query reads, bytes of the whole export's data files)."""
    import duckdb

    from chipwise.collect.bill import columns_read

    files = sorted((export / "data").rglob("*.parquet"))
    wanted = set(columns_read("COST_AND_USAGE_REPORT", split=True))
    con = duckdb.connect()
    rows = con.execute(
        "SELECT path_in_schema, total_compressed_size FROM parquet_metadata(?)", [[str(f) for f in files]]
    ).fetchall()
    con.close()
    needed = sum(int(size) for path, size in rows if str(path).split(".")[0] in wanted)
    return needed, sum(f.stat().st_size for f in files)


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="chipwise-bench-bill-") as tmp:
        root = Path(tmp)
        export = _generate(root, LINES)
        needed, size = _projected_bytes(export)
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(export), f"sqlite:///{root}/bill.db", str(root / "figures.json")],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"the bill ingest failed: {done.stderr.strip()[-2000:]}")
        found = json.loads((root / "figures.json").read_text())
    return [
        BenchResult(
            f"bill ingest (DuckDB, {found['line_items']:,} line items, 1,000 accounts)",
            {
                "line_items_per_second_read": f"{found['line_items'] / found['read_wall']:,.0f}",
                "line_items_per_cpu_second_read": f"{found['line_items'] / max(found['read_cpu'], 1e-9):,.0f}",
                "read_wall_s": round(found["read_wall"], 2),
                "duckdb_threads": found["threads"],
                "read_cpu_s": round(found["read_cpu"], 2),
                "read_and_store_wall_s": round(found["total_wall"], 2),
                "resource_days_stored": f"{found['resource_days']:,}",
                "peak_rss_mib_read": round(found["peak_rss_after_read_mib"], 1),
                "peak_rss_mib_read_and_store": round(found["peak_rss_mib"], 1),
                "export_mib": round(size / 2**20, 1),
                "projected_column_chunks_mib": round(needed / 2**20, 1),
                "share_of_export_read": f"{needed / size:.1%}",
            },
        )
    ]
