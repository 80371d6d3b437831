"""Live EC2 instances of accelerator types, EKS nodes included (CPU instances are not Chipwise's business)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext, Projection, lean_client
from chipwise.collect.inventory.answers import tags as tag_map
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import InstanceDetails

_EC2_LIVE_STATES = ["pending", "running", "stopping", "stopped"]
# What the inventory reads of DescribeInstances: the rest of an instance (~60 members, network interfaces, block
# devices, ...) is never parsed, the listing's largest CPU cost. A member added to _ec2_resource must be added here.
EC2_LISTING: Projection = (
    ("DescribeInstancesResult", ("Reservations", "NextToken")),
    ("Reservation", ("OwnerId", "Instances")),
    (
        "Instance",
        (
            "InstanceId",
            "InstanceType",
            "Tags",
            "ImageId",
            "Placement",
            "PrivateDnsName",
            "InstanceLifecycle",
            "State",
            "LaunchTime",
        ),
    ),
)
_EKS_CLUSTER_TAGS = ("eks:cluster-name", "aws:eks:cluster-name", "alpha.eksctl.io/cluster-name")
_K8S_CLUSTER_TAG = re.compile(r"^kubernetes\.io/cluster/(?P<name>.+)$")


def eks_cluster(tags: Mapping[str, str]) -> str | None:
    """The EKS cluster an instance is a node of, from its tags."""
    for key in _EKS_CLUSTER_TAGS:
        if tags.get(key):
            return tags[key]
    for key in tags:
        match = _K8S_CLUSTER_TAG.match(key)
        if match:
            return match["name"]
    return None


@register(
    name="inventory.ec2",
    kinds=("ec2_instance",),
    listing_calls=("ec2.DescribeInstances",),
    detail_calls=("ec2.DescribeInstanceTypes",),
)
def collect_ec2_instances(aws: AwsContext, account_id: str, _window_start: datetime) -> Inventory:
    """Live EC2 instances of accelerator types; a refused DescribeInstanceTypes call is a problem of the source
    (the types it asked for fall back to the catalog's family table)."""
    ec2 = lean_client(aws, "ec2", projection=EC2_LISTING)
    listed: list[tuple[dict[str, Any], str]] = []
    pages = ec2.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "instance-state-name", "Values": _EC2_LIVE_STATES}], PaginationConfig={"PageSize": 1000}
    )
    for page in pages:
        for reservation in page.get("Reservations", []):
            owner = reservation.get("OwnerId") or account_id
            listed.extend((dict(instance), owner) for instance in reservation.get("Instances", []))
    types = TypeFactsReader(aws)
    types.prefetch(str(i.get("InstanceType", "")) for i, _ in listed)
    found: list[CollectedResource] = []
    for instance, owner in listed:
        resource = _ec2_resource(instance, owner, aws.region, types)
        if resource.platform != "cpu":
            found.append(resource)
    return Inventory(resources=found, problems=list(types.problems))


def ec2_resource(
    instance: Mapping[str, Any], owner: str, region: str, types: TypeFactsReader | None = None
) -> CollectedResource:
    """One DescribeInstances instance as the scan records it (the remediation re-check reads it this way too)."""
    return _ec2_resource(dict(instance), owner, region, types)


def _ec2_resource(
    instance: dict[str, Any], owner: str, region: str, types: TypeFactsReader | None = None
) -> CollectedResource:
    instance_id = str(instance["InstanceId"])
    instance_type = str(instance.get("InstanceType", ""))
    tags = tag_map(instance.get("Tags"))
    typ = (types or TypeFactsReader(None)).facts(instance_type)
    details = InstanceDetails(
        instance_id=instance_id,
        image_id=instance.get("ImageId"),
        availability_zone=(instance.get("Placement") or {}).get("AvailabilityZone"),
        private_dns_name=instance.get("PrivateDnsName") or None,
        lifecycle=instance.get("InstanceLifecycle", "on-demand"),
        eks_cluster=eks_cluster(tags),
        catalog=typ.facts,
    )
    return typed_resource(
        typ,
        arn=f"arn:aws:ec2:{region}:{owner}:instance/{instance_id}",
        kind="ec2_instance",
        name=tags.get("Name") or instance_id,
        instance_type=instance_type,
        instance_count=1,
        state=(instance.get("State") or {}).get("Name"),
        launched_at=instance.get("LaunchTime"),
        tags=tags,
        details=details,
    )
