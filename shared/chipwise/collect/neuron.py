"""neuron-monitor telemetry: parse reports (JSON lines, optionally gzip), aggregate per instance, runtime and hour.

neuron-monitor writes one JSON document per report (schema: the Neuron SDK's neuron-monitor user guide, and
``aws.md`` §1.2). The parser reads what Chipwise needs and tolerates missing groups: an idle instance has no
``neuron_runtime_data``, a stopped driver leaves only errors. Every error string a report carries is collected
(``neuron_runtime_data[].error``, each metric group's ``error``, ``instance_info.error``,
``neuron_hardware_info.error``); a line that is not a JSON object is counted with its line number and the rest
of the file is kept.

A report has no time of its own: the shipper adds one (top-level ``timestamp``, or ``instance_info.report_time``
as Chipwise's agent and demo write it); without either the object's own time is used.

Aggregation produces one :class:`NeuronHourPart` per (instance, runtime tag, hour) and source object: partial
sums, merged in the store with other objects' parts for the same hour (see
:class:`chipwise.store.repositories.neuron.NeuronRepository`).
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import math
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from chipwise.economics import parse_utc
from chipwise.models.common import is_account_id
from chipwise.models.neuron import (
    INSTANCE_RUNTIME_TAG,
    HardwareInfo,
    MalformedLine,
    NeuronHourPart,
    NeuronReport,
    ParsedReports,
    ReportError,
    ReportFigures,
    ReportState,
    RuntimeReport,
    larger,
)
from chipwise.neuron_agent import MAX_LINE_CHARS, decode_line

# The rollup rows are per instance and hour, their runtime tag this marker (rows of other tags, written by
# earlier versions per runtime, are not read).
INSTANCE_TAG = INSTANCE_RUNTIME_TAG
_FAILED_EXECUTIONS = ("completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input", "failed_to_queue")
_ERROR_KINDS = ("generic", "numerical", "numeric", "transient", "model", "runtime", "hardware")
_ECC_FIELDS = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected")
_INSTANCE_ID = re.compile(r"^i-[0-9a-f]{8,17}$")
GZIP_MAGIC = b"\x1f\x8b"


# --- parsing ---------------------------------------------------------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# Every counter the store keeps is a signed 64-bit integer (BIGINT): a value outside that range cannot be a
# neuron-monitor counter, and would fail at the database and lose the object's good lines with it.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def _int(value: Any) -> int | None:
    number = _number(value)
    if number is None:
        return None
    whole = value if isinstance(value, int) else int(number)
    if not INT64_MIN <= whole <= INT64_MAX:
        raise ValueError(f"{value!r} is outside the signed 64-bit range")
    return whole


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO-8601 string or epoch seconds, as tz-aware UTC (naive means UTC). Raises ValueError for epoch seconds
    no clock can show; None for what is not a time at all (then the object's own time is used)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"timestamp {value!r} is not a time neuron-monitor reported at") from exc
    if isinstance(value, str) and value.strip():
        try:
            return parse_utc(value)
        except ValueError:
            return None
    return None


def parse_report(document: Mapping[str, Any], default_time: datetime | None = None) -> NeuronReport:
    """One neuron-monitor document; raises ValueError only when it is not an object at all."""
    if not isinstance(document, Mapping):
        raise ValueError("not a JSON object")
    errors: list[ReportError] = []
    instance = _dict(document.get("instance_info"))
    _note_error(errors, "instance_info", instance)
    hardware_raw = _dict(document.get("neuron_hardware_info"))
    _note_error(errors, "neuron_hardware_info", hardware_raw)
    system = _dict(document.get("system_data"))
    runtime_data = document.get("neuron_runtime_data") or []
    if isinstance(runtime_data, list) and len(runtime_data) > MAX_RUNTIMES_PER_REPORT:
        raise ValueError(f"more than {MAX_RUNTIMES_PER_REPORT} processes in one report")
    runtimes = [_runtime(entry, index, errors) for index, entry in enumerate(runtime_data) if isinstance(entry, dict)]
    memory = _dict(system.get("memory_info"))
    _note_error(errors, "system_data.memory_info", memory)
    hw_counters = _dict(system.get("neuron_hw_counters"))
    _note_error(errors, "system_data.neuron_hw_counters", hw_counters)
    for group in ("vcpu_usage",):
        _note_error(errors, f"system_data.{group}", _dict(system.get(group)))
    stamp = parse_timestamp(document.get("timestamp")) or parse_timestamp(instance.get("report_time"))
    return NeuronReport(
        timestamp=stamp or default_time,
        instance_id=_text(instance.get("instance_id")),
        instance_type=_text(instance.get("instance_type")),
        region=_text(instance.get("instance_region")),
        availability_zone=_text(instance.get("instance_availability_zone")),
        hardware=_hardware(hardware_raw) if hardware_raw else None,
        runtimes=runtimes,
        system_memory_used_bytes=_int(memory.get("memory_used_bytes")),
        system_memory_total_bytes=_int(memory.get("memory_total_bytes")),
        ecc_events=sum(
            _int(device.get(f)) or 0
            for device in hw_counters.get("neuron_devices") or []
            if isinstance(device, dict)
            for f in _ECC_FIELDS
        ),
        errors=errors,
    )


def _note_error(errors: list[ReportError], location: str, group: Mapping[str, Any]) -> None:
    message = _text(group.get("error"))
    if message:
        errors.append(ReportError(location=location, message=message))


def _hardware(raw: Mapping[str, Any]) -> HardwareInfo:
    return HardwareInfo(
        device_type=_text(raw.get("neuron_device_type")),
        device_version=_text(raw.get("neuron_device_version")),
        core_version=_text(raw.get("neuroncore_version")),
        device_count=_int(raw.get("neuron_device_count")),
        device_memory_bytes=_int(raw.get("neuron_device_memory_size")),
        cores_per_device=_int(raw.get("neuroncore_per_device_count")),
        logical_core_config=_int(raw.get("logical_neuroncore_config")),
    )


def _runtime(entry: Mapping[str, Any], index: int, errors: list[ReportError]) -> RuntimeReport:
    pid = _int(entry.get("pid"))
    tag = _text(entry.get("neuron_runtime_tag")) or (str(pid) if pid is not None else f"runtime-{index}")
    where = f"neuron_runtime_data[{tag}]"
    _note_error(errors, where, entry)
    report = _dict(entry.get("report"))
    for group in ("neuroncore_counters", "execution_stats", "memory_used", "neuron_runtime_vcpu_usage"):
        _note_error(errors, f"{where}.{group}", _dict(report.get(group)))
    counters = _dict(report.get("neuroncore_counters"))
    stats = _dict(report.get("execution_stats"))
    memory = _dict(_dict(report.get("memory_used")).get("neuron_runtime_used_bytes"))
    vcpu = _dict(_dict(report.get("neuron_runtime_vcpu_usage")).get("vcpu_usage"))
    cores, flops = _cores(_dict(counters.get("neuroncores_in_use")))
    summary = _dict(stats.get("execution_summary"))
    error_summary = _dict(stats.get("error_summary"))
    latency = _dict(_dict(stats.get("latency_stats")).get("total_latency"))
    return RuntimeReport(
        tag=tag,
        pid=pid,
        period_s=_number(counters.get("period")) or _number(stats.get("period")),
        core_utilization=cores,
        flops=flops,
        device_memory_bytes=_int(memory.get("neuron_device")),
        host_memory_bytes=_int(memory.get("host")),
        executions_completed=_int(summary.get("completed")) or 0,
        executions_failed=sum(_int(summary.get(k)) or 0 for k in _FAILED_EXECUTIONS),
        error_counts={k: v for k in _ERROR_KINDS if (v := _int(error_summary.get(k)) or 0)},
        error_summary_seen=bool(error_summary),
        latency_p50_s=_number(latency.get("p50")),
        latency_p99_s=_number(latency.get("p99")),
        vcpu_user_percent=_number(vcpu.get("user")),
        vcpu_system_percent=_number(vcpu.get("system")),
    )


def _cores(in_use: Mapping[str, Any]) -> tuple[dict[str, float], float | None]:
    """Utilisation per logical core (Trn2 ``v3d``: the mean of its physical cores when the logical figure is
    missing) and the total FLOP/s."""
    if len(in_use) > MAX_CORES_PER_RUNTIME:
        raise ValueError(f"more than {MAX_CORES_PER_RUNTIME} NeuronCores in one process")
    cores: dict[str, float] = {}
    flops: float | None = None
    for core, raw in in_use.items():
        if not isinstance(raw, dict):
            continue
        value = _number(raw.get("neuroncore_utilization"))
        if value is None:
            physical = [_number(_dict(v).get("neuroncore_utilization")) for v in _dict(raw.get("v3d")).values()]
            known = [p for p in physical if p is not None]
            value = sum(known) / len(known) if known else None
        if value is not None:
            cores[str(core)] = value
        core_flops = _number(raw.get("flops"))
        if core_flops is not None:
            flops = (flops or 0.0) + core_flops
    return cores, flops


# Bounds on what one object may make Chipwise do: a real report is a few kilobytes, an hour of them a few megabytes.
# An admitted object is read as a stream (never whole): at most MAX_OBJECT_BYTES stored, MAX_DECOMPRESSED_BYTES of
# text, MAX_LINES_PER_OBJECT lines (a day of reports every 5 s is 17,280) of at most MAX_LINE_CHARS each; of the
# malformed lines the first MAX_MALFORMED_KEPT are kept with their reasons, the rest only counted.
MAX_DECOMPRESSED_BYTES = 64 * 2**20
MAX_OBJECT_BYTES = 64 * 2**20
MAX_LINES_PER_OBJECT = 50_000
MAX_MALFORMED_KEPT = 100
# What the parsed reports hold is bounded too: a report lists at most MAX_RUNTIMES_PER_REPORT processes of at most
# MAX_CORES_PER_RUNTIME cores (a trn2.48xlarge has 128 NeuronCores), and one object's reports at most
# MAX_RUNTIMES_PER_OBJECT processes in all (a report without any counts as one, eight cores as one more): about
# 3 KB of memory each.
MAX_RUNTIMES_PER_REPORT = 256
MAX_CORES_PER_RUNTIME = 256
MAX_RUNTIMES_PER_OBJECT = 40_000
# Reports older than this before the object's own time, or later than a little after it, cannot belong to it.
MAX_REPORT_AGE = timedelta(days=30)
MAX_CLOCK_SKEW = timedelta(hours=1)
EARLIEST_REPORT = datetime(2019, 1, 1, tzinfo=UTC)  # before the first Inferentia instances


class UnreadableLine(ValueError):
    """A line that is not text a report can be: longer than MAX_LINE_CHARS (its rest skipped unread), not UTF-8."""


def parse_lines(
    lines: Iterable[str | UnreadableLine],
    default_time: datetime | None = None,
    *,
    max_lines: int = MAX_LINES_PER_OBJECT,
) -> ParsedReports:
    """Every line of a JSON-lines file: reports, and malformed lines with their 1-based numbers. A line that is too
    long, nested too deeply, carries NaN/Infinity, a utilisation outside 0-100 %, an integer outside the signed
    64-bit range or a time outside the window the object can belong to is rejected alone; the rest of the file goes
    on. At most ``max_lines`` lines are read (``truncated`` says there were more); the first MAX_MALFORMED_KEPT
    malformed lines are kept, every one is counted (``malformed_count``)."""
    parsed = ParsedReports()
    runtimes = 0
    for number, line in enumerate(lines, start=1):
        if number > max_lines or runtimes >= MAX_RUNTIMES_PER_OBJECT:
            parsed.truncated = True
            break
        parsed.lines = number
        if isinstance(line, UnreadableLine):
            _malformed(parsed, number, str(line))
            continue
        if not line.strip():
            continue
        try:
            document = decode_line(line)
            report = parse_report(document, default_time)
            _check_physical(report, default_time)
            parsed.reports.append(report)
            runtimes += max(1, len(report.runtimes)) + sum(len(r.core_utilization) for r in report.runtimes) // 8
        except RecursionError:
            _malformed(parsed, number, "nested too deeply")
        except (ValueError, TypeError, OverflowError) as exc:  # JSONDecodeError is a ValueError
            _malformed(parsed, number, _reason(exc))
    return parsed


def _malformed(parsed: ParsedReports, number: int, reason: str) -> None:
    parsed.malformed_count += 1
    if len(parsed.malformed) < MAX_MALFORMED_KEPT:
        parsed.malformed.append(MalformedLine(line=number, reason=reason))


def _check_physical(report: NeuronReport, object_time: datetime | None) -> None:
    """Values a neuron-monitor cannot report are rejected, never stored: utilisation outside 0-100 %, negative
    memory or counts, a time before the epoch window of the object it came in."""
    for runtime in report.runtimes:
        for core, value in runtime.core_utilization.items():
            if not math.isfinite(value) or value < 0 or value > 100:
                raise ValueError(f"NeuronCore {core} utilisation {value} is outside 0-100 %")
        counts = {
            "device memory": runtime.device_memory_bytes,
            "host memory": runtime.host_memory_bytes,
            "completed executions": runtime.executions_completed,
            "failed executions": runtime.executions_failed,
            "FLOP/s": runtime.flops,
            "p50 latency": runtime.latency_p50_s,
            "p99 latency": runtime.latency_p99_s,
            **{f"{kind} errors": count for kind, count in runtime.error_counts.items()},
        }
        for name, count in counts.items():
            if count is not None and count < 0:
                raise ValueError(f"runtime {runtime.tag}: {name} {count} is negative")
    figures = report_figures(report)
    totals: tuple[int | None, ...] = (figures.device_memory_bytes, figures.host_memory_bytes)
    totals += (figures.executions_completed, figures.executions_failed)
    if any(total is not None and total > INT64_MAX for total in totals):  # each value fits, their sum does not
        raise ValueError("the runtimes' counters add up to more than the signed 64-bit range")
    if report.timestamp is not None and not EARLIEST_REPORT <= report.timestamp <= datetime.now(UTC) + MAX_CLOCK_SKEW:
        raise ValueError(f"report time {report.timestamp.isoformat()} is not a time neuron-monitor reported at")
    if report.timestamp is not None and object_time is not None:
        reference = object_time.astimezone(UTC)
        if not reference - MAX_REPORT_AGE <= report.timestamp <= reference + MAX_CLOCK_SKEW:
            raise ValueError(f"report time {report.timestamp.isoformat()} is outside the object's window")


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at column {exc.colno}"
    return str(exc).splitlines()[0][:200]


def _gunzip_bounded(body: bytes) -> bytes:
    """gzip (one member or several) decompressed to at most MAX_DECOMPRESSED_BYTES, a mebibyte at a time: a small
    bomb that expands to gigabytes is refused once past the limit, holding no more than the limit."""
    chunks: list[bytes] = []
    size = 0
    data = body
    try:
        while data:
            inflater = zlib.decompressobj(wbits=31)
            while not inflater.eof:
                piece = inflater.decompress(data, 1 << 20)
                size += len(piece)
                if size > MAX_DECOMPRESSED_BYTES:
                    raise ValueError(f"decompresses to more than {MAX_DECOMPRESSED_BYTES // 2**20} MiB")
                chunks.append(piece)
                data = inflater.unconsumed_tail
                if not data and not piece and not inflater.eof:
                    raise ValueError("corrupt gzip data: truncated")
            data = inflater.unused_data
    except zlib.error as exc:
        raise ValueError(f"corrupt gzip data: {exc}") from exc
    return b"".join(chunks)


class _RawStream(io.RawIOBase):
    """A stream with ``read(amt)`` (botocore's StreamingBody, a file) as a raw stream io.BufferedReader can wrap."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self._read = read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Capped(io.RawIOBase):
    """At most ``limit`` bytes of a stream: reading past them raises ValueError (a gzip bomb stops there)."""

    def __init__(self, stream: io.BufferedIOBase | gzip.GzipFile, limit: int, what: str) -> None:
        self._stream = stream
        self._left = limit
        self._message = f"{what} more than {limit // 2**20} MiB"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        if len(data) > self._left:
            raise ValueError(self._message)
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)


