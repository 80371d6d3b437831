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
:class:`chipwise.store.repositories.usage.NeuronRepository`).
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from chipwise.economics import parse_utc
from chipwise.models.common import is_account_id
from chipwise.models.neuron import (
    HardwareInfo,
    MalformedLine,
    NeuronHourPart,
    NeuronReport,
    ParsedReports,
    ReportError,
    RuntimeReport,
    larger,
)

NO_RUNTIME_TAG = "(none)"  # hours in which neuron-monitor ran but no Neuron application did
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


def _int(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO-8601 string or epoch seconds, as tz-aware UTC (naive means UTC)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
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
    runtimes = [
        _runtime(entry, index, errors)
        for index, entry in enumerate(document.get("neuron_runtime_data") or [])
        if isinstance(entry, dict)
    ]
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
        latency_p50_s=_number(latency.get("p50")),
        latency_p99_s=_number(latency.get("p99")),
        vcpu_user_percent=_number(vcpu.get("user")),
        vcpu_system_percent=_number(vcpu.get("system")),
    )


def _cores(in_use: Mapping[str, Any]) -> tuple[dict[str, float], float | None]:
    """Utilisation per logical core (Trn2 ``v3d``: the mean of its physical cores when the logical figure is
    missing) and the total FLOP/s."""
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
MAX_LINE_CHARS = 1_000_000
MAX_DECOMPRESSED_BYTES = 64 * 2**20
# Reports older than this before the object's own time, or later than a little after it, cannot belong to it.
MAX_REPORT_AGE = timedelta(days=30)
MAX_CLOCK_SKEW = timedelta(hours=1)
EARLIEST_REPORT = datetime(2019, 1, 1, tzinfo=UTC)  # before the first Inferentia instances


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not a number a report can carry")


def parse_lines(lines: Iterable[str], default_time: datetime | None = None) -> ParsedReports:
    """Every line of a JSON-lines file: reports, and malformed lines with their 1-based numbers. A line that is too
    long, nested too deeply, carries NaN/Infinity, a utilisation outside 0-100 % or a time outside the window the
    object can belong to is rejected alone; the rest of the file goes on."""
    parsed = ParsedReports()
    for number, line in enumerate(lines, start=1):
        parsed.lines = number
        if not line.strip():
            continue
        try:
            if len(line) > MAX_LINE_CHARS:
                raise ValueError(f"line longer than {MAX_LINE_CHARS:,} characters")
            document = json.loads(line, parse_constant=_no_constants)
            report = parse_report(document, default_time)
            _check_physical(report, default_time)
            parsed.reports.append(report)
        except RecursionError:
            parsed.malformed.append(MalformedLine(line=number, reason="nested too deeply"))
        except (ValueError, TypeError, OverflowError) as exc:  # JSONDecodeError is a ValueError
            parsed.malformed.append(MalformedLine(line=number, reason=_reason(exc)))
    return parsed


def _check_physical(report: NeuronReport, object_time: datetime | None) -> None:
    """Values a neuron-monitor cannot report are rejected, never stored: utilisation outside 0-100 %, negative
    memory or counts, a time before the epoch window of the object it came in."""
    for runtime in report.runtimes:
        for core, value in runtime.core_utilization.items():
            if not math.isfinite(value) or value < 0 or value > 100:
                raise ValueError(f"NeuronCore {core} utilisation {value} is outside 0-100 %")
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


# --- aggregation -----------------------------------------------------------------------------------------------


def aggregate_hourly(reports: Iterable[NeuronReport], default_instance_id: str | None = None) -> list[NeuronHourPart]:
    """Per (instance, runtime, hour) partial sums; reports without a time or an instance are skipped."""
    parts: dict[tuple[str, str, datetime], NeuronHourPart] = {}
    for report in reports:
        instance_id = report.instance_id or default_instance_id
        if report.timestamp is None or instance_id is None:
            continue
        hour = report.timestamp.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        report_errors = len(report.errors)
        runtimes: list[RuntimeReport | None] = [*report.runtimes] or [None]
        for runtime in runtimes:
            tag = runtime.tag if runtime is not None else NO_RUNTIME_TAG
            key = (instance_id, tag, hour)
            part = parts.get(key)
            if part is None:
                part = parts[key] = NeuronHourPart(instance_id, tag, hour)
            part.instance_type = part.instance_type or report.instance_type
            _add(part, runtime, report_errors)
    return sorted(parts.values(), key=lambda p: (p.instance_id, p.runtime_tag, p.hour))


def _add(part: NeuronHourPart, runtime: RuntimeReport | None, report_errors: int) -> None:
    part.reports += 1
    part.errors += report_errors
    if runtime is None:  # neuron-monitor ran, no application did: the cores were idle
        part.util_n += 1
        part.util_max = larger(part.util_max, 0.0)
        part.cores_in_use = larger(part.cores_in_use, 0)
        return
    mean = runtime.utilization_mean
    if mean is not None:
        part.util_sum += mean
        part.util_n += 1
    part.util_max = larger(part.util_max, runtime.utilization_max)
    part.cores_in_use = larger(part.cores_in_use, len(runtime.core_utilization))
    part.device_memory_max = larger(part.device_memory_max, runtime.device_memory_bytes)
    part.host_memory_max = larger(part.host_memory_max, runtime.host_memory_bytes)
    part.executions_completed += runtime.executions_completed
    part.executions_failed += runtime.executions_failed
    part.errors += sum(runtime.error_counts.values())
    if runtime.latency_p50_s is not None:
        part.p50_sum += runtime.latency_p50_s
        part.p50_n += 1
    part.p99_max = larger(part.p99_max, runtime.latency_p99_s)


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
