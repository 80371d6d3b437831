"""Chipwise's neuron-monitor shipper: standard library only, to run on an Inferentia/Trainium host.

    neuron-monitor | python -m chipwise.neuron_agent --to cloudwatch
    neuron-monitor | python -m chipwise.neuron_agent --to s3 --bucket chipwise-artifacts

``--to cloudwatch`` aggregates the reports per minute and publishes namespace ``Chipwise/Neuron`` (statistic sets):
``NeuronCoreUtilization`` (Percent, the busiest core of each report), ``NeuronCoreUtilizationAvg`` (Percent, the
mean across in-use cores), ``NeuronDeviceMemoryUsed`` (Bytes, all runtimes) and ``ExecutionsCompleted`` (Count),
dimensioned by ``InstanceId`` or, inside SageMaker, by ``EndpointName`` + ``VariantName``. A report without any
Neuron application counts as 0 % (the cores were idle).

``--to s3`` batches the raw reports (each stamped with ``instance_info.report_time``) as gzip JSON lines under
``neuron/<account>/<instance-id>/<date>/<time>-<n>.jsonl.gz``; the ``ingest_neuron`` Lambda takes it from there.

``--to stdout`` prints what would be published, one JSON line per minute (also ``--dry-run``).

It never needs boto3 (requests are signed with SigV4 here); credentials come from the environment, the container
credentials endpoint (ECS, SageMaker) or the instance profile (IMDSv2), and ``AWS_ENDPOINT_URL`` is honoured. A
failed publish is logged to stderr and retried with the next flush; a malformed line is counted and skipped: the
agent never breaks the pipe it reads.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import IO, Any, Protocol

NAMESPACE = "Chipwise/Neuron"
DEFAULT_PREFIX = "neuron/"
IMDS = "http://169.254.169.254"
CONTAINER_CREDENTIALS_HOST = "http://169.254.170.2"
MAX_DATUMS_PER_CALL = 500
MAX_BUFFERED_MINUTES = 24 * 60  # what a long outage may keep before the oldest minutes are dropped
HTTP_TIMEOUT_S = 10
RETRIES = 3


def log(message: str) -> None:
    print(f"chipwise-neuron-agent: {message}", file=sys.stderr, flush=True)


# --- reading neuron-monitor reports ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """The figures of one report the agent publishes."""

    at: datetime
    instance_id: str | None
    instance_type: str | None
    core_max: float  # busiest core, %; 0 when no application runs
    core_mean: float  # mean across in-use cores, %
    device_memory: float  # bytes, all runtimes
    executions: float  # completed in the report's period, all runtimes


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def report_time(document: dict[str, Any]) -> datetime | None:
    """``timestamp`` or ``instance_info.report_time`` (ISO or epoch seconds), as UTC."""
    for raw in (document.get("timestamp"), _obj(document.get("instance_info")).get("report_time")):
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return datetime.fromtimestamp(float(raw), UTC)
        if isinstance(raw, str) and raw.strip():
            try:
                parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return None


def _core_values(runtime: dict[str, Any]) -> list[float]:
    in_use = _obj(_obj(_obj(runtime.get("report")).get("neuroncore_counters")).get("neuroncores_in_use"))
    values = []
    for core in in_use.values():
        value = _num(_obj(core).get("neuroncore_utilization"))
        if value is None:  # trn2: the physical cores behind a logical one
            physical = [_num(_obj(v).get("neuroncore_utilization")) for v in _obj(_obj(core).get("v3d")).values()]
            known = [p for p in physical if p is not None]
            value = sum(known) / len(known) if known else None
        if value is not None:
            values.append(value)
    return values


def to_sample(document: dict[str, Any], now: datetime) -> Sample:
    """One report's figures; ``now`` when the report carries no time of its own."""
    runtimes = [r for r in document.get("neuron_runtime_data") or [] if isinstance(r, dict)]
    cores = [v for r in runtimes for v in _core_values(r)]
    memory = executions = 0.0
    for runtime in runtimes:
        report = _obj(runtime.get("report"))
        used = _obj(_obj(report.get("memory_used")).get("neuron_runtime_used_bytes"))
        memory += _num(used.get("neuron_device")) or 0.0
        summary = _obj(_obj(report.get("execution_stats")).get("execution_summary"))
        executions += _num(summary.get("completed")) or 0.0
    info = _obj(document.get("instance_info"))
    return Sample(
        at=report_time(document) or now,
        instance_id=info.get("instance_id") or None,
        instance_type=info.get("instance_type") or None,
        core_max=max(cores) if cores else 0.0,
        core_mean=sum(cores) / len(cores) if cores else 0.0,
        device_memory=memory,
        executions=executions,
    )


