"""Reading one billing period of an export: the manifest first (a Data Exports export's, else a legacy report's in
its own layout; its files, each once, each under the export's own prefix; its table), then the files with DuckDB
(downloaded from S3 to a scratch directory) or the export's table with Athena, through the one logical query, each
aggregated row assembled as it comes."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from botocore.exceptions import BotoCoreError, ClientError

from chipwise.aws import AwsContext
from chipwise.collect.bill_export.assembly import Assembler
from chipwise.collect.bill_export.athena_engine import AthenaTable, run_athena
from chipwise.collect.bill_export.duckdb_engine import run_duckdb
from chipwise.collect.bill_export.errors import BillError, denied
from chipwise.collect.bill_export.formats import table_of
from chipwise.collect.bill_export.manifest import (
    DataFile,
    ExportLocation,
    data_files,
    data_format,
    read_manifest,
)
from chipwise.collect.bill_export.query import required_columns
from chipwise.errors import UpstreamError
from chipwise.models.bill import BillPeriod, BillTable, ExportManifest, PeriodSink

Engine = Literal["duckdb", "athena"]


def _check_manifest_columns(manifest: ExportManifest, uri: str, table: BillTable) -> None:
    """Every needed column is in the manifest (when it lists columns): else one line naming what is missing."""
    names = manifest.column_names
    if not names or table == "LEGACY_CUR":
        return
    missing = sorted(set(required_columns(table)) - names)
    if missing:
        listed = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise BillError(
            f"{uri}: a {table} export without the columns Chipwise reads: {listed} ({len(missing)} missing)"
        )


def read_period(
    aws: AwsContext | None,
    data_export_uri: str,
    period: str,
    *,
    engine: Engine = "duckdb",
    athena: AthenaTable | None = None,
    sink: PeriodSink | None = None,
) -> BillPeriod:
    """One billing period of the export. With ``sink``, the resource-days go to it in batches as they are read
    (after its ``begin``, once the export is validated) and the returned period carries the rest."""
    location = ExportLocation.parse(data_export_uri)
    manifest_uri, manifest, layout = read_manifest(aws, location, period)
    table: BillTable = "LEGACY_CUR" if layout == "legacy" else table_of(manifest, manifest_uri)
    _check_manifest_columns(manifest, manifest_uri, table)
    files = data_files(location, manifest, manifest_uri, period, layout)
    result = BillPeriod(
        billing_period=period,
        table=table,
        export_uri=location.uri,
        manifest_uri=manifest_uri,
        execution_id=manifest.execution_id,
        engine=engine,
        data_format=data_format(files, manifest),
    )
    assembler = Assembler(result, sink)
    if engine == "athena":
        if aws is None or athena is None:
            raise BillError("the athena engine needs athena_database, athena_table and athena_workgroup")
        result.bytes_read = run_athena(aws, athena, table, period, assembler.add)
        return assembler.finish()
    scratch: Path | None = None
    try:
        if location.bucket is None:
            local = [(location.local(f.relative), f.uri) for f in files]
        else:
            if aws is None:
                raise BillError(f"{location.uri}: an s3:// export needs AWS access")
            scratch = Path(tempfile.mkdtemp(prefix="chipwise-bill-"))
            local = _download(aws, location, files, scratch)
        found = run_duckdb(local, table, result.data_format, period, assembler.add, assembler.set_terms)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    result.bytes_read = found.bytes_read
    result.payer_account_id = found.payer_account_id
    result.other_providers = found.other_providers
    return assembler.finish()


def _download(
    aws: AwsContext, location: ExportLocation, files: Sequence[DataFile], into: Path
) -> list[tuple[Path, str]]:
    s3 = aws.client("s3")
    found: list[tuple[Path, str]] = []
    for index, file in enumerate(files):
        suffix = ".csv.gz" if file.uri.endswith(".csv.gz") else ".csv" if file.uri.endswith(".csv") else ".parquet"
        target = into / f"{index:05d}{suffix}"
        try:
            s3.download_file(location.bucket or "", location.key(file.uri), str(target))
        except ClientError as exc:
            raise denied(exc, "s3:GetObject", file.uri) from exc
        except BotoCoreError as exc:
            raise UpstreamError(f"s3:GetObject on {file.uri} failed: {exc}") from exc
        found.append((target, file.uri))
    return found
