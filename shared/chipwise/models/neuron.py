"""neuron-monitor reports, parsed: the fields Chipwise uses, every error the report carried, and what went wrong
reading a file of them. The raw schema is in the neuron-monitor user guide (see collect/neuron.py)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReportError(_Model):
    """An error string neuron-monitor put in a report, and where (``runtime[bert].memory_used``, ...)."""

    location: str
    message: str


class RuntimeReport(_Model):
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


class HardwareInfo(_Model):
    device_type: str | None = None
    device_version: str | None = None
    core_version: str | None = None
    device_count: int | None = None
    device_memory_bytes: int | None = Field(None, description="Per device.")
    cores_per_device: int | None = None
    logical_core_config: int | None = None


class NeuronReport(_Model):
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


class MalformedLine(_Model):
    line: int = Field(description="1-based line number in the file.")
    reason: str


class ParsedReports(_Model):
    """A file of neuron-monitor reports: the good ones, and the lines that could not be read."""

    reports: list[NeuronReport] = Field(default_factory=list)
    malformed: list[MalformedLine] = Field(default_factory=list)
    lines: int = 0


class NeuronIngestResult(_Model):
    """What ingesting one object (or file) did."""

    source: str
    account_id: str | None = None
    accepted: bool
    reason: str | None = Field(None, description="Why the whole object was rejected.")
    lines: int = 0
    reports: int = 0
    malformed: list[MalformedLine] = Field(default_factory=list)
    report_errors: int = Field(0, description="Error strings inside otherwise good reports.")
    rollups: int = Field(0, description="(instance, runtime, hour) rows written or merged.")
    instances: list[str] = Field(default_factory=list)
