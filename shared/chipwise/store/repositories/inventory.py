"""Resources: what the scans saw in each account and region.

Store shape (read by the rules):

- ``resources`` one row per resource, identified by ``(arn, variant)`` (its key, the scan document's
  ``resources[].id``: the ARN, or the endpoint's ARN then ``#variant/<name>`` for one variant), with
  ``kind`` ec2_instance | sagemaker_endpoint | sagemaker_inference_component | sagemaker_training_job |
  batch_compute_environment,
  ``instance_type`` (SageMaker types keep the ``ml.`` prefix), ``instance_count``, ``platform``
  inferentia | trainium | nvidia | cpu, ``unknown_instance_type`` (the catalog does not know the type; the
  platform is then guessed from the family), ``state`` (as AWS says it, or ``"gone"`` once a later scan no
  longer finds a live resource: endpoints, instances, compute environments), ``last_scan_id``, ``tags``.
- ``hints`` and ``details``: the JSON of :class:`chipwise.models.resources.WorkloadHints` and of the details model
  of the resource's kind (:mod:`chipwise.models.resources`); read them back with ``parse_hints`` /
  ``parse_details``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import or_, select, update

from chipwise.models.resources import resource_key, split_key
from chipwise.store.base import SerializedJson
from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.tables import Resource
from chipwise.store.upsert import upsert

if TYPE_CHECKING:  # what a scan collects: the read commands need not load it
    from chipwise.models.records import CollectedResource

GONE = "gone"
# Kinds that are "live" capacity: when a scan no longer finds one, it was deleted. Training jobs simply age
# out of the listing window and keep their final state.
LIVE_KINDS = (
    "ec2_instance",
    "sagemaker_endpoint",
    "sagemaker_inference_component",
    "batch_compute_environment",
    "sagemaker_notebook_instance",
    "sagemaker_hyperpod_cluster",
    "ec2_capacity_reservation",
    "bedrock_provisioned_throughput",
    "sagemaker_studio_app",
)
_UPDATED = (
    "account_id",
    "region",
    "kind",
    "name",
    "instance_type",
    "instance_count",
    "parent_arn",
    "platform",
    "state",
    "unknown_instance_type",
    "launched_at",
    "ended_at",
    "tags",
    "hints",
    "details",
    "last_seen",
    "last_scan_id",
)


@dataclass(frozen=True, slots=True)
class ResourceRecord:
    """A stored resource (the module's docstring says what each field holds)."""

    id: int
    account_id: str
    region: str
    arn: str
    variant: str
    parent_arn: str | None
    kind: str
    name: str
    instance_type: str | None
    instance_count: int
    platform: str
    state: str | None
    unknown_instance_type: bool
    launched_at: datetime | None
    ended_at: datetime | None
    tags: dict[str, Any]
    hints: dict[str, Any]
    details: dict[str, Any]
    first_seen: datetime
    last_seen: datetime
    last_scan_id: str | None

    @property
    def key(self) -> str:
        """Chipwise's id of this resource (:func:`chipwise.models.resources.resource_key`)."""
        return resource_key(self.arn, self.variant)


def resource_record(row: Resource) -> ResourceRecord:
    return record_of(ResourceRecord, row)


class ResourceRepository(Repository):
    def save(
        self,
        account_id: str,
        region: str,
        resources: Sequence[CollectedResource],
        scan_id: str | None,
        now: datetime,
    ) -> dict[str, int]:
        """Insert or update every resource by ARN and variant (``first_seen`` kept); returns key -> row id."""
        rows = [_row(account_id, region, r, scan_id, now) for r in resources]
        upsert(self.session, Resource, rows, conflict=["arn", "variant"], update=list(_UPDATED))
        return self.ids(account_id, region)

    def ids(self, account_id: str, region: str) -> dict[str, int]:
        """Resource key (:func:`resource_key`) -> row id of an account's resources in a region."""
        stmt = select(Resource.arn, Resource.variant, Resource.id).where(
            Resource.account_id == account_id, Resource.region == region
        )
        return {resource_key(arn, variant): int(rid) for arn, variant, rid in self.session.execute(stmt)}

    def mark_gone(
        self,
        account_id: str,
        region: str,
        kinds: Iterable[str],
        seen: Iterable[str],
        now: datetime,
        keep_children_of: Iterable[str] = (),
        keep_names: Iterable[tuple[str, str]] = (),
    ) -> int:
        """Live resources of ``kinds`` whose key the scan did not find again (``seen``): state ``gone``,
        ``ended_at`` now. The variants and inference components of an endpoint in ``keep_children_of`` (listed but
        not described this scan) are kept as they are, and so are the resources named in ``keep_names`` (kind,
        name: listed, not described, and keyed only by what the describe call says)."""
        kinds = [k for k in kinds if k in LIVE_KINDS]
        if not kinds:
            return 0
        seen_keys = set(seen)
        parents = set(keep_children_of)
        names = set(keep_names)
        stmt = select(
            Resource.id, Resource.arn, Resource.variant, Resource.parent_arn, Resource.kind, Resource.name
        ).where(
            Resource.account_id == account_id,
            Resource.region == region,
            Resource.kind.in_(kinds),
            Resource.state.is_distinct_from(GONE),
        )
        gone = [
            rid
            for rid, arn, variant, parent, kind, name in self.session.execute(stmt)
            if resource_key(arn, variant) not in seen_keys
            and (parent or arn) not in parents
            and (kind, name) not in names
        ]
        for start in range(0, len(gone), 1000):
            self.session.execute(
                update(Resource).where(Resource.id.in_(gone[start : start + 1000])).values(state=GONE, ended_at=now)
            )
        return len(gone)

    def live_on_platforms(
        self, account_id: str, platforms: Iterable[str], ended_states: Iterable[str]
    ) -> list[ResourceRecord]:
        """An account's resources on ``platforms`` whose state is not one of ``ended_states``, by platform and
        name."""
        stmt = (
            select(Resource)
            .where(
                Resource.account_id == account_id,
                Resource.platform.in_(list(platforms)),
                or_(Resource.state.is_(None), Resource.state.not_in(list(ended_states))),
            )
            .order_by(Resource.platform, Resource.name)
        )
        return [resource_record(row) for row in self.session.scalars(stmt)]

    def list(
        self, account_id: str, region: str | None = None, kinds: Iterable[str] | None = None, include_gone: bool = False
    ) -> list[ResourceRecord]:
        stmt = select(Resource).where(Resource.account_id == account_id).order_by(Resource.kind, Resource.name)
        if region is not None:
            stmt = stmt.where(Resource.region == region)
        if kinds is not None:
            stmt = stmt.where(Resource.kind.in_(list(kinds)))
        if not include_gone:
            stmt = stmt.where(Resource.state.is_distinct_from(GONE))
        return [resource_record(row) for row in self.session.scalars(stmt)]

    def tags_by_key(self, keys: Iterable[str]) -> dict[str, dict[str, str]]:
        """The tags of each resource of ``keys`` (:func:`resource_key`) that the store holds (chunks of 500 ARNs a
        query)."""
        wanted = set(keys)
        arns = sorted({split_key(key)[0] for key in wanted})
        found: dict[str, dict[str, str]] = {}
        for start in range(0, len(arns), 500):
            stmt = select(Resource.arn, Resource.variant, Resource.tags).where(
                Resource.arn.in_(arns[start : start + 500])
            )
            for arn, variant, tags in self.session.execute(stmt):
                if (key := resource_key(arn, variant)) in wanted:
                    found[key] = {str(k): str(v) for k, v in (tags or {}).items()}
        return found

    def by_key(self, key: str) -> ResourceRecord | None:
        """The resource of a key (:func:`resource_key`): an ARN, or an endpoint's ARN with ``#variant/<name>``."""
        arn, variant = split_key(key)
        stmt = select(Resource).where(Resource.arn == arn, Resource.variant == (variant or ""))
        row = self.session.scalars(stmt).first()
        return None if row is None else resource_record(row)

    def by_keys(self, keys: Iterable[str]) -> dict[str, ResourceRecord]:
        """The resources of ``keys`` by key (those the store does not hold left out)."""
        wanted = set(keys)
        arns = sorted({split_key(key)[0] for key in wanted})
        found: dict[str, ResourceRecord] = {}
        for start in range(0, len(arns), 500):
            for r in self.session.scalars(select(Resource).where(Resource.arn.in_(arns[start : start + 500]))):
                if r.key in wanted:
                    found[r.key] = resource_record(r)
        return found

    def batch_launched(self, account_id: str, region: str) -> dict[str, str]:
        """The EC2 instances the account's live AWS Batch compute environments in ``region`` launched, as their
        inventory read them (their ECS clusters' container instances, ``details.instance_ids``): instance id (lower
        case) -> the environment's name. One statement; an environment whose instances were not read ties none."""
        return {i: name for i, (name, _) in self.batch_launchers(account_id, region).items()}

    def batch_launchers(self, account_id: str, region: str) -> dict[str, tuple[str, str]]:
        """:meth:`batch_launched` with each environment's ARN too: instance id (lower case) -> (name, ARN)."""
        stmt = select(Resource.name, Resource.arn, Resource.details).where(
            Resource.account_id == account_id,
            Resource.region == region,
            Resource.kind == "batch_compute_environment",
            Resource.state.is_distinct_from(GONE),
        )
        launched: dict[str, tuple[str, str]] = {}
        for name, arn, details in self.session.execute(stmt):
            ids = details.get("instance_ids") if isinstance(details, dict) else None
            launched.update((str(i).lower(), (str(name), str(arn))) for i in ids or [])
        return launched

    def by_instance_id(self, instance_id: str) -> ResourceRecord | None:
        """The EC2 instance with this id (whatever account or region it is in)."""
        stmt = select(Resource).where(
            Resource.kind == "ec2_instance", Resource.arn.endswith(f":instance/{instance_id}")
        )
        row = self.session.scalars(stmt).first()
        return None if row is None else resource_record(row)


def _row(account_id: str, region: str, r: CollectedResource, scan_id: str | None, now: datetime) -> dict[str, Any]:
    return {
        "account_id": account_id,
        "region": region,
        "arn": r.arn,
        "variant": r.variant or "",
        "parent_arn": r.parent_arn,
        "kind": r.kind,
        "name": r.name,
        "instance_type": r.instance_type,
        "instance_count": r.instance_count,
        "platform": r.platform,
        "state": r.state,
        "unknown_instance_type": r.unknown_instance_type,
        "launched_at": r.launched_at,
        "ended_at": r.ended_at,
        "tags": r.tags,
        "hints": SerializedJson(r.hints.model_dump_json()),
        "details": SerializedJson(r.details.model_dump_json()),
        "first_seen": now,
        "last_seen": now,
        "last_scan_id": scan_id,
    }
