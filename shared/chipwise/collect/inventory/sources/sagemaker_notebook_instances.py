"""SageMaker notebook instances on accelerator types (SageMaker publishes no activity metric for them; a stopped
one bills only its volume)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import NotebookInstanceDetails


@register(
    name="inventory.sagemaker_notebooks",
    kinds=("sagemaker_notebook_instance",),
    listing_calls=("sagemaker.ListNotebookInstances",),
    detail_calls=("ec2.DescribeInstanceTypes",),
)
def collect_notebook_instances(aws: AwsContext, _account_id: str, _window_start: datetime) -> Inventory:
    """Notebook instances on accelerator types (ListNotebookInstances; its summary has everything Chipwise reads)."""
    sm = aws.client("sagemaker")
    summaries: list[dict[str, Any]] = []
    for page in sm.get_paginator("list_notebook_instances").paginate():
        summaries.extend(dict(n) for n in page.get("NotebookInstances", []))
    types = TypeFactsReader(aws)
    types.prefetch(str(n.get("InstanceType") or "") for n in summaries)
    found: list[CollectedResource] = []
    for summary in summaries:
        instance_type = str(summary.get("InstanceType") or "")
        typ = types.facts(instance_type)
        if typ.platform == "cpu":
            continue
        details = NotebookInstanceDetails(
            status=summary.get("NotebookInstanceStatus"),
            lifecycle_config=summary.get("NotebookInstanceLifecycleConfigName"),
            catalog=typ.facts,
        )
        found.append(
            typed_resource(
                typ,
                arn=str(summary["NotebookInstanceArn"]),
                kind="sagemaker_notebook_instance",
                name=str(summary["NotebookInstanceName"]),
                instance_type=instance_type,
                instance_count=1,
                state=summary.get("NotebookInstanceStatus"),
                launched_at=summary.get("CreationTime"),
                details=details,
            )
        )
    return Inventory(resources=found, problems=list(types.problems))
