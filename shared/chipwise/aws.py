"""boto3 sessions and clients: one cached factory, standard retries, assume-role, and an API-call counter.

The factory honours the standard environment (AWS_ENDPOINT_URL, AWS_PROFILE, AWS_REGION...), so the same
code talks to AWS in production and to the local emulator in tests and the demo.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, cast, overload

import boto3
import botocore.session
from botocore.config import Config
from botocore.model import ServiceModel, Shape
from botocore.parsers import JSONParser, ResponseParser, ResponseParserFactory
from botocore.utils import parse_timestamp

from chipwise.observability import quiet_libraries

if TYPE_CHECKING:
    from mypy_boto3_application_autoscaling import ApplicationAutoScalingClient
    from mypy_boto3_athena import AthenaClient
    from mypy_boto3_batch import BatchClient
    from mypy_boto3_ce import CostExplorerClient
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_glue import GlueClient
    from mypy_boto3_iam import IAMClient
    from mypy_boto3_organizations import OrganizationsClient
    from mypy_boto3_pricing import PricingClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sagemaker import SageMakerClient
    from mypy_boto3_scheduler import EventBridgeSchedulerClient
    from mypy_boto3_secretsmanager import SecretsManagerClient
    from mypy_boto3_sesv2 import SESV2Client
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_sts import STSClient

DEFAULT_MAX_ATTEMPTS = 6


def retry_config() -> Config:
    """Standard retry mode; ``AWS_MAX_ATTEMPTS`` (botocore's own variable) overrides the 6 attempts.

    Both count every attempt, the first included (botocore's ``total_max_attempts``): the Config key
    ``max_attempts`` would count retries only, one call more than the variable says."""
    attempts = int(os.environ.get("AWS_MAX_ATTEMPTS") or DEFAULT_MAX_ATTEMPTS)
    return Config(retries={"mode": "standard", "total_max_attempts": attempts}, connect_timeout=5, read_timeout=60)


class ApiCallCounter:
    """Counts every API call made by clients it is attached to, as ``service.Operation``.

    Retries are counted too: a throttled call that succeeds on its third attempt costs three requests.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def _on_call(self, event_name: str, service: str | None = None, **_kwargs: Any) -> None:
        # event_name looks like "before-send.cloudwatch.GetMetricData" (the service *id*: "cost-explorer" for ce)
        _, service_id, operation = event_name.split(".", 2)
        with self._lock:
            self._counts[f"{service or service_id}.{operation}"] += 1

    def attach(self, client: Any) -> None:
        """Count the client's calls under its boto3 name ("ce.GetCostAndUsage", not "cost-explorer....")."""
        service = client.meta.service_model.service_name
        client.meta.events.register("before-send.*.*", functools.partial(self._on_call, service=service))

    def count(self, name: str) -> None:
        """One request made outside botocore (``cloudwatch.QueryMetrics``, CloudWatch's PromQL API)."""
        with self._lock:
            self._counts[name] += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._counts.items()))

    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())


@dataclass(frozen=True)
class AssumeRole:
    """A member-account role to assume (with the ExternalId the role's trust policy requires)."""

    role_arn: str
    external_id: str | None = None
    session_name: str = "chipwise-scan"


