"""Where an export lives and what its manifest lists.

``data_export_uri`` = ``s3://bucket/prefix/export-name`` (or a local directory laid out the same way), in one of
the two delivery layouts AWS documents:

- a Data Exports export (CUR 2.0, FOCUS, or a legacy CUR laid out the same way):
  ``metadata/BILLING_PERIOD=YYYY-MM/<export-name>-Manifest.json`` names the data files (``dataFiles``, S3 URIs)
  and the columns; every file sits under ``data/BILLING_PERIOD=YYYY-MM/``;
- a legacy Cost and Usage Report in its own layout (``s3://bucket/prefix/report-name``):
  ``yyyymmdd-yyyymmdd/<report-name>-Manifest.json`` names the files (``reportKeys``, keys in the manifest's
  ``bucket``), under ``yyyymmdd-yyyymmdd/`` (gzip CSV, overwritten) or ``yyyymmdd-yyyymmdd/<assemblyId>/`` (a
  new version per update), or, for the Parquet of the Athena integration, under
  ``<report-name>/year=YYYY/month=M/``.

The manifest is read first (the Data Exports one, else the legacy one) and its list is the only list of files read
(never list-and-guess); a file it names twice is read once, and every file must sit under the export's own prefix
for the period (AWS writes nothing else there: another prefix of the bucket, another bucket, another period or a
local path is refused)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chipwise.aws import AwsContext
from chipwise.collect.bill_export.errors import BillError, denied
from chipwise.errors import UpstreamError
from chipwise.models.bill import BILLING_PERIOD, DataFormat, ExportManifest, ManifestColumn

Layout = Literal["data_exports", "legacy"]


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

    def legacy_manifest(self, period: str) -> str:
        """The legacy report's manifest of the period (``<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json``)."""
        return f"{self.uri}/{legacy_range(period)}/{self.export_name}-Manifest.json"

    def key(self, uri: str) -> str:
        """The S3 key of an ``s3://`` URI in this export's bucket."""
        bucket, _, key = uri[5:].partition("/")
        if bucket != self.bucket:
            raise BillError(f"{uri}: the manifest names a file outside the export's bucket {self.bucket}")
        return key

    def local(self, relative: str) -> Path:
        """A data file of a local export (its path from the export name on) under the directory."""
        return Path(self.prefix) / relative


def legacy_range(period: str) -> str:
    """A billing period as the legacy report's folder names it: ``2026-11`` → ``20261101-20261201``."""
    start = date.fromisoformat(f"{period}-01")
    end = date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return f"{start:%Y%m%d}-{end:%Y%m%d}"


_DATA_EXPORTS_KEY = re.compile(r"^(?P<export>.+)/metadata/BILLING_PERIOD=(?P<period>\d{4}-\d{2})/[^/]+-Manifest\.json$")
_LEGACY_KEY = re.compile(r"^(?P<export>(?:.*/)?(?P<name>[^/]+))/(?P<start>\d{6})01-\d{8}/(?P=name)-Manifest\.json$")


def export_of_manifest_key(key: str) -> tuple[str, str] | None:
    """The export (its key prefix, up to and including its name) and billing period of a manifest's object key:
    a Data Exports manifest (``<prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json``) or a
    legacy report's period manifest (``<prefix>/<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json``; not the
    per-version copies under ``<assemblyId>/``); None for any other key."""
    found = _DATA_EXPORTS_KEY.match(key)
    if found:
        return found.group("export"), found.group("period")
    legacy = _LEGACY_KEY.match(key)
    if legacy:
        period = f"{legacy.group('start')[:4]}-{legacy.group('start')[4:]}"
        name = legacy.group("name")
        if BILLING_PERIOD.match(period) and key.endswith(f"/{legacy_range(period)}/{name}-Manifest.json"):
            return legacy.group("export"), period
    return None


def period_of_manifest_key(key: str) -> str | None:
    """The billing period of a manifest object key (``.../metadata/BILLING_PERIOD=YYYY-MM/x-Manifest.json``, or
    a legacy report's ``.../<report>/yyyymmdd-yyyymmdd/<report>-Manifest.json``)."""
    found = export_of_manifest_key(key.lstrip("/"))
    return found[1] if found else None


