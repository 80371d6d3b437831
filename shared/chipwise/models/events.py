"""The events Chipwise's Lambdas receive, as Powertools parser models (EventBridge, S3 notifications, SQS records).

Handlers parse with these (``parse(event, model=...)`` or a ``BatchProcessor(model=...)``) and pass typed objects
on; nothing below the edges reads an event's dict. A malformed event is rejected with the validation error's
locations and types only (:func:`describe_validation_error`), never its input: inputs may carry account ids,
ExternalIds or email addresses.
"""

from dataclasses import dataclass
from typing import Annotated, Generic, Literal, TypeVar
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.parser.models import (
    APIGatewayProxyEventV2Model,
    CloudFormationCustomResourceCreateModel,
    CloudFormationCustomResourceDeleteModel,
    CloudFormationCustomResourceUpdateModel,
    EventBridgeModel,
    S3EventNotificationEventBridgeModel,
    S3Model,
    SqsModel,
    SqsRecordModel,
)
from pydantic import BaseModel, ConfigDict, Field, Json, RootModel, ValidationError

from chipwise.models.batch import BatchJobDetail
from chipwise.models.scan import ScanCompleted, ScanRequest

_Root = TypeVar("_Root")


class _DeferredRoot(RootModel[_Root], Generic[_Root]):
    """A root model whose parametrisation (``_DeferredRoot[A | B]``) builds its validator on first use too:
    ``RootModel[A | B]`` would build one for every event union at import."""

    model_config = ConfigDict(defer_build=True)


class _DeferredEventBridge(EventBridgeModel):
    """An EventBridge event whose validator is built on first use (every subclass inherits ``defer_build``)."""

    model_config = ConfigDict(defer_build=True)


class _DeferredSqsRecord(SqsRecordModel):
    """An SQS record whose validator is built on first use (every subclass inherits ``defer_build``)."""

    model_config = ConfigDict(defer_build=True)


class ScanCompletedEvent(_DeferredEventBridge):
    """``ScanCompleted`` on the Chipwise bus (source ``chipwise``)."""

    source: Literal["chipwise"]
    detail_type: Literal["ScanCompleted"] = Field(alias="detail-type")
    detail: ScanCompleted


class ScheduledEvent(_DeferredEventBridge):
    """An EventBridge schedule (rule or Scheduler): its detail carries nothing Chipwise reads."""

    source: Literal["aws.events", "aws.scheduler"]
    detail_type: Literal["Scheduled Event"] = Field(alias="detail-type")


class NotifyTrigger(_DeferredRoot[ScanCompletedEvent | ScheduledEvent]):
    """What starts the ``notify`` function: its daily schedule or a ``ScanCompleted`` event."""


class BatchJobStateChangeEvent(_DeferredEventBridge):
    """AWS Batch's "Batch Job State Change" (source ``aws.batch``)."""

    source: Literal["aws.batch"]
    detail_type: Literal["Batch Job State Change"] = Field(alias="detail-type")
    detail: BatchJobDetail


class ScanRequestRecord(_DeferredSqsRecord):
    """One message on the scan queue: its body is a :class:`ScanRequest`."""

    body: Json[ScanRequest]


class S3TestEvent(BaseModel):
    """The message S3 sends once when a notification to SQS is configured."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    Event: Literal["s3:TestEvent"]
    Bucket: str


class S3NotificationRecord(_DeferredSqsRecord):
    """An SQS message carrying an S3 notification (or S3's one-off test event)."""

    body: Json[Annotated[S3TestEvent | S3Model, Field(union_mode="left_to_right")]]


class S3NotificationsFromSqs(SqsModel):
    model_config = ConfigDict(defer_build=True)

    Records: list[S3NotificationRecord]


class ObjectCreatedEvent(
    _DeferredRoot[
        Annotated[
            S3EventNotificationEventBridgeModel | S3NotificationsFromSqs | S3Model, Field(union_mode="left_to_right")
        ]
    ]
):
    """What the ``ingest_neuron`` function receives: any of the three ways an S3 "object created" arrives."""


class IntakeRetentionJob(BaseModel):
    """The intake function's daily schedule (its ``Input``): queue the digest, delete what is past retention."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    chipwise_job: Literal["intake_retention"]


class IntakeEvent(
    _DeferredRoot[Annotated[IntakeRetentionJob | APIGatewayProxyEventV2Model, Field(union_mode="left_to_right")]]
):
    """What the ``intake`` function receives: its retention schedule or an API Gateway HTTP API (2.0) request."""

    model_config = ConfigDict(defer_build=True)


class SchemaMigrationRequest(
    _DeferredRoot[
        Annotated[
            CloudFormationCustomResourceCreateModel
            | CloudFormationCustomResourceUpdateModel
            | CloudFormationCustomResourceDeleteModel,
            Field(discriminator="request_type"),
        ]
    ]
):
    """The ``SchemaMigration`` custom resource's request from CloudFormation (Create, Update or Delete)."""

    model_config = ConfigDict(defer_build=True)


@dataclass(frozen=True)
class ObjectRef:
    """One S3 object (an event names it, or a listing found it)."""

    bucket: str
    key: str

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def objects_created(created: ObjectCreatedEvent) -> list[ObjectRef]:
    """The objects an "object created" event names, whichever way it arrived. S3 notification keys are
    URL-encoded (spaces as ``+``); EventBridge's are not. S3's test event names none."""
    event = created.root
    if isinstance(event, S3EventNotificationEventBridgeModel):
        return [ObjectRef(bucket=event.detail.bucket.name, key=event.detail.object.key)]
    notifications = [event] if isinstance(event, S3Model) else [r.body for r in event.Records]
    refs: list[ObjectRef] = []
    for notification in notifications:
        if isinstance(notification, S3TestEvent):
            continue
        for record in notification.Records:
            obj = record.s3.object
            if record.eventName.startswith("ObjectCreated") and obj is not None:
                refs.append(ObjectRef(bucket=record.s3.bucket.name, key=unquote_plus(obj.key)))
    return refs


def describe_validation_error(exc: ValidationError) -> str:
    """Where and what, never the offending values: ``detail.account_id: string_pattern_mismatch; ...``."""
    parts = [
        (".".join(str(p) for p in error["loc"]) or "(event)")
        + (f": {error['msg']}" if error["type"] == "value_error" else f": {error['type']}")  # our own words
        + (f" ({error['ctx']['discriminator']})" if error["type"].startswith("union_tag") else "")  # a field name
        for error in exc.errors(include_input=False, include_url=False)
    ]
    return "; ".join(parts[:10]) + (f"; and {len(parts) - 10} more" if len(parts) > 10 else "")