@dataclass
class AwsContext:
    """The clients of one scan: one session (home or assumed), one region, one call counter."""

    session: boto3.Session
    region: str
    counter: ApiCallCounter = field(default_factory=ApiCallCounter)
    _clients: dict[tuple[str, str], Any] = field(default_factory=dict)
    _account: str | None = field(default=None, repr=False)

    @overload
    def client(self, service: Literal["athena"], region: str | None = None) -> AthenaClient: ...
    @overload
    def client(
        self, service: Literal["application-autoscaling"], region: str | None = None
    ) -> ApplicationAutoScalingClient: ...
    @overload
    def client(self, service: Literal["autoscaling", "ecs", "eks"], region: str | None = None) -> Any: ...  # no stubs
    @overload
    def client(self, service: Literal["batch"], region: str | None = None) -> BatchClient: ...
    @overload
    def client(self, service: Literal["bedrock"], region: str | None = None) -> Any: ...  # no stubs installed
    @overload
    def client(self, service: Literal["ce"], region: str | None = None) -> CostExplorerClient: ...
    @overload
    def client(self, service: Literal["savingsplans"], region: str | None = None) -> Any: ...  # no stubs installed
    @overload
    def client(self, service: Literal["cloudwatch"], region: str | None = None) -> CloudWatchClient: ...
    @overload
    def client(self, service: Literal["ec2"], region: str | None = None) -> EC2Client: ...
    @overload
    def client(self, service: Literal["events"], region: str | None = None) -> EventBridgeClient: ...
    @overload
    def client(self, service: Literal["glue"], region: str | None = None) -> GlueClient: ...
    @overload
    def client(self, service: Literal["iam"], region: str | None = None) -> IAMClient: ...
    @overload
    def client(self, service: Literal["organizations"], region: str | None = None) -> OrganizationsClient: ...
    @overload
    def client(self, service: Literal["pricing"], region: str | None = None) -> PricingClient: ...
    @overload
    def client(self, service: Literal["s3"], region: str | None = None) -> S3Client: ...
    @overload
    def client(self, service: Literal["sagemaker"], region: str | None = None) -> SageMakerClient: ...
    @overload
    def client(self, service: Literal["scheduler"], region: str | None = None) -> EventBridgeSchedulerClient: ...
    @overload
    def client(self, service: Literal["secretsmanager"], region: str | None = None) -> SecretsManagerClient: ...
    @overload
    def client(self, service: Literal["sesv2"], region: str | None = None) -> SESV2Client: ...
    @overload
    def client(self, service: Literal["sqs"], region: str | None = None) -> SQSClient: ...
    @overload
    def client(self, service: Literal["ssm"], region: str | None = None) -> SSMClient: ...
    @overload
    def client(self, service: Literal["sts"], region: str | None = None) -> STSClient: ...
    def client(self, service: str, region: str | None = None) -> Any:
        """A client for ``service`` (Cost Explorer is always us-east-1), built once per context."""
        region = "us-east-1" if service in {"ce", "pricing"} else (region or self.region)
        key = (service, region)
        if key not in self._clients:
            client = self.session.client(service, region_name=region, config=retry_config())  # type: ignore[call-overload]
            self.counter.attach(client)
            self._clients[key] = client
        return self._clients[key]

    def account_id(self) -> str:
        """The account these credentials act in: one GetCallerIdentity call per context, remembered."""
        if self._account is None:
            self._account = str(self.client("sts").get_caller_identity()["Account"])
        return self._account