class _LegacyColumn(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    category: str
    name: str
    type: str = ""


class _LegacyManifest(BaseModel):
    """A legacy report's manifest, as the CUR user guide shows it: the fields Chipwise reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    assembly_id: str = Field("", alias="assemblyId")
    bucket: str
    report_keys: list[str] = Field(alias="reportKeys")
    columns: list[_LegacyColumn] = []
    billing_period: dict[str, str] | None = Field(None, alias="billingPeriod")

    def as_export(self) -> ExportManifest:
        """The same manifest in the Data Exports terms the reader uses: the keys as S3 URIs in its bucket, each
        column as its CSV header (``lineItem/UsageType``)."""
        columns = [ManifestColumn(name=f"{c.category}/{c.name}", type=c.type) for c in self.columns]
        uris = [f"s3://{self.bucket}/{key.lstrip('/')}" for key in self.report_keys]
        return ExportManifest(execution_id=self.assembly_id, columns=columns, data_files=uris,
                              billing_period=self.billing_period)  # fmt: skip


def _fetch(aws: AwsContext | None, location: ExportLocation, uri: str) -> bytes | None:
    """The manifest's bytes, None when there is none."""
    if location.bucket is None:
        path = Path(uri)
        return path.read_bytes() if path.is_file() else None
    if aws is None:
        raise BillError(f"{uri}: an s3:// export needs AWS access")
    try:
        body: bytes = aws.client("s3").get_object(Bucket=location.bucket, Key=location.key(uri))["Body"].read()
    except ClientError as exc:
        if str(exc.response.get("Error", {}).get("Code", "")) in {"NoSuchKey", "404"}:
            return None
        raise denied(exc, "s3:GetObject", uri) from exc
    except BotoCoreError as exc:
        raise UpstreamError(f"s3:GetObject on {uri} failed: {exc}") from exc
    return body


def read_manifest(aws: AwsContext | None, location: ExportLocation, period: str) -> tuple[str, ExportManifest, Layout]:
    """The manifest of one billing period (its URI, contents and the layout it comes from): the Data Exports one,
    else the legacy report's; a missing or unreadable one is a BillError naming it."""
    if not BILLING_PERIOD.match(period):
        raise BillError(f"billing period {period!r}: expected YYYY-MM")
    uri, layout = location.manifest(period), "data_exports"
    raw = _fetch(aws, location, uri)
    if raw is None:
        uri, layout = location.legacy_manifest(period), "legacy"
        raw = _fetch(aws, location, uri)
    if raw is None:
        raise BillError(f"{location.manifest(period)}: manifest not found (nor a legacy report's {uri})")
    try:
        document = json.loads(raw)
        if layout == "legacy":
            manifest = _LegacyManifest.model_validate(document).as_export()
        else:
            manifest = ExportManifest.model_validate(document)
    except (ValueError, ValidationError) as exc:
        first = str(exc).strip().splitlines()[0]
        kind = "a legacy Cost and Usage Report" if layout == "legacy" else "a Data Exports"
        raise BillError(f"{uri}: not {kind} manifest ({first})") from exc
    if not manifest.data_files:
        raise BillError(f"{uri}: the manifest lists no data files")
    return uri, manifest, "legacy" if layout == "legacy" else "data_exports"


@dataclass(frozen=True)
class DataFile:
    """One data file the manifest names: its URI as listed, and its path from the export name on."""

    uri: str
    relative: str  # data/BILLING_PERIOD=YYYY-MM/<file>


def own_prefixes(period: str, layout: Layout, export_name: str) -> dict[str, bool]:
    """Where the period's data files may sit, from the export's name on, each with whether one more folder may
    follow it (a legacy report's ``<assemblyId>/`` of a new version): the Data Exports
    ``data/BILLING_PERIOD=YYYY-MM/``; the legacy report's ``yyyymmdd-yyyymmdd/`` and, for the Parquet of the
    Athena integration, ``<report>/year=YYYY/month=M/``."""
    if layout == "data_exports":
        return {f"data/BILLING_PERIOD={period}/": False}
    year, month = int(period[:4]), int(period[5:7])
    return {f"{legacy_range(period)}/": True, f"{export_name}/year={year}/month={month}/": False}


def _file_name(rest: str, folder_allowed: bool) -> str | None:
    """The file's name after its prefix (``name``, or ``folder/name`` where a folder is allowed), else None."""
    parts = rest.split("/")
    if len(parts) > (2 if folder_allowed else 1) or any(p in ("", ".", "..") for p in parts):
        return None
    return rest


def data_files(
    location: ExportLocation, manifest: ExportManifest, manifest_uri: str, period: str, layout: Layout = "data_exports"
) -> list[DataFile]:
    """The manifest's data files, each once (in the manifest's order), each under the export's own prefix for the
    period (:func:`own_prefixes`); anything else is a BillError naming the file."""
    prefixes = own_prefixes(period, layout, location.export_name)
    # a local copy: the manifest's S3 URIs, from the export's name on
    root = f"s3://{location.bucket}/{location.prefix}/" if location.bucket is not None else f"/{location.export_name}/"
    found: dict[str, DataFile] = {}
    for uri in manifest.data_files:
        if uri in found:
            continue
        relative = None
        for prefix, folder_allowed in prefixes.items():
            own = root + prefix
            at = uri.find(own) if location.bucket is None else (0 if uri.startswith(own) else -1)
            name = _file_name(uri[at + len(own) :], folder_allowed) if at >= 0 and uri.startswith("s3://") else None
            if name is not None:
                relative = prefix + name
                break
        if relative is None:
            expected = " or ".join(prefixes)
            raise BillError(f"{manifest_uri}: data file {uri} is not under the export's {expected} prefix (refused)")
        found[uri] = DataFile(uri, relative)
    return list(found.values())


def data_format(files: list[DataFile], manifest: ExportManifest) -> DataFormat:
    """Parquet or gzip CSV, as the files' names say (Data Exports names them ``.parquet`` or ``.csv.gz``)."""
    zipped = [f.uri for f in files if f.uri.endswith(".zip")]
    if zipped:
        raise BillError(f"{zipped[0]}: a ZIP-compressed report is not read (set the report's compression to GZIP)")
    kinds = {"csv" if f.uri.endswith((".csv.gz", ".csv")) else "parquet" for f in files}
    if len(kinds) > 1:
        raise BillError(f"{files[0].uri}: an export mixing Parquet and CSV files")
    return "csv" if kinds == {"csv"} else "parquet"
