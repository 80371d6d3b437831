"""SageMaker HyperPod clusters with their instance groups."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.listed import Listed, describe_listed
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import HyperPodClusterDetails, HyperPodInstanceGroup


@register(
    name="inventory.sagemaker_hyperpod",
    kinds=("sagemaker_hyperpod_cluster",),
    listing_calls=("sagemaker.ListClusters",),
    detail_calls=("sagemaker.DescribeCluster",),
)
def collect_hyperpod_clusters(aws: AwsContext, _account_id: str, _window_start: datetime) -> Inventory:
    """HyperPod clusters (ListClusters, DescribeCluster) with their instance groups; a cluster that cannot be
    described is a problem of its own, the others go on. The resource's type and count are its accelerated
    groups' (the first accelerated group's type; the count summed over the groups of that type)."""
    sm = aws.client("sagemaker")
    types = TypeFactsReader(aws)
    result = Inventory()
    for page in sm.get_paginator("list_clusters").paginate():
        for summary in page.get("ClusterSummaries", []):
            name, arn = str(summary["ClusterName"]), str(summary.get("ClusterArn") or "")
            listed = Listed("sagemaker_hyperpod_cluster", name, arn)
            cluster = describe_listed(result, listed, sm.describe_cluster, ClusterName=name)
            if cluster is not None:
                result.resources.append(_hyperpod_resource(dict(cluster), types))
    result.problems.extend(types.problems)
    return result


def _hyperpod_resource(cluster: Mapping[str, Any], types: TypeFactsReader) -> CollectedResource:
    groups = [
        HyperPodInstanceGroup(
            name=str(g.get("InstanceGroupName", "")),
            instance_type=g.get("InstanceType"),
            current_count=int(g.get("CurrentCount") or 0),
            target_count=int(g.get("TargetCount") or 0),
        )
        for g in cluster.get("InstanceGroups") or []
    ]
    types.prefetch(g.instance_type for g in groups)
    accelerated = [g for g in groups if g.instance_type and types.facts(g.instance_type).platform != "cpu"]
    instance_type = accelerated[0].instance_type if accelerated else (groups[0].instance_type if groups else None)
    typ = types.facts(instance_type)
    count = sum(g.current_count for g in groups if g.instance_type == instance_type)
    orchestrator = cluster.get("Orchestrator") or {}
    return typed_resource(
        typ,
        arn=str(cluster["ClusterArn"]),
        kind="sagemaker_hyperpod_cluster",
        name=str(cluster["ClusterName"]),
        instance_type=instance_type,
        instance_count=count,
        state=cluster.get("ClusterStatus"),
        launched_at=cluster.get("CreationTime"),
        details=HyperPodClusterDetails(
            status=cluster.get("ClusterStatus"),
            orchestrator="eks" if orchestrator.get("Eks") else "slurm",
            instance_groups=groups,
            catalog=typ.facts,
        ),
    )
