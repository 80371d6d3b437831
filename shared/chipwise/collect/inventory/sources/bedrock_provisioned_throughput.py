"""Amazon Bedrock Provisioned Throughput: model units bought by the hour or on a commitment term."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.hints import workload_hints
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import ProvisionedThroughputDetails


@register(
    name="inventory.bedrock_provisioned_throughput",
    kinds=("bedrock_provisioned_throughput",),
    listing_calls=("bedrock.ListProvisionedModelThroughputs",),
)
def collect_provisioned_throughputs(aws: AwsContext, _account_id: str, _window_start: datetime) -> Inventory:
    """Provisioned Throughput (ListProvisionedModelThroughputs; its summary has every field read: no detail
    call)."""
    bedrock = aws.client("bedrock")
    summaries: list[dict[str, Any]] = []
    for page in bedrock.get_paginator("list_provisioned_model_throughputs").paginate():
        summaries.extend(dict(summary) for summary in page.get("provisionedModelSummaries", []))
    found: list[CollectedResource] = []
    for summary in summaries:
        details = ProvisionedThroughputDetails(
            model_arn=summary.get("modelArn"),
            foundation_model_arn=summary.get("foundationModelArn"),
            model_units=int(summary.get("modelUnits") or 0),
            desired_model_units=summary.get("desiredModelUnits"),
            status=summary.get("status"),
            commitment_duration=summary.get("commitmentDuration"),
            commitment_expiration=summary.get("commitmentExpirationTime"),
        )
        found.append(
            CollectedResource(
                arn=str(summary["provisionedModelArn"]),
                kind="bedrock_provisioned_throughput",
                name=str(summary.get("provisionedModelName") or summary["provisionedModelArn"]),
                instance_type=None,
                instance_count=details.model_units,
                platform="other",
                state=summary.get("status"),
                unknown_instance_type=False,
                launched_at=summary.get("creationTime"),
                hints=workload_hints(tags={}, kind="bedrock_provisioned_throughput"),
                details=details,
            )
        )
    return Inventory(resources=found)
