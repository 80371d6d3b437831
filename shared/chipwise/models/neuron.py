"""neuron-monitor reports, parsed: the fields Chipwise uses, every error the report carried, and what went wrong
reading a file of them. The raw schema is in the neuron-monitor user guide (see collect/neuron.py)."""

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _ReportModel(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class ReportError(_ReportModel):
    """An error string neuron-monitor put in a report, and where (``runtime[bert].memory_used``, ...)."""

    location: str
    message: str


class RuntimeReport(_ReportModel):
    """One Neuron application (``neuron_runtime_data[]`` entry) in one report."""

    tag: str = Field(description="NEURON_PROCESS_TAG, or the PID when the application set none.")
    pid: int | None = None
    period_s: float | None = None
    core_utilization: dict[str, float] = Field(
        default_factory=dict, description="Logical NeuronCore index -> utilisation % over the period."
    )
    flops: float | None = None
    device_memory_bytes: int | None = None
    host_memory_bytes: int | None = None
    executions_completed: int = 0
    executions_failed: int = Field(0, description="Completed with errors, timed out, bad input, failed to queue.")
    error_counts: dict[str, int] = Field(default_factory=dict, description="execution_stats.error_summary.")
    error_summary_seen: bool = Field(
        False, description="The report carried an error_summary (its kinds left out of error_counts were 0)."
    )
    latency_p50_s: float | None = None
    latency_p99_s: float | None = None
    vcpu_user_percent: float | None = None
    vcpu_system_percent: float | None = None

    @property
    def utilization_mean(self) -> float | None:
        values = list(self.core_utilization.values())
        return sum(values) / len(values) if values else None

    @property
    def utilization_max(self) -> float | None:
        return max(self.core_utilization.values()) if self.core_utilization else None


class HardwareInfo(_ReportModel):
    device_type: str | None = None
    device_version: str | None = None
    core_version: str | None = None
    device_count: int | None = None
    device_memory_bytes: int | None = Field(None, description="Per device.")
    cores_per_device: int | None = None
    logical_core_config: int | None = None


class NeuronReport(_ReportModel):
    """One neuron-monitor JSON document."""

    timestamp: datetime | None = Field(None, description="When it was reported (added by the shipper).")
    instance_id: str | None = None
    instance_type: str | None = None
    region: str | None = None
    availability_zone: str | None = None
    hardware: HardwareInfo | None = None
    runtimes: list[RuntimeReport] = Field(default_factory=list)
    system_memory_used_bytes: int | None = None
    system_memory_total_bytes: int | None = None
    ecc_events: int = 0
    errors: list[ReportError] = Field(default_factory=list)


ReportState = Literal["measured", "idle", "missing"]
# neuron_rollups rows are per instance and hour; their runtime_tag column holds this marker.
INSTANCE_RUNTIME_TAG = "(instance)"


@dataclass(frozen=True)
class ReportFigures:
    """One report's instance-level figures (see ``chipwise.collect.neuron.report_figures``).

    ``state`` measured: some core has a figure; idle: neuron-monitor ran and no application did (0 %); missing:
    the driver or device failed, or no runtime carried core figures (utilisation unknown, never 0 %)."""

    state: ReportState
    cores: dict[str, float]  # core index -> utilisation %, the owning process's (max across processes)
    device_memory_bytes: int | None
    host_memory_bytes: int | None
    executions_completed: int
    executions_failed: int
    latency_p50_s: float | None
    latency_p99_s: float | None
    runtime_tags: list[str] = field(default_factory=list)

    @property
    def utilization_mean(self) -> float | None:
        """Mean over the cores in use; 0 when idle; None when missing."""
        if self.state == "idle":
            return 0.0
        return sum(self.cores.values()) / len(self.cores) if self.cores else None

    @property
    def utilization_max(self) -> float | None:
        if self.state == "idle":
            return 0.0
        return max(self.cores.values()) if self.cores else None


class MalformedLine(_ReportModel):
    line: int = Field(description="1-based line number in the file.")
    reason: str


class ParsedReports(_ReportModel):
    """A file of neuron-monitor reports: the good ones, and the lines that could not be read."""

    reports: list[NeuronReport] = Field(default_factory=list)
    malformed: list[MalformedLine] = Field(default_factory=list)
    malformed_count: int = Field(0, description="Every malformed line, also those past the ones kept.")
    lines: int = 0
    truncated: bool = Field(False, description="The object had more lines than are read from one object.")


class NeuronIngestResult(_ReportModel):
    """What ingesting one object (or file) did."""

    source: str
    account_id: str | None = None
    accepted: bool
    reason: str | None = Field(None, description="Why the whole object was rejected.")
    retryable: bool = Field(
        False, description="The object could not be read (S3 throttled, failed or denied): try again, never drop it."
    )
    lines: int = 0
    reports: int = 0
    malformed: list[MalformedLine] = Field(default_factory=list, description="The first malformed lines.")
    malformed_count: int = Field(0, description="Every malformed line, also those past the ones kept.")
    truncated: bool = Field(False, description="Lines past the per-object cap were not read.")
    report_errors: int = Field(0, description="Error strings inside otherwise good reports.")
    reports_missing: int = Field(
        0, description="Reports whose driver or device failed, or without core figures: utilisation missing, not 0 %."
    )
    rollups: int = Field(0, description="(instance, runtime, hour) rows written or merged.")
    instances: list[str] = Field(default_factory=list)


@dataclass
class NeuronHourPart:
    """One source object's partial sums for one (instance, runtime, hour); merged in the store."""

    instance_id: str
    runtime_tag: str
    hour: datetime
    instance_type: str | None = None
    reports: int = 0
    util_sum: float = 0.0
    util_n: int = 0
    util_max: float | None = None
    cores_in_use: int | None = None
    device_memory_max: int | None = None
    host_memory_max: int | None = None
    executions_completed: int = 0
    executions_failed: int = 0
    p50_sum: float = 0.0
    p50_n: int = 0
    p99_max: float | None = None
    errors: int = 0
    missing_reports: int = 0  # reports whose utilisation is unknown (driver or device failed)
    runtime_tags: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The partial sums as stored in ``neuron_rollups.parts`` (no identity fields)."""
        data = asdict(self)
        for key in ("instance_id", "runtime_tag", "hour"):
            data.pop(key)
        return data


def larger(current: Any, value: Any) -> Any:
    if value is None:
        return current
    return value if current is None else max(current, value)


def merge_parts(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``neuron_rollups`` figures from every source's partial sums for one hour.

    Utilisation average = mean over the reports that measured it of the mean across the instance's in-use cores
    (idle reports count 0 %, reports whose driver or device failed are left out and counted in
    ``reports_missing``); maximum = the busiest core in any report; memory = the largest of the reports' sums over
    processes; p50 latency = mean of the reports' p50; p99 = the worst report's p99.
    """
    merged = NeuronHourPart("", "", datetime.min.replace(tzinfo=UTC))
    for raw in parts:
        merged.instance_type = merged.instance_type or raw.get("instance_type")
        for name in ("reports", "util_sum", "util_n", "executions_completed", "executions_failed", "p50_sum", "p50_n"):
            setattr(merged, name, getattr(merged, name) + (raw.get(name) or 0))
        merged.errors += raw.get("errors") or 0
        merged.missing_reports += raw.get("missing_reports") or 0
        for name in ("util_max", "cores_in_use", "device_memory_max", "host_memory_max", "p99_max"):
            setattr(merged, name, larger(getattr(merged, name), raw.get(name)))
    return {
        "instance_type": merged.instance_type,
        "reports": merged.reports,
        "neuroncore_utilization_avg": merged.util_sum / merged.util_n if merged.util_n else None,
        "neuroncore_utilization_max": merged.util_max,
        "cores_in_use": merged.cores_in_use,
        "device_memory_used_max": merged.device_memory_max,
        "host_memory_used_max": merged.host_memory_max,
        "executions_completed": merged.executions_completed,
        "executions_failed": merged.executions_failed,
        "latency_p50_s": merged.p50_sum / merged.p50_n if merged.p50_n else None,
        "latency_p99_s": merged.p99_max,
        "errors": merged.errors,
        "reports_missing": merged.missing_reports,
    }
