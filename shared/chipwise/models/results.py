"""What the pipeline's event entry points return: typed results the Lambda handlers read by attribute (their
metrics) and answer with (:meth:`Answer.answer`, the JSON the invocation returns)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Answer(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    def answer(self) -> dict[str, Any]:
        """The invocation's JSON answer."""
        return self.model_dump(mode="json", exclude_none=True)


class RejectedObject(Answer):
    source: str
    reason: str | None = None


class NeuronIngestSummary(Answer):
    """``ingest_neuron``: the neuron-monitor objects an event named, what was stored, what was refused and why."""

    objects: int
    accepted: int
    rejected: list[RejectedObject]
    reports: int
    malformed_lines: int
    rollups: int


class StoredBillPeriod(Answer):
    billing_period: str
    line_items: int
    table: str


class BillIngestOutcome(Answer):
    """``ingest_bill``: each delivered manifest's period stored, or why the export was rejected."""

    status: Literal["stored", "ignored", "rejected"]
    stored: list[StoredBillPeriod]
    errors: list[str]


class BenchmarkDispatch(Answer):
    """``benchmark_dispatch``: what a ScanCompleted event submitted (nothing after a failed scan)."""

    status: Literal["dispatched", "skipped"]
    account_id: str
    scan_id: str | None = None
    reason: str | None = None
    submitted: int = 0
    failed: int = 0
    skipped: int = 0
    expired: int = 0
    run_ids: list[str] = []


class NotifyOutcome(Answer):
    """``notify``: what a schedule or a ScanCompleted event planned, queued and sent."""

    status: Literal["ok"] = "ok"
    trigger: Literal["schedule", "scan_completed"]
    account_id: str | None = None
    dry_run: bool
    planned: int
    enqueued: int
    already_due: int
    undelivered: int
    replay: bool
    sent: int
    retrying: int
    failed: int
    errors: dict[str, str]
