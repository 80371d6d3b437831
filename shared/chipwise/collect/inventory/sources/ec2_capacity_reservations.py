"""Active On-Demand Capacity Reservations and Capacity Blocks of accelerator types."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.inventory.answers import tags as tag_map
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import CapacityReservationDetails

CAPACITY_RESERVATION_STATES = ("active",)  # the state that bills (scheduled blocks have not started)


@register(
    name="inventory.ec2_capacity_reservations",
    kinds=("ec2_capacity_reservation",),
    listing_calls=("ec2.DescribeCapacityReservations",),
    detail_calls=("ec2.DescribeInstanceTypes",),
)
def collect_capacity_reservations(aws: AwsContext, account_id: str, _window_start: datetime) -> Inventory:
    """Active On-Demand Capacity Reservations and Capacity Blocks of accelerator types
    (DescribeCapacityReservations, ``ReservationType`` ``default`` or ``capacity-block``)."""
    ec2 = aws.client("ec2")
    listed: list[dict[str, Any]] = []
    pages = ec2.get_paginator("describe_capacity_reservations").paginate(
        Filters=[{"Name": "state", "Values": list(CAPACITY_RESERVATION_STATES)}]
    )
    for page in pages:
        listed.extend(dict(r) for r in page.get("CapacityReservations", []))
    types = TypeFactsReader(aws)
    types.prefetch(str(r.get("InstanceType") or "") for r in listed)
    found: list[CollectedResource] = []
    for reservation in listed:
        if reservation.get("State") not in CAPACITY_RESERVATION_STATES:
            continue
        instance_type = str(reservation.get("InstanceType") or "")
        typ = types.facts(instance_type)
        if typ.platform == "cpu":
            continue
        reservation_id = str(reservation["CapacityReservationId"])
        owner = str(reservation.get("OwnerId") or account_id)
        tags = tag_map(reservation.get("Tags"))
        details = CapacityReservationDetails(
            reservation_id=reservation_id,
            reservation_type=str(reservation.get("ReservationType") or "default"),
            total_instances=int(reservation.get("TotalInstanceCount") or 0),
            available_instances=int(reservation.get("AvailableInstanceCount") or 0),
            start_date=reservation.get("StartDate"),
            end_date=reservation.get("EndDate"),
            end_date_type=reservation.get("EndDateType"),
            instance_match_criteria=reservation.get("InstanceMatchCriteria"),
            catalog=typ.facts,
        )
        found.append(
            typed_resource(
                typ,
                arn=str(
                    reservation.get("CapacityReservationArn")
                    or f"arn:aws:ec2:{aws.region}:{owner}:capacity-reservation/{reservation_id}"
                ),
                kind="ec2_capacity_reservation",
                name=tags.get("Name") or reservation_id,
                instance_type=instance_type,
                instance_count=details.total_instances,
                state=reservation.get("State"),
                launched_at=reservation.get("StartDate") or reservation.get("CreateDate"),
                tags=tags,
                details=details,
            )
        )
    return Inventory(resources=found, problems=list(types.problems))
