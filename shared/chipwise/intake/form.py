"""The intake page's view: labels, defaults, typed values and errors placed beside their fields.

The form's field names are the intake's JSON paths (``company.name``, ``workloads.0.stage``), so a
validation error's path is also the name of the field it belongs to; the page never has to guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chipwise.plan.intake import HONEYPOT_FIELD, MAX_WORKLOADS, STAGE_LABELS

FIELD_LABELS: dict[str, str] = {
    "company.name": "Company name",
    "company.website": "Website",
    "company.country": "Country",
    "company.stage": "Funding stage",
    "company.institutional_funding": "Raised money from a VC, accelerator or angel group",
    "company.activate_provider_org_id": "Activate Provider Org ID",
    "company.ai_first": "Our product is built on machine learning",
    "contact.name": "Your name",
    "contact.email": "Email",
    "aws.monthly_spend_usd": "Monthly AWS spend (USD)",
    "aws.account_ids": "AWS account ids",
    "aws.region": "Main region",
    "workloads": "Workloads",
    "partner_referral": "Yes, introduce me to an AWS partner",
}
REQUIRED_FIELDS = ("company.name", "contact.name", "contact.email")
REQUIRED_WORKLOAD_FIELDS = ("name", "model_family")
WORKLOAD_LABELS: dict[str, str] = {
    "name": "Name",
    "stage": "Stage",
    "model_family": "Model family",
    "parameters_billion": "Parameters (billions)",
    "current_instance_type": "Current instance type",
    "instance_count": "Instances",
    "hours_per_month": "Hours a month",
    "traffic": "Traffic",
    "requests_per_day": "Requests a day",
    "current_throughput_per_instance": "Requests a second per instance",
    "latency_ms_target": "Latency target (ms)",
    "tokens_per_request": "Tokens a request",
    "runs_per_month": "Training runs a month",
    "custom_cuda_kernels": "Uses custom CUDA kernels",
    "one_off": "A one-off job (will not repeat)",
    "foundation_model_only": "A standard foundation model would do",
    "serve_on_trainium": "Keep one chip family for training and serving",
    "runs_outside_aws": "Runs outside AWS today",
}
GENERAL = ""  # errors that belong to no single field are shown above the form


def _workload_field(path: str) -> str | None:
    """ "name" from "workloads.<index>.name" (any index: the page's template block uses a placeholder)."""
    parts = path.split(".")
    if len(parts) == 3 and parts[0] == "workloads" and parts[2] in WORKLOAD_LABELS:
        return parts[2]
    return None


def _workload_parts(path: str) -> tuple[int, str] | None:
    """(index, field) of a numbered workload field."""
    field = _workload_field(path)
    index = path.split(".")[1] if field else ""
    return (int(index), field) if field and index.isdigit() else None


def label_of(path: str) -> str:
    """The field's label (inside a workload block the legend already says which workload)."""
    field = _workload_field(path)
    if field is not None:
        return WORKLOAD_LABELS[field]
    return FIELD_LABELS.get(path, "This form")


def summary_label_of(path: str) -> str:
    """The label in the error summary, where the workload must be named."""
    workload = _workload_parts(path)
    if workload is not None:
        return f"Workload {workload[0] + 1}: {WORKLOAD_LABELS[workload[1]]}"
    return label_of(path)


def form_field(error_path: str) -> str:
    """The form field an error path belongs to ("aws.account_ids.1" -> "aws.account_ids")."""
    parts = error_path.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in FIELD_LABELS or _workload_parts(candidate) is not None:
            return candidate
    return GENERAL


def place_errors(errors: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Errors by form field (the first per field) and the ones that belong to no field."""
    by_field: dict[str, str] = {}
    general: list[str] = []
    for path, message in errors.items():
        name = form_field(path)
        if name == GENERAL:
            general.append(message)
        else:
            by_field.setdefault(name, message)
    return by_field, general


def flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Dotted field names -> typed strings, from the nested intake (lists of ids become one text)."""
    flat: dict[str, str] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, list) and all(isinstance(item, Mapping) for item in value):
            for index, item in enumerate(value):
                flat.update(flatten(item, f"{name}.{index}."))
        elif isinstance(value, list):
            flat[name] = ", ".join(str(item) for item in value)
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        elif value is not None:
            flat[name] = str(value)
    return flat


def workload_count(values: Mapping[str, str]) -> int:
    indices = [p[0] for p in (_workload_parts(name) for name in values) if p is not None]
    return min(max(indices, default=0) + 1, MAX_WORKLOADS)


def form_context(
    *,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
    message: str | None = None,
    model_families: list[str],
    instance_types: list[str],
    regions: list[str],
    retention_days: int = 90,
) -> dict[str, Any]:
    """Everything ``intake/form.html.j2`` needs; ``errors`` are keyed by intake path."""
    shown = dict(values or {})
    by_field, general = place_errors(errors or {})
    notes = [text for text in (message, *general) if text]
    return {
        "values": shown,
        "errors": by_field,
        "form_message": " ".join(notes) or None,
        "workload_count": workload_count(shown),
        "max_workloads": MAX_WORKLOADS,
        "honeypot": HONEYPOT_FIELD,
        "stage_labels": STAGE_LABELS,
        "model_families": model_families,
        "instance_types": instance_types,
        "regions": [(region, region) for region in regions],
        "label_of": label_of,
        "required_fields": REQUIRED_FIELDS,
        "required_workload_fields": REQUIRED_WORKLOAD_FIELDS,
        "retention_days": retention_days,
        "summary_label_of": summary_label_of,
    }