def parse_aws_timestamp(value: Any) -> datetime:
    """botocore's timestamp parser with a fast path: an ISO 8601 text with its offset (``2026-11-12T10:00:00.000Z``,
    how the XML and JSON APIs send ``LaunchTime`` and the like) read by :meth:`datetime.fromisoformat` (microseconds
    where dateutil takes a tenth of a millisecond each: a third of the CPU of parsing DescribeInstances for 1,000
    instances); anything else (epoch seconds, RFC 822, text without an offset) by botocore's own parser. The same
    instant either way (UTC-aware)."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed
    return parse_timestamp(value)


def _core_session() -> botocore.session.Session:
    """A botocore session whose clients parse timestamps with :func:`parse_aws_timestamp`."""
    core = botocore.session.Session()
    core.get_component("response_parser_factory").set_parser_defaults(timestamp_parser=parse_aws_timestamp)
    return core


# --- lean clients: parse only what is read ---------------------------------------------------------------------

# (shape name, the members kept), for a client whose responses carry only those members of those shapes.
Projection = tuple[tuple[str, tuple[str, ...]], ...]


class _ProjectingParser:
    """botocore's parser for the protocol, handed the projected shape where one is named: the members left out are
    never walked (an EC2 instance has ~60 members, nested several deep; the inventory reads ten)."""

    def __init__(self, parser: ResponseParser, shapes: dict[str, Shape]) -> None:
        self._parser = parser
        self._shapes = shapes

    def parse(self, response: dict[str, Any], shape: Shape) -> Any:
        # botocore hands None for an operation without output (its stubs say Shape): nothing to project then
        projected = self._shapes.get(shape.name) if shape is not None else None
        return self._parser.parse(response, projected or shape)


# the scalar types botocore's JSON parser hands on as json.loads made them (no _handle_<type> of its own)
_JSON_AS_IS = frozenset({"string", "boolean", "integer", "long", "float", "double"})


class _ScalarListsAsIs(JSONParser):
    """botocore's parser for the JSON protocol, a list of scalars it would hand on unchanged taken whole instead of
    item by item (GetMetricData's Timestamps and Values: two calls per datapoint otherwise, the bulk of a scan's
    parsing). The same list either way: botocore keeps a null item as None and hands every other one through
    :meth:`_default_handle`, or the timestamp parser when that is :func:`_as_sent`."""

    def __init__(self, timestamp_parser: Any = None, blob_parser: Any = None) -> None:
        super().__init__(timestamp_parser=timestamp_parser, blob_parser=blob_parser)
        self._timestamps_as_sent = timestamp_parser is _as_sent

    def _handle_list(self, shape: Any, node: Any) -> Any:
        kind = shape.member.type_name
        if kind in _JSON_AS_IS or (kind == "timestamp" and self._timestamps_as_sent):
            return list(node)
        return cast(Any, super())._handle_list(shape, node)


class ProjectingParserFactory(ResponseParserFactory):
    def __init__(self, shapes: dict[str, Shape]) -> None:
        super().__init__()
        self._shapes = shapes
        self._kept: dict[str, Any] = {}  # the defaults as set (botocore's own are private)

    def set_parser_defaults(self, **kwargs: Any) -> None:
        super().set_parser_defaults(**kwargs)
        self._kept.update(kwargs)

    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name == "json":
            return _ProjectingParser(_ScalarListsAsIs(**self._kept), self._shapes)
        return _ProjectingParser(super().create_parser(protocol_name), self._shapes)


def projected_shapes(core: botocore.session.Session, service: str, projection: Projection) -> dict[str, Shape]:
    """The named shapes of ``service`` with only their kept members, resolved within one model, so a kept member
    that is itself projected (DescribeInstancesResult > Reservation > Instance) is projected too."""
    model = core.get_component("data_loader").load_service_model(service, "service-2")
    shapes = dict(model["shapes"])
    for name, keep in projection:
        definition = shapes[name]
        unknown = set(keep) - set(definition["members"])
        if unknown:  # a typo or a renamed member would silently read as absent
            raise ValueError(f"{service} shape {name} has no member {sorted(unknown)}")
        shapes[name] = {**definition, "members": {k: v for k, v in definition["members"].items() if k in keep}}
    projected = ServiceModel({**model, "shapes": shapes}, service_name=service)
    return {name: projected.shape_for(name) for name, _ in projection}


_lean_lock = threading.Lock()


@lru_cache(maxsize=8)
def _lean_core(service: str, projection: Projection, timestamps_as_sent: bool) -> botocore.session.Session:
    """One botocore session per kind of lean client, kept for the process (its loaded models are reused)."""
    core = botocore.session.Session()
    factory = ProjectingParserFactory(projected_shapes(core, service, projection) if projection else {})
    factory.set_parser_defaults(timestamp_parser=_as_sent if timestamps_as_sent else parse_aws_timestamp)
    core.register_component("response_parser_factory", factory)
    return core


def _as_sent(value: Any) -> Any:
    return value


def lean_client(
    aws: AwsContext,
    service: str,
    *,
    projection: Projection = (),
    timestamps_as_sent: bool = False,
    validate: bool = True,
) -> Any:
    """A client with the context's credentials, region, retries and call counter that parses less: only the
    ``projection``'s members of the shapes it names, timestamps left as the wire sent them when asked, and no
    parameter validation when the caller builds its parameters from typed values. For the calls whose responses
    are a scan's bulk (DescribeInstances, GetMetricData); every other call goes through :meth:`AwsContext.client`."""
    credentials = aws.session.get_credentials()
    frozen = credentials.get_frozen_credentials() if credentials is not None else None
    keys: dict[str, Any] = {}
    if frozen is not None and frozen.access_key and frozen.secret_key:
        keys = {
            "aws_access_key_id": frozen.access_key,
            "aws_secret_access_key": frozen.secret_key,
            "aws_session_token": frozen.token,
        }
    config = retry_config() if validate else retry_config().merge(Config(parameter_validation=False))
    with _lean_lock:  # a botocore session is not thread-safe; the clients it makes are
        client = _lean_core(service, projection, timestamps_as_sent).create_client(
            service, region_name=aws.region, config=config, **keys
        )
    aws.counter.attach(client)
    return client


@lru_cache(maxsize=8)
def base_session(profile: str | None = None) -> boto3.Session:
    """The home session (credentials from the standard chain), built once per profile. botocore's own loggers are
    held at WARNING first: at DEBUG they print request bodies (an AssumeRole's ExternalId, a secret's value)."""
    quiet_libraries()
    return boto3.Session(botocore_session=_core_session(), profile_name=profile)


def assume_role_session(role: AssumeRole, region: str, counter: ApiCallCounter | None = None) -> boto3.Session:
    """A session with the member account's temporary credentials (ExternalId sent when configured)."""
    sts = base_session().client("sts", region_name=region, config=retry_config())
    if counter is not None:
        counter.attach(sts)
    params: dict[str, Any] = {"RoleArn": role.role_arn, "RoleSessionName": role.session_name}
    if role.external_id:
        params["ExternalId"] = role.external_id
    creds = sts.assume_role(**params)["Credentials"]
    return boto3.Session(
        botocore_session=_core_session(),
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=region,
    )


def aws_context(region: str, role: AssumeRole | None = None) -> AwsContext:
    """Clients for one account and region: the home account, or a member account through ``role``."""
    counter = ApiCallCounter()
    session = base_session() if role is None else assume_role_session(role, region, counter)
    return AwsContext(session=session, region=region, counter=counter)