def stream_lines(read: Callable[[int], bytes]) -> Iterator[str | UnreadableLine]:
    """The lines of a reports object read as a stream (gzip recognised by its magic bytes, one member or several),
    in bounded memory: a buffer, one line of at most MAX_LINE_CHARS bytes at a time (a longer one comes back as
    :class:`UnreadableLine`, its rest skipped unread, as does a line that is not UTF-8) and gzip's window. Raises
    ValueError when the text passes MAX_DECOMPRESSED_BYTES or the gzip data is corrupt."""
    raw = io.BufferedReader(_RawStream(read), buffer_size=1 << 16)
    source: io.BufferedIOBase | gzip.GzipFile = raw
    if raw.peek(2)[:2] == GZIP_MAGIC:
        source = gzip.GzipFile(fileobj=raw, mode="rb")
    text = io.BufferedReader(_Capped(source, MAX_DECOMPRESSED_BYTES, "decompresses to"), buffer_size=1 << 16)
    try:
        while True:
            line = text.readline(MAX_LINE_CHARS + 1)
            if not line:
                return
            if len(line) > MAX_LINE_CHARS and not line.endswith(b"\n"):
                while (rest := text.readline(1 << 16)) and not rest.endswith(b"\n"):
                    pass
                yield UnreadableLine(f"line longer than {MAX_LINE_CHARS:,} characters")
                continue
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield UnreadableLine(f"not UTF-8 text (byte {exc.start})")
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"corrupt gzip data: {exc}") from exc


