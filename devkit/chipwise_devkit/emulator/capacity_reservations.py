"""EC2 capacity reservations and Capacity Blocks for moto, which has none (5.2.5): CreateCapacityReservation,
DescribeCapacityReservations, DescribeCapacityBlockOfferings and PurchaseCapacityBlock, shaped as botocore's EC2
service model says (``CapacityReservation``, ``CapacityBlockOffering``).

How a reservation is used: as on AWS, an ``open`` reservation is used by running instances of its type in its
Availability Zone (the emulator counts them, reservations created first filled first); a ``targeted`` one only by
instances launched into it, which moto's RunInstances does not record, so a targeted reservation reads unused.
``AvailableInstanceCount`` = ``TotalInstanceCount`` - the instances using it. A Capacity Block is a reservation of
``ReservationType`` ``capacity-block`` (targeted, as AWS makes them) from an offering the emulator quotes at once
for any type, count and duration (fee: the emulator's placeholder, not a price). Reservations live on moto's EC2
backend of the account and region, so ``/moto-api/reset`` empties them. Filters: ``state``, ``instance-type``,
``reservation-type``.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.ec2.exceptions import InvalidParameterValueError
from moto.ec2.models import ec2_backends
from moto.ec2.responses import EC2Response

_STATE_ATTRIBUTE = "chipwise_capacity_reservations"
_lock = threading.Lock()
_installed = False
OFFERING_PREFIX = "cbo-"


@dataclass
class CapacityReservation:
    reservation_id: str
    owner_id: str
    region: str
    instance_type: str
    availability_zone: str
    total: int
    match_criteria: str
    reservation_type: str
    create_date: datetime
    start_date: datetime
    end_date: datetime | None
    platform: str = "Linux/UNIX"
    tags: list[dict[str, str]] = field(default_factory=list)

    @property
    def arn(self) -> str:
        return f"arn:aws:ec2:{self.region}:{self.owner_id}:capacity-reservation/{self.reservation_id}"

    def state(self, now: datetime) -> str:
        if self.start_date > now:
            return "scheduled"
        if self.end_date is not None and self.end_date <= now:
            return "expired"
        return "active"

    def describe(self, used: int, now: datetime) -> dict[str, Any]:
        out: dict[str, Any] = {
            "CapacityReservationId": self.reservation_id,
            "OwnerId": self.owner_id,
            "CapacityReservationArn": self.arn,
            "InstanceType": self.instance_type,
            "InstancePlatform": self.platform,
            "AvailabilityZone": self.availability_zone,
            "Tenancy": "default",
            "TotalInstanceCount": self.total,
            "AvailableInstanceCount": max(0, self.total - used),
            "EbsOptimized": False,
            "EphemeralStorage": False,
            "State": self.state(now),
            "StartDate": self.start_date,
            "EndDateType": "limited" if self.end_date else "unlimited",
            "InstanceMatchCriteria": self.match_criteria,
            "CreateDate": self.create_date,
            "Tags": list(self.tags),
            "ReservationType": self.reservation_type,
        }
        if self.end_date is not None:
            out["EndDate"] = self.end_date
        return out


def reservations_of(backend: Any) -> dict[str, CapacityReservation]:
    state: dict[str, CapacityReservation] | None = getattr(backend, _STATE_ATTRIBUTE, None)
    if state is None:
        state = {}
        setattr(backend, _STATE_ATTRIBUTE, state)
    return state


def _backend(response: EC2Response) -> Any:
    return ec2_backends[response.current_account][response.region]


def _usage(backend: Any, reservations: list[CapacityReservation], now: datetime) -> dict[str, int]:
    """Instances using each active open reservation: running instances of its type in its zone, first come."""
    running: dict[tuple[str, str], int] = {}
    for instance in backend.all_instances():
        if instance.state == "running":
            key = (str(instance.instance_type), str(instance.placement.zone))
            running[key] = running.get(key, 0) + 1
    used: dict[str, int] = {}
    for reservation in sorted(reservations, key=lambda r: (r.create_date, r.reservation_id)):
        key = (reservation.instance_type, reservation.availability_zone)
        take = 0
        if reservation.match_criteria == "open" and reservation.state(now) == "active":
            take = min(reservation.total, running.get(key, 0))
            running[key] = running.get(key, 0) - take
        used[reservation.reservation_id] = take
    return used


def _tags(response: EC2Response) -> list[dict[str, str]]:
    tags = response._parse_tag_specification("capacity-reservation").get("capacity-reservation", {})
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def _new_id() -> str:
    return "cr-" + uuid.uuid4().hex[:17]


def create_capacity_reservation(self: EC2Response) -> ActionResult:
    instance_type = self._get_param("InstanceType")
    zone = self._get_param("AvailabilityZone")
    count = self._get_int_param("InstanceCount")
    if not instance_type or not zone or count is None or count < 1:
        raise InvalidParameterValueError("InstanceType, AvailabilityZone and a positive InstanceCount are required")
    criteria = str(self._get_param("InstanceMatchCriteria") or "open")
    end = self._get_param("EndDate")
    now = utcnow()
    reservation = CapacityReservation(
        reservation_id=_new_id(),
        owner_id=self.current_account,
        region=self.region,
        instance_type=str(instance_type),
        availability_zone=str(zone),
        total=int(count),
        match_criteria=criteria,
        reservation_type="default",
        create_date=now,
        start_date=now,
        end_date=_naive(end) if end else None,
        platform=str(self._get_param("InstancePlatform") or "Linux/UNIX"),
        tags=_tags(self),
    )
    backend = _backend(self)
    with _lock:
        reservations_of(backend)[reservation.reservation_id] = reservation
        used = _usage(backend, list(reservations_of(backend).values()), now)
    return ActionResult({"CapacityReservation": reservation.describe(used[reservation.reservation_id], now)})


def describe_capacity_reservations(self: EC2Response) -> ActionResult:
    ids = self._get_param("CapacityReservationIds", [])
    filters = self._filters_from_querystring()
    backend = _backend(self)
    now = utcnow()
    with _lock:
        everything = list(reservations_of(backend).values())
        used = _usage(backend, everything, now)
    found = [r.describe(used[r.reservation_id], now) for r in everything if not ids or r.reservation_id in ids]
    wanted = {
        "state": "State",
        "instance-type": "InstanceType",
        "reservation-type": "ReservationType",
    }
    for name, values in filters.items():
        key = wanted.get(name)
        if key is not None:
            found = [r for r in found if str(r[key]) in values]
    return ActionResult({"CapacityReservations": found})


def describe_capacity_block_offerings(self: EC2Response) -> ActionResult:
    instance_type = str(self._get_param("InstanceType"))
    count = self._get_int_param("InstanceCount") or 1
    hours = self._get_int_param("CapacityDurationHours") or 24
    start = _naive(self._get_param("StartDateRange")) if self._get_param("StartDateRange") else utcnow()
    zone = f"{self.region}a"
    end = start + timedelta(hours=hours)
    offering_id = f"{OFFERING_PREFIX}{instance_type}_{count}_{zone}_{int(start.timestamp())}_{hours}"
    offering = {
        "CapacityBlockOfferingId": offering_id,
        "InstanceType": instance_type,
        "AvailabilityZone": zone,
        "InstanceCount": count,
        "StartDate": start,
        "EndDate": end,
        "CapacityBlockDurationHours": hours,
        "UpfrontFee": "0.00",
        "CurrencyCode": "USD",
        "Tenancy": "default",
    }
    return ActionResult({"CapacityBlockOfferings": [offering]})


def purchase_capacity_block(self: EC2Response) -> ActionResult:
    offering_id = str(self._get_param("CapacityBlockOfferingId") or "")
    try:
        instance_type, count, zone, start, hours = offering_id.removeprefix(OFFERING_PREFIX).rsplit("_", 4)
        begin = datetime.fromtimestamp(int(start), UTC).replace(tzinfo=None)
        total, duration = int(count), int(hours)
    except ValueError:
        raise InvalidParameterValueError(f"Invalid capacity block offering id: {offering_id}") from None
    now = utcnow()
    reservation = CapacityReservation(
        reservation_id=_new_id(),
        owner_id=self.current_account,
        region=self.region,
        instance_type=instance_type,
        availability_zone=zone,
        total=total,
        match_criteria="targeted",
        reservation_type="capacity-block",
        create_date=now,
        start_date=begin,
        end_date=begin + timedelta(hours=duration),
        platform=str(self._get_param("InstancePlatform") or "Linux/UNIX"),
        tags=_tags(self),
    )
    backend = _backend(self)
    with _lock:
        reservations_of(backend)[reservation.reservation_id] = reservation
    return ActionResult({"CapacityReservation": reservation.describe(0, now)})


def _naive(value: Any) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


_ACTIONS = {
    "create_capacity_reservation": create_capacity_reservation,
    "describe_capacity_reservations": describe_capacity_reservations,
    "describe_capacity_block_offerings": describe_capacity_block_offerings,
    "purchase_capacity_block": purchase_capacity_block,
}


def install() -> None:
    """Add the actions to moto's ``EC2Response`` (idempotent, process-wide)."""
    global _installed
    with _lock:
        if _installed:
            return
        for action, method in _ACTIONS.items():
            setattr(EC2Response, action, method)
        _installed = True
