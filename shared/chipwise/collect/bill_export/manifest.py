"""Where an export lives and what its manifest lists.

``data_export_uri`` = ``s3://bucket/prefix/export-name`` (or a local directory laid out the same way):
``metadata/BILLING_PERIOD=YYYY-MM/<export-name>-Manifest.json`` names the data files and the columns. The manifest
is read first and its list is the only list of files read (never list-and-guess); a file it names twice is read
once, and every file must sit under the export's own ``data/BILLING_PERIOD=YYYY-MM/`` prefix (AWS writes nothing
else there: another prefix of the bucket, another bucket or a local path is refused)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from chipwise.aws import AwsContext
from chipwise.collect.bill_export.errors import BillError, denied
from chipwise.errors import UpstreamError
from chipwise.models.bill import BILLING_PERIOD, DataFormat, ExportManifest


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

    def local(self, relative: str) -> Path:
        """A data file of a local export (its path from the export name on) under the directory."""
        return Path(self.prefix) / relative


def period_of_manifest_key(key: str) -> str | None:
    """The billing period of a manifest object key (``.../metadata/BILLING_PERIOD=YYYY-MM/x-Manifest.json``)."""
    found = re.search(r"/metadata/BILLING_PERIOD=(\d{4}-\d{2})/[^/]+-Manifest\.json$", key)
    return found.group(1) if found else None


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


@dataclass(frozen=True)
class DataFile:
    """One data file the manifest names: its URI as listed, and its path from the export name on."""

    uri: str
    relative: str  # data/BILLING_PERIOD=YYYY-MM/<file>


def data_files(location: ExportLocation, manifest: ExportManifest, manifest_uri: str, period: str) -> list[DataFile]:
    """The manifest's data files, each once (in the manifest's order), each under the export's own
    ``data/BILLING_PERIOD=<period>/`` prefix; anything else is a BillError naming the file."""
    expected = f"data/BILLING_PERIOD={period}/"
    if location.bucket is not None:
        own = f"s3://{location.bucket}/{location.prefix}/{expected}"
    else:  # a local copy: the manifest's S3 URIs, from the export's name on
        own = f"/{location.export_name}/{expected}"
    found: dict[str, DataFile] = {}
    for uri in manifest.data_files:
        if uri in found:
            continue
        at = uri.find(own) if location.bucket is None else (0 if uri.startswith(own) else -1)
        name = uri[at + len(own) :] if at >= 0 else ""
        if at < 0 or not uri.startswith("s3://") or not name or "/" in name or name in (".", ".."):
            raise BillError(f"{manifest_uri}: data file {uri} is not under the export's {expected} prefix (refused)")
        found[uri] = DataFile(uri, expected + name)
    return list(found.values())


def data_format(files: list[DataFile], manifest: ExportManifest) -> DataFormat:
    """Parquet or gzip CSV, as the files' names say (Data Exports names them ``.parquet`` or ``.csv.gz``)."""
    kinds = {"csv" if f.uri.endswith((".csv.gz", ".csv")) else "parquet" for f in files}
    if len(kinds) > 1:
        raise BillError(f"{files[0].uri}: an export mixing Parquet and CSV files")
    return "csv" if kinds == {"csv"} else "parquet"