def decode_object(body: bytes) -> str:
    """The text of a reports object: gzip is recognised by its magic bytes, whatever the key says.

    Raises ValueError when the bytes are not (gzip of) UTF-8 text.
    """
    if body[:2] == GZIP_MAGIC:
        body = _gunzip_bounded(body)
    elif len(body) > MAX_DECOMPRESSED_BYTES:
        raise ValueError(f"larger than {MAX_DECOMPRESSED_BYTES // 2**20} MiB")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from exc


# --- one report's figures: what the agent publishes and the rollups store, by the same rules -----------------


def report_figures(report: NeuronReport) -> ReportFigures:
    """One report's instance-level figures.

    neuron-monitor lists, for each process, every core of the device it runs on (0 % for the cores it does not
    own): a core's utilisation is the one of the process that owns it, the maximum across the report's processes;
    the instance's mean is over the cores in use (every core any process lists). Device and host memory are summed
    over processes, executions too (each process counts its own, per period). A report without any runtime is idle
    (0 %) unless neuron-monitor said the driver or device failed (``neuron_hardware_info.error``): then, like a
    report whose runtimes carry no core figures at all, its utilisation is missing, never 0 %.
    :func:`chipwise.neuron_agent.to_sample` applies the same rules to the raw JSON.
    """
    cores: dict[str, float] = {}
    for runtime in report.runtimes:
        for core, value in runtime.core_utilization.items():
            cores[core] = max(cores.get(core, value), value)
    state: ReportState = "measured"
    if not cores:
        driver_failed = any(e.location == "neuron_hardware_info" for e in report.errors)
        state = "idle" if not report.runtimes and not driver_failed else "missing"
    idle = 0 if state == "idle" else None  # no application holds device or host memory
    p50 = [r.latency_p50_s for r in report.runtimes if r.latency_p50_s is not None]
    p99 = [r.latency_p99_s for r in report.runtimes if r.latency_p99_s is not None]
    return ReportFigures(
        state=state,
        cores=cores,
        device_memory_bytes=_sum_known(r.device_memory_bytes for r in report.runtimes) or idle,
        host_memory_bytes=_sum_known(r.host_memory_bytes for r in report.runtimes) or idle,
        executions_completed=sum(r.executions_completed for r in report.runtimes),
        executions_failed=sum(r.executions_failed for r in report.runtimes),
        latency_p50_s=sum(p50) / len(p50) if p50 else None,
        latency_p99_s=max(p99) if p99 else None,
        runtime_tags=sorted({r.tag for r in report.runtimes}),
    )


