"""Chipwise's neuron-monitor shipper, to run on an Inferentia/Trainium host (the standard library and boto3, which
the Deep Learning AMIs and the Neuron containers carry).

    neuron-monitor | python -m chipwise.neuron_agent --to cloudwatch
    neuron-monitor | python -m chipwise.neuron_agent --to s3 --bucket chipwise-artifacts

``--to cloudwatch`` aggregates the reports per minute and publishes namespace ``Chipwise/Neuron`` (statistic sets):
``NeuronCoreUtilization`` (Percent, the busiest core of each report), ``NeuronCoreUtilizationAvg`` (Percent, the
mean across in-use cores), ``NeuronDeviceMemoryUsed`` (Bytes, summed over processes) and ``ExecutionsCompleted``
(Count), dimensioned by ``InstanceId`` or, inside SageMaker, by ``EndpointName`` + ``VariantName``. With several
processes per device (each lists every core, 0 % for cores it does not own) a core's figure is its owner's, the
maximum across processes. A report without any Neuron application counts as 0 % (the cores were idle); one whose
driver or device failed (``neuron_hardware_info.error``) publishes no utilisation (missing, never 0 %).

``--to s3`` batches the raw reports (each stamped with ``instance_info.report_time``) as gzip JSON lines under
``neuron/<account>/<instance-id>/<date>/<time>-<n>.jsonl.gz``; the ``ingest_neuron`` Lambda takes it from there.

``--to stdout`` prints what would be published, one JSON line per minute (also ``--dry-run``).

AWS calls go through boto3 (its credential chain: environment, profile, container credentials on ECS/SageMaker,
the instance profile over IMDSv2; SigV4; ``AWS_ENDPOINT_URL``), with the standard retry mode for throttling and
server errors. A publish that still fails is logged to stderr and retried with the next flush (the datums are
kept); a malformed line is counted and skipped: the agent never breaks the pipe it reads. ``--to stdout`` needs no
boto3 at all.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import IO, Any, Literal, Protocol

NAMESPACE = "Chipwise/Neuron"
DEFAULT_PREFIX = "neuron/"
MAX_DATUMS_PER_CALL = 500
MAX_BUFFERED_MINUTES = 24 * 60  # what a long outage may keep before the oldest minutes are dropped
HTTP_TIMEOUT_S = 10
RETRIES = 3


def log(message: str) -> None:
    print(f"chipwise-neuron-agent: {message}", file=sys.stderr, flush=True)


# --- reading neuron-monitor reports ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """The figures of one report the agent publishes (the same rules as the rollups: see ``to_sample``)."""

    at: datetime
    instance_id: str | None
    instance_type: str | None
    core_max: float | None  # busiest core, %; 0 when no application runs; None when the driver/device failed
    core_mean: float | None  # mean across in-use cores, %; likewise
    device_memory: float | None  # bytes, summed over processes; None when no process reported it
    executions: float  # completed in the report's period, all processes


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def report_time(document: dict[str, Any]) -> datetime | None:
    """``timestamp`` or ``instance_info.report_time`` (ISO or epoch seconds), as UTC; None when absent or not a
    time (an epoch no clock can show is not one)."""
    for raw in (document.get("timestamp"), _obj(document.get("instance_info")).get("report_time")):
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            try:
                return datetime.fromtimestamp(float(raw), UTC)
            except (OverflowError, OSError, ValueError):
                continue
        if isinstance(raw, str) and raw.strip():
            try:
                parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    return None


def _core_values(runtime: dict[str, Any]) -> dict[str, float]:
    in_use = _obj(_obj(_obj(runtime.get("report")).get("neuroncore_counters")).get("neuroncores_in_use"))
    values: dict[str, float] = {}
    for index, core in in_use.items():
        value = _num(_obj(core).get("neuroncore_utilization"))
        if value is None:  # trn2: the physical cores behind a logical one
            physical = [_num(_obj(v).get("neuroncore_utilization")) for v in _obj(_obj(core).get("v3d")).values()]
            known = [p for p in physical if p is not None]
            value = sum(known) / len(known) if known else None
        if value is not None:
            if not 0 <= value <= 100:
                raise ValueError(f"NeuronCore {index} utilisation {value} is outside 0-100 %")
            values[str(index)] = value
    return values


def _driver_failed(document: dict[str, Any]) -> bool:
    error = _obj(document.get("neuron_hardware_info")).get("error")
    return isinstance(error, str) and bool(error.strip())


def to_sample(document: dict[str, Any], now: datetime) -> Sample:
    """One report's figures; ``now`` when the report carries no time of its own.

    neuron-monitor lists, for each process, every core of its device (0 % for cores it does not own): a core's
    utilisation is the maximum across the report's processes, the mean is over the cores in use; device memory
    and executions are summed over processes. No process at all is idle (0 %), unless the driver or device failed
    (``neuron_hardware_info.error``): that, or processes without any core figure, is missing utilisation (None),
    never 0 %. ``chipwise.collect.neuron.report_figures`` applies the same rules to the rollups. Raises ValueError
    for a utilisation outside 0-100 %."""
    runtimes = [r for r in document.get("neuron_runtime_data") or [] if isinstance(r, dict)]
    cores: dict[str, float] = {}
    for runtime in runtimes:
        for index, value in _core_values(runtime).items():
            cores[index] = max(cores.get(index, value), value)
    core_max: float | None
    core_mean: float | None
    if cores:
        core_max, core_mean = max(cores.values()), sum(cores.values()) / len(cores)
    elif not runtimes and not _driver_failed(document):
        core_max = core_mean = 0.0  # neuron-monitor ran and no application did: idle
    else:
        core_max = core_mean = None  # the driver or device failed, or no core figures: unknown, never idle
    memory: float | None = None
    executions = 0.0
    for runtime in runtimes:
        report = _obj(runtime.get("report"))
        used = _num(_obj(_obj(report.get("memory_used")).get("neuron_runtime_used_bytes")).get("neuron_device"))
        if used is not None:
            memory = (memory or 0.0) + used
        summary = _obj(_obj(report.get("execution_stats")).get("execution_summary"))
        executions += _num(summary.get("completed")) or 0.0
    if memory is None and not runtimes and core_max is not None:
        memory = 0.0  # idle: no application holds device memory
    info = _obj(document.get("instance_info"))
    return Sample(
        at=report_time(document) or now,
        instance_id=info.get("instance_id") or None,
        instance_type=info.get("instance_type") or None,
        core_max=core_max,
        core_mean=core_mean,
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
        if sample.core_max is not None and sample.core_mean is not None:
            self.core_max.add(sample.core_max)
            self.core_mean.add(sample.core_mean)
        if sample.device_memory is not None:
            self.memory.add(sample.device_memory)
        self.executions += sample.executions

    def datums(self, dimensions: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """The minute's datums; a statistic no report measured (the driver down all minute) is not published:
        missing telemetry must read as missing, not as 0 %."""
        dims = [{"Name": name, "Value": value} for name, value in dimensions]
        at = self.start.strftime("%Y-%m-%dT%H:%M:%SZ")
        datums: list[dict[str, Any]] = []
        for name, unit, stats in (
            ("NeuronCoreUtilization", "Percent", self.core_max),
            ("NeuronCoreUtilizationAvg", "Percent", self.core_mean),
            ("NeuronDeviceMemoryUsed", "Bytes", self.memory),
        ):
            if stats.count:
                datums.append(
                    {
                        "MetricName": name,
                        "Dimensions": dims,
                        "Timestamp": at,
                        "Unit": unit,
                        "StatisticValues": stats.as_statistic_values(),
                    }
                )
        datums.append(
            {
                "MetricName": "ExecutionsCompleted",
                "Dimensions": dims,
                "Timestamp": at,
                "Unit": "Count",
                "Value": self.executions,
            }
        )
        return datums


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


# --- AWS clients (boto3: its credential chain, SigV4, standard retries and AWS_ENDPOINT_URL) ----------------------


@lru_cache(maxsize=4)
def aws_client(service: Literal["cloudwatch", "s3"], region: str) -> Any:
    """A boto3 client, made once per service and region: standard retry mode (throttling and 5xx are retried with
    backoff), short timeouts so a publish never stalls the pipe for long."""
    import boto3  # imported here: --to stdout / --dry-run run without boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": RETRIES},
        connect_timeout=HTTP_TIMEOUT_S,
        read_timeout=HTTP_TIMEOUT_S,
        user_agent_extra="chipwise-neuron-agent",
    )
    return boto3.session.Session().client(service, region_name=region, config=config)


def _publish_errors() -> tuple[type[Exception], ...]:
    """What a failed publish raises after boto3's retries (kept for the next flush, never breaking the pipe)."""
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


