"""Small shared vocabularies."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import PlainSerializer

Platform = Literal["inferentia", "trainium", "nvidia", "cpu"]
TargetPlatform = Literal["inferentia", "trainium", "bedrock", "nvidia"]
ResourceKind = Literal[
    "ec2_instance",
    "sagemaker_endpoint",
    "sagemaker_training_job",
    "batch_compute_environment",
    "batch_job_queue",
    "batch_job",
]
Confidence = Literal["high", "medium", "low"]
Effort = Literal["none", "days", "weeks", "months"]
Action = Literal["delete", "stop", "rightsize", "migrate", "enable_telemetry"]
FindingStatus = Literal["open", "resolved", "suppressed"]

HOURS_PER_MONTH = Decimal("730")  # "monthly" everywhere means 730 hours

# Money in documents: a Decimal serialised as a string with 2 decimals ("1234.56").
MoneyStr = Annotated[Decimal, PlainSerializer(lambda v: f"{v.quantize(Decimal('0.01'))}", return_type=str)]