# --- per-minute aggregation ----------------------------------------------------------------------------------------


@dataclass
class _Stats:
    count: int = 0
    total: float = 0.0
    low: float = float("inf")
    high: float = float("-inf")

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def as_statistic_values(self) -> dict[str, float]:
        return {"SampleCount": float(self.count), "Sum": self.total, "Minimum": self.low, "Maximum": self.high}


@dataclass
class Minute:
    """One minute of reports, as CloudWatch datums."""

    start: datetime
    core_max: _Stats = field(default_factory=_Stats)
    core_mean: _Stats = field(default_factory=_Stats)
    memory: _Stats = field(default_factory=_Stats)
    executions: float = 0.0

    def add(self, sample: Sample) -> None:
        self.core_max.add(sample.core_max)
        self.core_mean.add(sample.core_mean)
        self.memory.add(sample.device_memory)
        self.executions += sample.executions

    def datums(self, dimensions: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        dims = [{"Name": name, "Value": value} for name, value in dimensions]
        at = self.start.strftime("%Y-%m-%dT%H:%M:%SZ")
        return [
            {
                "MetricName": "NeuronCoreUtilization",
                "Dimensions": dims,
                "Timestamp": at,
                "Unit": "Percent",
                "StatisticValues": self.core_max.as_statistic_values(),
            },
            {
                "MetricName": "NeuronCoreUtilizationAvg",
                "Dimensions": dims,
                "Timestamp": at,
                "Unit": "Percent",
                "StatisticValues": self.core_mean.as_statistic_values(),
            },
            {
                "MetricName": "NeuronDeviceMemoryUsed",
                "Dimensions": dims,
                "Timestamp": at,
                "Unit": "Bytes",
                "StatisticValues": self.memory.as_statistic_values(),
            },
            {
                "MetricName": "ExecutionsCompleted",
                "Dimensions": dims,
                "Timestamp": at,
                "Unit": "Count",
                "Value": self.executions,
            },
        ]


class MinuteAggregator:
    """Folds samples into minutes; a minute is complete once a later one has started."""

    def __init__(self) -> None:
        self.minutes: dict[datetime, Minute] = {}

    def add(self, sample: Sample) -> None:
        start = sample.at.replace(second=0, microsecond=0)
        minute = self.minutes.get(start)
        if minute is None:
            minute = self.minutes[start] = Minute(start)
        minute.add(sample)

    def complete(self, final: bool = False) -> list[Minute]:
        """Take the finished minutes (all of them when ``final``), oldest first."""
        if not self.minutes:
            return []
        latest = max(self.minutes)
        done = sorted(m for m in self.minutes if final or m < latest)
        return [self.minutes.pop(m) for m in done]


# --- AWS requests with SigV4 ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    token: str | None = None
    expires: datetime | None = None


def _http(request: urllib.request.Request, timeout: float = HTTP_TIMEOUT_S) -> bytes:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=timeout) as response:
        body: bytes = response.read()
        return body


def _imds_token() -> str:
    request = urllib.request.Request(
        f"{IMDS}/latest/api/token", method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": "21600"}
    )
    return _http(request, timeout=2).decode()


def imds_get(path: str) -> str:
    """A value from the instance metadata service (IMDSv2)."""
    token = _imds_token()
    request = urllib.request.Request(f"{IMDS}/latest/{path}", headers={"X-aws-ec2-metadata-token": token})
    return _http(request, timeout=2).decode()