# --- publishers ---------------------------------------------------------------------------------------------------


class Publisher(Protocol):
    def add(self, line: str, document: dict[str, Any], sample: Sample) -> None: ...

    def flush(self, final: bool = False) -> None: ...


class MetricsPublisher:
    """Per-minute datums to CloudWatch (or, with ``emit``, to a callable: stdout and tests)."""

    def __init__(
        self,
        dimensions: Callable[[Sample], Sequence[tuple[str, str]]],
        namespace: str = NAMESPACE,
        client: Any = None,
        emit: Callable[[list[dict[str, Any]]], None] | None = None,
        flush_seconds: float = 60.0,
    ) -> None:
        self.dimensions = dimensions
        self.namespace = namespace
        self.client = client
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
            except _publish_errors() as exc:
                log(f"publish failed, {len(self.pending)} datums kept for the next flush: {exc}")
                return
            del self.pending[: len(chunk)]
            self.published += len(chunk)

    def _send(self, datums: list[dict[str, Any]]) -> None:
        if self.emit is not None:
            self.emit(datums)
            return
        assert self.client is not None
        self.client.put_metric_data(Namespace=self.namespace, MetricData=datums)


class S3Publisher:
    """Raw reports as gzip JSON lines, one object per instance and flush (and never across an hour)."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        prefix: str = DEFAULT_PREFIX,
        account_id: str | None = None,
        flush_seconds: float = 300.0,
        max_lines: int = 20_000,
    ) -> None:
        self.client = client
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
            try:
                self.client.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType="application/gzip")
            except _publish_errors() as exc:
                log(f"upload of {len(lines)} reports failed, kept for the next flush: {exc}")
                continue
            del self.buffers[(instance, hour)]
            self.objects += 1


# --- the loop ------------------------------------------------------------------------------------------------------


MAX_LINE_CHARS = 1_000_000  # a real report is a few kilobytes


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not a number a report can carry")


def decode_line(line: str) -> Any:
    """One neuron-monitor JSON line decoded, as the agent and the collector both read it: a line longer than
    MAX_LINE_CHARS and NaN/Infinity are refused (ValueError), too deep a nesting raises RecursionError."""
    if len(line) > MAX_LINE_CHARS:
        raise ValueError(f"line longer than {MAX_LINE_CHARS:,} characters")
    return json.loads(line, parse_constant=_no_constants)


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
            document = decode_line(line)
            if not isinstance(document, dict):
                raise ValueError("not a JSON object")
            sample = to_sample(document, clock())
        except RecursionError:
            stats.malformed.append(number)
            log(f"line {number} skipped: nested too deeply")
            continue
        except (ValueError, TypeError, OverflowError) as exc:
            stats.malformed.append(number)
            log(f"line {number} skipped: {exc}")
            continue
        stats.reports += 1
        publisher.add(line, document, sample)
    publisher.flush(final=True)
    return stats


def _region(args: argparse.Namespace) -> str:
    """--region, else boto3's own resolution (AWS_REGION, AWS_DEFAULT_REGION, the profile), else the instance's
    (IMDSv2, through botocore's metadata fetcher)."""
    if args.region:
        return str(args.region)
    import boto3
    from botocore.utils import InstanceMetadataRegionFetcher

    region = boto3.session.Session().region_name or InstanceMetadataRegionFetcher(timeout=2).retrieve_region()
    if not region:
        raise SystemExit("chipwise-neuron-agent: no region: pass --region, set AWS_REGION, or run on EC2 (IMDS)")
    return str(region)


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
    if args.to == "stdout" or args.dry_run:
        return MetricsPublisher(
            _dimension_fn(args),
            args.namespace,
            emit=lambda datums: print(json.dumps(datums), file=out, flush=True),
            flush_seconds=args.flush_seconds or 60.0,
        )
    if args.to == "s3" and not args.bucket:
        raise SystemExit("chipwise-neuron-agent: --to s3 needs --bucket")
    region = _region(args)
    _require_credentials()
    if args.to == "s3":
        return S3Publisher(
            aws_client("s3", region),
            args.bucket,
            args.prefix,
            args.account_id,
            args.flush_seconds or 300.0,
            args.max_lines,
        )
    client = aws_client("cloudwatch", region)
    return MetricsPublisher(_dimension_fn(args), args.namespace, client, flush_seconds=args.flush_seconds or 60.0)


def _require_credentials() -> None:
    """Stop at once, with the reason, when boto3 finds no credentials (rather than failing every flush)."""
    import boto3

    if boto3.session.Session().get_credentials() is None:
        raise SystemExit(
            "chipwise-neuron-agent: no AWS credentials: attach an instance role (or set AWS_PROFILE, or "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or use --to stdout"
        )


def unsent(publisher: Publisher) -> int:
    """Datums or reports the publisher still holds after its final flush (they could not be published)."""
    if isinstance(publisher, MetricsPublisher):
        return len(publisher.pending)
    if isinstance(publisher, S3Publisher):
        return sum(len(lines) for lines in publisher.buffers.values())
    return 0


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
    left = unsent(publisher)
    if left:
        log(f"{left} could not be published (the reason is above); exiting 1")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
