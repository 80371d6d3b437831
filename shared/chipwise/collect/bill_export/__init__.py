"""The bill: an AWS export (CUR 2.0, FOCUS 1.0 or 1.2 with AWS columns, legacy CUR; Parquet or gzip CSV) read per
billing period with DuckDB over its files or with Amazon Athena over its table, through one logical query.

Rooms: :mod:`.manifest` (where an export lives, which files), :mod:`.formats` (each format's documented columns,
from ``formats/*.json``), :mod:`.query` (the logical query), :mod:`.validation` (what is rejected),
:mod:`.duckdb_engine` and :mod:`.athena_engine`, :mod:`.assembly` (rows to a period), :mod:`.reader` (one period)."""

from chipwise.collect.bill_export.assembly import parse_tags
from chipwise.collect.bill_export.athena_engine import AthenaTable, athena_statement
from chipwise.collect.bill_export.errors import BillAccessDenied, BillError
from chipwise.collect.bill_export.manifest import export_of_manifest_key, period_of_manifest_key
from chipwise.collect.bill_export.query import RESULT_COLUMNS, columns_read
from chipwise.collect.bill_export.reader import Engine, read_period

__all__ = [
    "RESULT_COLUMNS",
    "AthenaTable",
    "BillAccessDenied",
    "BillError",
    "Engine",
    "athena_statement",
    "columns_read",
    "export_of_manifest_key",
    "parse_tags",
    "period_of_manifest_key",
    "read_period",
]