def _sum_known(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


# --- error counters: per period as documented, or running totals turned into deltas -------------------------


def is_running_total(values: Sequence[int]) -> bool:
    """Whether one process's error counter, report after report, is a running total rather than a count per
    period (the user guide says per period; real captures show totals): it never decreases and is non-zero in at
    least two reports. A count per period goes back to 0 after a burst; a total stays (or grows)."""
    nonzero = sum(1 for v in values if v > 0)
    return len(values) >= 2 and nonzero >= 2 and all(b >= a for a, b in itertools.pairwise(values))


def error_increments(reports: Sequence[NeuronReport], default_instance_id: str | None = None) -> list[int]:
    """Per report (in the given order), the execution errors new in it: each process's ``error_summary`` counters
    as counts per period, or, for a counter that is a running total (:func:`is_running_total`), its increase since
    the process's previous report (its first report adds nothing: what it counted happened before)."""
    series: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    order = sorted(range(len(reports)), key=lambda i: reports[i].timestamp or datetime.min.replace(tzinfo=UTC))
    for index in order:
        report = reports[index]
        instance = report.instance_id or default_instance_id or ""
        for runtime in report.runtimes:
            if not runtime.error_summary_seen:
                continue  # no counters this report: nothing to compare (a 0 would break a running total)
            process = str(runtime.pid) if runtime.pid is not None else runtime.tag
            for kind in (*_ERROR_KINDS, *(k for k in runtime.error_counts if k not in _ERROR_KINDS)):
                series[(instance, process, kind)].append((index, runtime.error_counts.get(kind, 0)))
    increments = [0] * len(reports)
    for points in series.values():
        values = [v for _, v in points]
        if is_running_total(values):
            for (index, value), previous in zip(points[1:], values, strict=False):
                increments[index] += value - previous
        else:
            for index, value in points:
                increments[index] += value
    return increments


# --- aggregation -----------------------------------------------------------------------------------------------


def aggregate_hourly(reports: Iterable[NeuronReport], default_instance_id: str | None = None) -> list[NeuronHourPart]:
    """Per (instance, hour) partial sums of :func:`report_figures`; reports without a time or an instance are
    skipped. Error strings count once per report, execution-error counters as :func:`error_increments` says."""
    ordered = list(reports)
    increments = error_increments(ordered, default_instance_id)
    parts: dict[tuple[str, datetime], NeuronHourPart] = {}
    for report, new_errors in zip(ordered, increments, strict=True):
        instance_id = report.instance_id or default_instance_id
        if report.timestamp is None or instance_id is None:
            continue
        hour = report.timestamp.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        key = (instance_id, hour)
        part = parts.get(key)
        if part is None:
            part = parts[key] = NeuronHourPart(instance_id, INSTANCE_TAG, hour)
        part.instance_type = part.instance_type or report.instance_type
        _add(part, report_figures(report), len(report.errors) + new_errors)
    return sorted(parts.values(), key=lambda p: (p.instance_id, p.hour))


def _add(part: NeuronHourPart, figures: ReportFigures, errors: int) -> None:
    part.reports += 1
    part.errors += errors
    part.runtime_tags = sorted(set(part.runtime_tags) | set(figures.runtime_tags))
    if figures.state == "missing":
        part.missing_reports += 1
    mean = figures.utilization_mean
    if mean is not None:
        part.util_sum += mean
        part.util_n += 1
    part.util_max = larger(part.util_max, figures.utilization_max)
    if figures.state != "missing":
        part.cores_in_use = larger(part.cores_in_use, len(figures.cores))
    part.device_memory_max = larger(part.device_memory_max, figures.device_memory_bytes)
    part.host_memory_max = larger(part.host_memory_max, figures.host_memory_bytes)
    part.executions_completed += figures.executions_completed
    part.executions_failed += figures.executions_failed
    if figures.latency_p50_s is not None:
        part.p50_sum += figures.latency_p50_s
        part.p50_n += 1
    part.p99_max = larger(part.p99_max, figures.latency_p99_s)


# --- where an object's reports come from ----------------------------------------------------------------------


def ids_from_key(key: str) -> tuple[str | None, str | None]:
    """(account id, instance id) named by an object key such as ``neuron/<account>/<instance>/<date>.jsonl.gz``
    or ``neuron/<instance>/<date>.jsonl.gz``; None for what the key does not name."""
    account = instance = None
    for segment in key.split("/"):
        if account is None and is_account_id(segment):
            account = segment
        elif instance is None and _INSTANCE_ID.match(segment):
            instance = segment
    return account, instance


def iter_lines(text: str) -> Iterator[str]:
    return iter(text.splitlines())