def _parse_expiry(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class CredentialChain:
    """Environment, then the container credentials endpoint, then the instance profile; refreshed before expiry."""

    def __init__(self, environ: dict[str, str] | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self._cached: Credentials | None = None

    def get(self) -> Credentials:
        cached = self._cached
        if cached is not None and (cached.expires is None or cached.expires - datetime.now(UTC) > timedelta(minutes=5)):
            return cached
        self._cached = self._resolve()
        return self._cached

    def _resolve(self) -> Credentials:
        env = self.environ
        if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
            return Credentials(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env.get("AWS_SESSION_TOKEN"))
        uri = env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI") or (
            CONTAINER_CREDENTIALS_HOST + env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"]
            if env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
            else None
        )
        if uri:
            headers = (
                {"Authorization": env["AWS_CONTAINER_AUTHORIZATION_TOKEN"]}
                if env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN")
                else {}
            )
            data = json.loads(_http(urllib.request.Request(uri, headers=headers)))
        else:
            role = imds_get("meta-data/iam/security-credentials/").splitlines()[0]
            data = json.loads(imds_get(f"meta-data/iam/security-credentials/{role}"))
        return Credentials(
            data["AccessKeyId"], data["SecretAccessKey"], data.get("Token"), _parse_expiry(data.get("Expiration"))
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def sign_v4(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    service: str,
    region: str,
    credentials: Credentials,
    now: datetime | None = None,
) -> dict[str, str]:
    """``headers`` plus Host, X-Amz-Date, X-Amz-Content-Sha256, the session token and the SigV4 Authorization."""
    now = now or datetime.now(UTC)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    scope_date = now.strftime("%Y%m%d")
    parsed = urllib.parse.urlsplit(url)
    payload_hash = _sha256(body)
    signed = {k.lower(): v.strip() for k, v in headers.items()}
    signed["host"] = parsed.netloc
    signed["x-amz-date"] = amz_date
    signed["x-amz-content-sha256"] = payload_hash
    if credentials.token:
        signed["x-amz-security-token"] = credentials.token
    names = sorted(signed)
    query = urllib.parse.parse_qsl(parsed.query, keep_blank_values=True)
    canonical_query = "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}" for k, v in sorted(query)
    )
    canonical = "\n".join(
        [
            method,
            parsed.path or "/",  # callers pass the path URI-encoded once, as SigV4 wants it for S3
            canonical_query,
            "".join(f"{name}:{signed[name]}\n" for name in names),
            ";".join(names),
            payload_hash,
        ]
    )
    scope = f"{scope_date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, _sha256(canonical.encode())])
    key = _hmac(("AWS4" + credentials.secret_key).encode(), scope_date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out = {**headers, **{k: v for k, v in signed.items() if k != "host"}}
    out["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, SignedHeaders={';'.join(names)}, "
        f"Signature={signature}"
    )
    return out


@dataclass
class AwsEndpoint:
    """Where one service is reached: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, or the public endpoint."""

    service: str  # signing name: monitoring (CloudWatch), s3
    region: str
    url: str
    credentials: CredentialChain

    @classmethod
    def for_service(cls, service: str, env_name: str, region: str, credentials: CredentialChain) -> AwsEndpoint:
        env = credentials.environ
        url = env.get(f"AWS_ENDPOINT_URL_{env_name}") or env.get("AWS_ENDPOINT_URL")
        host = "monitoring" if service == "monitoring" else "s3"
        return cls(service, region, (url or f"https://{host}.{region}.amazonaws.com").rstrip("/"), credentials)

    def send(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        """Signed request with retries on throttling and server errors."""
        url = self.url + path
        for attempt in range(1, RETRIES + 1):
            signed = sign_v4(
                method, url, headers, body, service=self.service, region=self.region, credentials=self.credentials.get()
            )
            request = urllib.request.Request(url, data=body, method=method, headers=signed)
            try:
                return _http(request)
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:300].decode(errors="replace")
                retryable = exc.code >= 500 or exc.code == 429 or "Throttl" in detail
                if not retryable or attempt == RETRIES:
                    raise RuntimeError(f"{method} {path} failed: HTTP {exc.code} {detail}") from exc
            except urllib.error.URLError as exc:
                if attempt == RETRIES:
                    raise RuntimeError(f"{method} {path} failed: {exc.reason}") from exc
            time.sleep(0.2 * 2**attempt)
        raise AssertionError("unreachable")


# --- publishers ---------------------------------------------------------------------------------------------------


class Publisher(Protocol):
    def add(self, line: str, document: dict[str, Any], sample: Sample) -> None: ...

    def flush(self, final: bool = False) -> None: ...


def put_metric_data_body(namespace: str, datums: Sequence[dict[str, Any]]) -> bytes:
    """The Query-protocol form of PutMetricData."""
    params: list[tuple[str, str]] = [("Action", "PutMetricData"), ("Version", "2010-08-01"), ("Namespace", namespace)]
    for i, datum in enumerate(datums, start=1):
        prefix = f"MetricData.member.{i}"
        params.append((f"{prefix}.MetricName", datum["MetricName"]))
        for j, dim in enumerate(datum["Dimensions"], start=1):
            params += [(f"{prefix}.Dimensions.member.{j}.Name", dim["Name"])]
            params += [(f"{prefix}.Dimensions.member.{j}.Value", dim["Value"])]
        params += [(f"{prefix}.Timestamp", datum["Timestamp"]), (f"{prefix}.Unit", datum["Unit"])]
        if "StatisticValues" in datum:
            for name, value in datum["StatisticValues"].items():
                params.append((f"{prefix}.StatisticValues.{name}", repr(float(value))))
        else:
            params.append((f"{prefix}.Value", repr(float(datum["Value"]))))
    return urllib.parse.urlencode(params).encode()


class MetricsPublisher:
    """Per-minute datums to CloudWatch (or, with ``emit``, to a callable: stdout and tests)."""

    def __init__(
        self,
        dimensions: Callable[[Sample], Sequence[tuple[str, str]]],
        namespace: str = NAMESPACE,
        endpoint: AwsEndpoint | None = None,
        emit: Callable[[list[dict[str, Any]]], None] | None = None,
        flush_seconds: float = 60.0,
    ) -> None:
        self.dimensions = dimensions
        self.namespace = namespace
        self.endpoint = endpoint
        self.emit = emit
        self.flush_seconds = flush_seconds
        self.aggregators: dict[tuple[tuple[str, str], ...], MinuteAggregator] = {}
        self.pending: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()
        self.published = 0

    def add(self, line: str, document: dict[str, Any], sample: Sample) -> None:
        key = tuple(self.dimensions(sample))
        self.aggregators.setdefault(key, MinuteAggregator()).add(sample)
        if time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def flush(self, final: bool = False) -> None:
        for dims, aggregator in self.aggregators.items():
            for minute in aggregator.complete(final):
                self.pending.extend(minute.datums(dims))
        self.pending = self.pending[-MAX_BUFFERED_MINUTES * 4 :]
        self.last_flush = time.monotonic()
        while self.pending:
            chunk = self.pending[:MAX_DATUMS_PER_CALL]
            try:
                self._send(chunk)
            except RuntimeError as exc:
                log(f"publish failed, {len(self.pending)} datums kept for the next flush: {exc}")
                return
            del self.pending[: len(chunk)]
            self.published += len(chunk)

    def _send(self, datums: list[dict[str, Any]]) -> None:
        if self.emit is not None:
            self.emit(datums)
            return
        assert self.endpoint is not None
        body = put_metric_data_body(self.namespace, datums)
        headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
        self.endpoint.send("POST", "/", body, headers)


class S3Publisher:
    """Raw reports as gzip JSON lines, one object per instance and flush (and never across an hour)."""

    def __init__(
        self,
        endpoint: AwsEndpoint,
        bucket: str,
        prefix: str = DEFAULT_PREFIX,
        account_id: str | None = None,
        flush_seconds: float = 300.0,
        max_lines: int = 20_000,
    ) -> None:
        self.endpoint = endpoint
        self.bucket = bucket
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"
        self.account_id = account_id
        self.flush_seconds = flush_seconds
        self.max_lines = max_lines
        self.buffers: dict[tuple[str, datetime], list[str]] = {}
        self.last_flush = time.monotonic()
        self.sequence = 0
        self.objects = 0

    def add(self, line: str, document: dict[str, Any], sample: Sample) -> None:
        info = document.setdefault("instance_info", {})
        if isinstance(info, dict) and "report_time" not in info and "timestamp" not in document:
            info["report_time"] = sample.at.isoformat()
        instance = sample.instance_id or "unknown-instance"
        hour = sample.at.replace(minute=0, second=0, microsecond=0)
        if any(h != hour for i, h in self.buffers if i == instance):
            self.flush()  # an object never spans two hours
        self.buffers.setdefault((instance, hour), []).append(json.dumps(document, separators=(",", ":")))
        lines = sum(len(b) for b in self.buffers.values())
        if lines >= self.max_lines or time.monotonic() - self.last_flush >= self.flush_seconds:
            self.flush()

    def key(self, instance: str, hour: datetime) -> str:
        self.sequence += 1
        account = f"{self.account_id}/" if self.account_id else ""
        stamp = datetime.now(UTC).strftime("%H%M%S")
        return f"{self.prefix}{account}{instance}/{hour:%Y-%m-%d}/{hour:%H}-{stamp}-{self.sequence}.jsonl.gz"

    def flush(self, final: bool = False) -> None:
        self.last_flush = time.monotonic()
        for (instance, hour), lines in list(self.buffers.items()):
            body = gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
            key = self.key(instance, hour)
            path = "/" + self.bucket + "/" + urllib.parse.quote(key, safe="/-_.~")
            try:
                self.endpoint.send("PUT", path, body, {"Content-Type": "application/gzip"})
            except RuntimeError as exc:
                log(f"upload of {len(lines)} reports failed, kept for the next flush: {exc}")
                continue
            del self.buffers[(instance, hour)]
            self.objects += 1


# --- the loop ------------------------------------------------------------------------------------------------------


@dataclass
class RunStats:
    lines: int = 0
    reports: int = 0
    malformed: list[int] = field(default_factory=list)


def run(lines: Iterable[str], publisher: Publisher, clock: Callable[[], datetime] | None = None) -> RunStats:
    """Feed every line to the publisher; malformed lines are counted with their numbers and skipped."""
    clock = clock or (lambda: datetime.now(UTC))
    stats = RunStats()
    for number, line in enumerate(lines, start=1):
        stats.lines = number
        if not line.strip():
            continue
        try:
            document = json.loads(line)
            if not isinstance(document, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            stats.malformed.append(number)
            log(f"line {number} skipped: {exc}")
            continue
        stats.reports += 1
        publisher.add(line, document, to_sample(document, clock()))
    publisher.flush(final=True)
    return stats


def _region(args: argparse.Namespace, env: dict[str, str]) -> str:
    region = args.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        return str(region)
    try:
        return imds_get("meta-data/placement/region")
    except (OSError, urllib.error.URLError) as exc:
        raise SystemExit(f"chipwise-neuron-agent: no region (--region, AWS_REGION or IMDS): {exc}") from exc


def _dimension_fn(args: argparse.Namespace) -> Callable[[Sample], Sequence[tuple[str, str]]]:
    endpoint = args.endpoint_name or os.environ.get("SAGEMAKER_ENDPOINT_NAME")
    variant = args.variant_name or os.environ.get("SAGEMAKER_VARIANT_NAME")
    if endpoint:
        return lambda _sample: (("EndpointName", endpoint), ("VariantName", variant or "AllTraffic"))
    fixed = args.instance_id
    return lambda sample: (("InstanceId", fixed or sample.instance_id or "unknown-instance"),)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chipwise-neuron-agent",
        description="Ship neuron-monitor reports (JSON lines on stdin) to CloudWatch or S3.",
    )
    parser.add_argument("--to", choices=("cloudwatch", "s3", "stdout"), default="cloudwatch", help="where to ship")
    parser.add_argument("--input", help="read reports from this file instead of stdin")
    parser.add_argument("--region", help="AWS region (default: AWS_REGION, else the instance's)")
    parser.add_argument("--namespace", default=NAMESPACE, help=f"CloudWatch namespace (default {NAMESPACE})")
    parser.add_argument("--instance-id", help="InstanceId dimension (default: the reports' instance_info)")
    parser.add_argument("--endpoint-name", help="inside SageMaker: publish by EndpointName + VariantName")
    parser.add_argument("--variant-name", help="the SageMaker variant (default AllTraffic)")
    parser.add_argument("--bucket", help="S3 bucket (--to s3)")
    parser.add_argument("--prefix", default=DEFAULT_PREFIX, help=f"S3 key prefix (default {DEFAULT_PREFIX})")
    parser.add_argument("--account-id", help="account id to put in S3 keys")
    parser.add_argument("--flush-seconds", type=float, default=None, help="publish at least this often")
    parser.add_argument("--max-lines", type=int, default=20_000, help="S3: reports per object at most")
    parser.add_argument("--dry-run", action="store_true", help="print what would be published instead")
    return parser


def make_publisher(args: argparse.Namespace, out: IO[str]) -> Publisher:
    env = dict(os.environ)
    if args.to == "stdout" or args.dry_run:
        return MetricsPublisher(
            _dimension_fn(args),
            args.namespace,
            emit=lambda datums: print(json.dumps(datums), file=out, flush=True),
            flush_seconds=args.flush_seconds or 60.0,
        )
    chain = CredentialChain(env)
    region = _region(args, env)
    if args.to == "s3":
        if not args.bucket:
            raise SystemExit("chipwise-neuron-agent: --to s3 needs --bucket")
        endpoint = AwsEndpoint.for_service("s3", "S3", region, chain)
        return S3Publisher(
            endpoint, args.bucket, args.prefix, args.account_id, args.flush_seconds or 300.0, args.max_lines
        )
    endpoint = AwsEndpoint.for_service("monitoring", "CLOUDWATCH", region, chain)
    return MetricsPublisher(_dimension_fn(args), args.namespace, endpoint, flush_seconds=args.flush_seconds or 60.0)


def _lines(path: str | None) -> Iterator[str]:
    if path is None:
        yield from sys.stdin
        return
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        yield from handle


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    publisher = make_publisher(args, out or sys.stdout)
    try:
        stats = run(_lines(args.input), publisher)
    except KeyboardInterrupt:
        publisher.flush(final=True)
        return 130
    log(f"{stats.reports} reports from {stats.lines} lines, {len(stats.malformed)} malformed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
