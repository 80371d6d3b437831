"""Small shared vocabularies."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import PlainSerializer, StringConstraints

from chipwise.economics import cents

# What accelerates an instance type, from EC2's own facts (DescribeInstanceTypes GpuInfo / NeuronInfo /
# InferenceAcceleratorInfo) or the catalog; ``other`` for accelerators Chipwise does not advise on (Qualcomm AI100,
# ...), ``cpu`` for none.
Platform = Literal["inferentia", "trainium", "nvidia", "cpu", "gaudi", "amd", "other"]
TargetPlatform = Literal["inferentia", "trainium", "bedrock", "nvidia"]
ResourceKind = Literal[
    "ec2_instance",
    "sagemaker_endpoint",
    "sagemaker_inference_component",
    "sagemaker_training_job",
    "batch_compute_environment",
    "batch_job_queue",
    "batch_job",
    "sagemaker_notebook_instance",
    "ec2_capacity_reservation",
    "sagemaker_hyperpod_cluster",
    "bedrock_provisioned_throughput",
    "sagemaker_studio_app",
]
# The kinds that serve requests on a SageMaker endpoint: the endpoint (or one variant) and an inference component.
SERVING_KINDS: tuple[str, ...] = ("sagemaker_endpoint", "sagemaker_inference_component")
Confidence = Literal["high", "medium", "low"]
Effort = Literal["none", "days", "weeks", "months"]
Action = Literal["delete", "stop", "rightsize", "migrate", "enable_telemetry", "schedule"]
FindingStatus = Literal["open", "resolved", "suppressed", "withdrawn"]
# The states in which a resource runs (and costs): EC2's, SageMaker's, Batch's, Bedrock's and a capacity
# reservation's. Here, not with the profiles that judge them, so the ledger reads them without loading the profiles.
LIVE_STATES = frozenset(
    {"running", "InService", "Updating", "SystemUpdating", "UpdateRollbackFailed", "InProgress", "ENABLED", "active"}
)
# Why a finding's saving is left out of the totals: its target has no usable price (ask for a quote), or the hours
# it would free are under a Savings Plan or reservation that is paid until it ends.
TotalsExclusion = Literal["quote_needed", "committed"]


# Money in documents: a Decimal serialised as a string with 2 decimals ("1234.56").
MoneyStr = Annotated[Decimal, PlainSerializer(lambda v: f"{cents(v)}", return_type=str)]

# A 12-digit AWS account id: the one definition every boundary validates against.
ACCOUNT_ID_PATTERN = r"^\d{12}$"
AccountId = Annotated[str, StringConstraints(pattern=ACCOUNT_ID_PATTERN)]
_ACCOUNT_ID = re.compile(ACCOUNT_ID_PATTERN)


def is_account_id(value: str) -> bool:
    """Whether ``value`` is a 12-digit AWS account id."""
    return bool(_ACCOUNT_ID.fullmatch(value))


def first_tag(tags: Mapping[str, str], keys: Iterable[str]) -> str | None:
    """The value of the first of ``keys`` the tags carry (case-insensitive keys; the bill's ``user:`` forms are
    keys like any other), None when none does."""
    lowered = {str(k).lower(): str(v) for k, v in tags.items() if v not in (None, "")}
    for key in keys:
        value = lowered.get(key.lower())
        if value:
            return value
    return None
