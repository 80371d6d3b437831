"""What the inventory records about a resource beyond its columns: typed details per resource kind and the
workload hints (what runs on it). Collectors build them, the store keeps them as JSON, everything downstream
reads them by attribute (``parse_details`` and ``WorkloadHints.model_validate`` turn stored JSON back).

Reading is lenient (unknown keys in stored JSON are ignored, so rows written by an older version still load);
building is strict through the type checker (the pydantic mypy plugin rejects unknown keyword arguments).
"""

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

WorkloadKind = Literal["training", "inference"]


class _StoredJson(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore")


class WorkloadHints(_StoredJson):
    """What runs on the resource, as the collector read it from tags, image and environment; ``sources`` names
    where each hint came from (``tag``, ``image``, ``hf_model_id``, ``kind`` ...)."""

    model_family: str | None = None
    workload: WorkloadKind | None = None
    custom_cuda: bool = False
    owner: str | None = None
    image: str | None = None
    hf_model_id: str | None = None
    serving_stack: str | None = None
    neuron_image: bool = False
    sources: dict[str, str] = Field(default_factory=dict)
    # Model identity beyond a Hugging Face id: the JumpStart model id (tag or S3 path), the S3 model artifact, and
    # values that looked like a model id but were not (``/opt/ml/model``), with the variable that held them.
    jumpstart_model_id: str | None = None
    model_artifact: str | None = None
    rejected_model_ids: dict[str, str] = Field(default_factory=dict)
    # The engine under the serving stack when it differs from the image's name (DJL/LMI rolling with vLLM).
    serving_engine: str | None = None


class InstanceDetails(_StoredJson):
    """An EC2 instance (EKS nodes included)."""

    instance_id: str
    image_id: str | None = None
    availability_zone: str | None = None
    private_dns_name: str | None = None
    lifecycle: str = "on-demand"
    eks_cluster: str | None = None
    catalog: dict[str, Any] = Field(default_factory=dict)


class EndpointVariant(_StoredJson):
    """One production variant of a SageMaker endpoint and the container its model runs."""

    variant_name: str
    instance_type: str | None = None
    instance_count: int = 0
    serverless: dict[str, Any] | None = None
    model_name: str | None = None
    image: str | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    weight: float | None = None
    model_data_url: str | None = None  # ModelDataUrl or ModelDataSource.S3DataSource.S3Uri of the primary container


class InferenceComponent(_StoredJson):
    """An inference component placed on an endpoint variant (DescribeInferenceComponent)."""

    name: str
    arn: str | None = None
    variant_name: str | None = None
    status: str | None = None
    model_name: str | None = None
    image: str | None = None
    artifact_url: str | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    accelerators_required: Decimal | None = None  # NumberOfAcceleratorDevicesRequired per copy
    copies: int | None = None  # RuntimeConfig.CurrentCopyCount (else DesiredCopyCount)
    # The variant's instances this component reserves (copies x NumberOfAcceleratorDevicesRequired / the instance
    # type's accelerators), in instance-equivalents, and how that was worked out (or why it is unknown).
    instances_reserved: Decimal | None = None
    cost_basis: str | None = None
    created_at: datetime | None = None


class EndpointDetails(_StoredJson):
    """A SageMaker real-time (or asynchronous) endpoint."""

    endpoint_config_name: str | None = None
    variants: list[EndpointVariant] = Field(default_factory=list)
    async_inference: bool = False
    catalog: dict[str, Any] = Field(default_factory=dict)
    # A resource per production variant when the endpoint has several: the endpoint's own name (the CloudWatch
    # EndpointName dimension), this resource's variant, and how its cost was split from the endpoint's.
    endpoint_name: str | None = None
    variant_name: str | None = None
    cost_basis: str | None = None
    inference_components: list[InferenceComponent] = Field(default_factory=list)
    # The instance-equivalents this resource's cost covers when that is not its whole instance count: a variant
    # whose inference components' shares are known pays here only for the capacity no component reserves.
    billed_instances: Decimal | None = None
    billed_unknown: bool = False  # its components could not be read: what it pays for alone is unknown


class InferenceComponentDetails(_StoredJson):
    """An inference component as a resource of its own: its share of the variant it is placed on is its cost
    (``billed_instances``, unknown where the share cannot be worked out), its metrics are published by
    ``InferenceComponentName``."""

    component: InferenceComponent
    endpoint_name: str
    endpoint_arn: str | None = None
    variant_name: str | None = None
    catalog: dict[str, Any] = Field(default_factory=dict)

    @property
    def billed_instances(self) -> Decimal | None:
        return self.component.instances_reserved

    @property
    def cost_basis(self) -> str | None:
        return self.component.cost_basis


class TrainingJobDetails(_StoredJson):
    """A SageMaker training job."""

    status: str | None = None
    hosts: list[str] = Field(default_factory=list)
    training_start: datetime | None = None
    training_end: datetime | None = None
    billable_seconds: int | None = None
    training_seconds: int | None = None
    max_runtime_seconds: int | None = None
    spot: bool = False
    image: str | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    hyperparameters: dict[str, str] = Field(default_factory=dict)
    catalog: dict[str, Any] = Field(default_factory=dict)


class BatchJobSummary(_StoredJson):
    job_id: str | None = None
    name: str | None = None
    status: str | None = None


class BatchJobQueue(_StoredJson):
    """A job queue feeding a compute environment, with the jobs created in the look-back window."""

    name: str
    arn: str
    state: str | None = None
    jobs_in_window: int = 0
    jobs_by_status: dict[str, int] = Field(default_factory=dict)
    recent_jobs: list[BatchJobSummary] = Field(default_factory=list)


class BatchEnvironmentDetails(_StoredJson):
    """An AWS Batch compute environment. A managed EC2 environment runs its instances as the container instances of
    its Amazon ECS cluster (``ecs_cluster_arn``): ``instance_ids`` are their EC2 instance ids (ECS
    ListContainerInstances + DescribeContainerInstances), the ids the bill names its cost by; None when they could
    not be read (or the environment has no ECS cluster), never a guess."""

    instance_types: list[str] = Field(default_factory=list)
    type: str | None = None
    compute_type: str | None = None
    min_vcpus: int | None = None
    max_vcpus: int | None = None
    desired_vcpus: int = 0
    status: str | None = None
    job_queues: list[BatchJobQueue] = Field(default_factory=list)
    catalog: dict[str, Any] = Field(default_factory=dict)
    ecs_cluster_arn: str | None = None
    instance_ids: list[str] | None = None


class NotebookInstanceDetails(_StoredJson):
    """A SageMaker notebook instance (DescribeNotebookInstance). SageMaker publishes no activity metric for it: its
    lifecycle configuration (an idle-shutdown script) is what stops it when idle."""

    status: str | None = None
    lifecycle_config: str | None = None
    volume_size_gib: int | None = None
    catalog: dict[str, Any] = Field(default_factory=dict)


class CapacityReservationDetails(_StoredJson):
    """An EC2 On-Demand Capacity Reservation or Capacity Block (DescribeCapacityReservations). Unused capacity of a
    reservation is billed at the on-demand rate; a Capacity Block's fee is paid up front for its whole term."""

    reservation_id: str
    reservation_type: str = "default"  # "capacity-block" for a Capacity Block
    total_instances: int = 0
    available_instances: int = 0
    start_date: datetime | None = None
    end_date: datetime | None = None
    end_date_type: str | None = None
    instance_match_criteria: str | None = None
    catalog: dict[str, Any] = Field(default_factory=dict)

    @property
    def used_instances(self) -> int:
        return max(0, self.total_instances - self.available_instances)

    @property
    def capacity_block(self) -> bool:
        return self.reservation_type == "capacity-block"


class HyperPodInstanceGroup(_StoredJson):
    name: str
    instance_type: str | None = None
    current_count: int = 0
    target_count: int = 0


class HyperPodClusterDetails(_StoredJson):
    """A SageMaker HyperPod cluster (DescribeCluster) and its instance groups; the resource's instance type and
    count are those of its accelerated groups."""

    status: str | None = None
    orchestrator: str | None = None  # "eks" when orchestrated by an EKS cluster, else Slurm
    instance_groups: list[HyperPodInstanceGroup] = Field(default_factory=list)
    catalog: dict[str, Any] = Field(default_factory=dict)


class ProvisionedThroughputDetails(_StoredJson):
    """Amazon Bedrock Provisioned Throughput (ListProvisionedModelThroughputs): model units billed per hour whether
    used or not; with a commitment (``OneMonth``/``SixMonths``) billed until ``commitment_expiration``. Its
    invocations are published in AWS/Bedrock by ``ModelId`` = the provisioned model's ARN."""

    model_arn: str | None = None
    foundation_model_arn: str | None = None
    model_units: int = 0
    desired_model_units: int | None = None
    status: str | None = None
    commitment_duration: str | None = None
    commitment_expiration: datetime | None = None


class StudioAppDetails(_StoredJson):
    """A SageMaker Studio app (ListApps, DescribeApp) on an accelerator type: a space's or user profile's app that
    bills per hour while InService. Its activity is what Studio records: ``LastUserActivityTimestamp``."""

    domain_id: str
    user_profile: str | None = None
    space_name: str | None = None
    app_type: str | None = None
    app_name: str
    status: str | None = None
    last_user_activity: datetime | None = None
    lifecycle_config_arn: str | None = None
    catalog: dict[str, Any] = Field(default_factory=dict)


class NoDetails(_StoredJson):
    """A resource kind that records nothing beyond its columns."""


ResourceDetails = (
    InstanceDetails
    | EndpointDetails
    | InferenceComponentDetails
    | TrainingJobDetails
    | BatchEnvironmentDetails
    | NotebookInstanceDetails
    | CapacityReservationDetails
    | HyperPodClusterDetails
    | ProvisionedThroughputDetails
    | StudioAppDetails
    | NoDetails
)

DETAILS_BY_KIND: dict[str, type[ResourceDetails]] = {
    "ec2_instance": InstanceDetails,
    "sagemaker_endpoint": EndpointDetails,
    "sagemaker_inference_component": InferenceComponentDetails,
    "sagemaker_training_job": TrainingJobDetails,
    "batch_compute_environment": BatchEnvironmentDetails,
    "sagemaker_notebook_instance": NotebookInstanceDetails,
    "ec2_capacity_reservation": CapacityReservationDetails,
    "sagemaker_hyperpod_cluster": HyperPodClusterDetails,
    "bedrock_provisioned_throughput": ProvisionedThroughputDetails,
    "sagemaker_studio_app": StudioAppDetails,
}


def parse_details(kind: str, raw: Mapping[str, Any] | None) -> ResourceDetails:
    """The typed details of a stored resource of ``kind`` (``NoDetails`` for a kind without a model)."""
    model = DETAILS_BY_KIND.get(kind, NoDetails)
    return model.model_validate(dict(raw or {}))


def parse_hints(raw: Mapping[str, Any] | None) -> WorkloadHints:
    """Stored hints JSON back as :class:`WorkloadHints` (values of the wrong shape are dropped, not guessed)."""
    data = dict(raw or {})
    if data.get("workload") not in ("training", "inference"):
        data.pop("workload", None)
    return WorkloadHints.model_validate({k: v for k, v in data.items() if v is not None})


VARIANT_KEY_MARK = "#variant/"


def resource_key(arn: str, variant: str | None = None) -> str:
    """Chipwise's id of a resource (the scan document's ``resources[].id``, a finding's ``resource_id``): its ARN,
    or for one production variant of a multi-variant endpoint, the endpoint's ARN then ``#variant/<VariantName>``
    (SageMaker gives a variant no ARN of its own; the ARN field always holds one AWS accepts)."""
    return f"{arn}{VARIANT_KEY_MARK}{variant}" if variant else arn


def split_key(key: str) -> tuple[str, str | None]:
    """The ARN and the variant (None for a whole resource) of a :func:`resource_key`."""
    arn, mark, variant = key.partition(VARIANT_KEY_MARK)
    return arn, (variant or None) if mark else None


def component_arn(endpoint_arn: str, component_name: str) -> str:
    """An inference component's own ARN, in the documented form
    ``arn:<partition>:sagemaker:<region>:<account>:inference-component/<name>``, from the ARN of its endpoint
    (for a component whose description did not say it)."""
    head = endpoint_arn.split(":endpoint/", 1)[0]
    return f"{head}:inference-component/{component_name}"


def component_name_of(arn: str) -> str:
    """The name in an inference component's ARN."""
    return arn.split(":inference-component/", 1)[-1]
