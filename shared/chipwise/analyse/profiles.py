"""Per-resource profiles: what a resource is, what it costs and how busy it was over the look-back window.

A profile is plain data (frozen dataclasses) so every rule is a pure function of profiles, testable without a
database. :func:`chipwise.analyse.profile_builder.build_profiles` assembles them from a
:class:`~chipwise.analyse.profile_builder.ProfileSource` (the store's
:class:`~chipwise.store.repositories.profile_inputs.ProfileInputRepository` reads it with a fixed number of SQL
statements whatever the number of resources). This module imports no database code.

Signals are named by what they mean, not where they came from: ``neuron_util`` is the NeuronCore utilisation of the
busiest core whichever source had it (neuron-monitor reports in S3, Chipwise's agent in CloudWatch, Container
Insights), ``gpu_util`` the busiest GPU (CloudWatch agent on EC2; SageMaker endpoints and training jobs publish the
sum across GPUs, which is below 5 % only when every GPU is). Missing telemetry is kept apart from idleness: a
signal is None when nothing was published, and ``neuron_telemetry`` says whether Neuron metrics exist at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

from chipwise.analyse.metric_keys import NEURON_COVERAGE, MetricKey
from chipwise.analyse.series import HOUR, SeriesStats
from chipwise.economics import monthly_cost
from chipwise.models.common import LIVE_STATES as LIVE_STATES
from chipwise.models.common import Action
from chipwise.models.resources import WorkloadHints, resource_key

# A Savings Plan or reservation shows as amortized cost below unblended cost; below this share it is rounding.
COMMITMENT_MIN_SHARE = Decimal("0.01")

NeuronTelemetry = Literal["present", "missing", "unknown"]
RateSource = Literal["bill", "cost_explorer", "catalog"]
NEURON_PLATFORMS = frozenset({"inferentia", "trainium"})


@dataclass(frozen=True, slots=True)
class CostFacts:
    """The hourly rate of one instance of the resource's type and where it came from."""

    hourly_rate: Decimal | None
    rate_source: RateSource | None
    catalog_rate: Decimal | None = None
    commitment_discount: Decimal = Decimal(0)  # 1 - amortized/unblended for the type's usage (Savings Plans, RIs)

    @property
    def commitment_covered(self) -> bool:
        return self.commitment_discount >= COMMITMENT_MIN_SHARE


@dataclass(frozen=True, slots=True)
class Coverage:
    exists: bool
    hours_with_data: int


@dataclass(frozen=True, slots=True)
class Signals:
    """The utilisation and traffic series the rules read (None: not published for this resource)."""

    neuron_util: SeriesStats | None = None  # busiest NeuronCore, %
    neuron_util_avg: SeriesStats | None = None  # mean over the cores in use, %
    neuron_memory_bytes: SeriesStats | None = None  # Neuron device memory used
    neuron_executions: SeriesStats | None = None  # completed executions per hour
    neuron_cores_in_use: int | None = None
    neuron_source: str | None = None
    gpu_util: SeriesStats | None = None
    gpu_memory_util: SeriesStats | None = None  # SageMaker endpoints: % of GPU memory, summed across GPUs
    gpu_source: str | None = None
    gpu_memory_source: str | None = None
    cpu_util: SeriesStats | None = None
    invocations: SeriesStats | None = None  # requests per hour (hours with none are absent)
    latency_us: SeriesStats | None = None
    cpu_source: str | None = None
    generated_tokens: SeriesStats | None = None  # tokens generated per hour, where the server publishes them
    gpu_power_watts: SeriesStats | None = None  # EKS nodes: busiest GPU's power draw (Container Insights)
    gpus_requested: SeriesStats | None = None  # EKS nodes: GPUs the running pods hold (node_gpu_usage_total)
    gpu_limit: SeriesStats | None = None  # EKS nodes: GPUs the node has (node_gpu_limit)
    bedrock_invocations: SeriesStats | None = None  # Provisioned Throughput: invocations per hour (AWS/Bedrock)

    @property
    def sources(self) -> dict[str, str]:
        """Which source answered for each signal that has data (CloudWatch namespace, Container Insights, the
        CloudWatch agent, neuron-monitor)."""
        found = {
            "neuron_util": self.neuron_source,
            "gpu_util": self.gpu_source,
            "cpu_util": self.cpu_source,
            "invocations": "AWS/SageMaker" if self.invocations is not None else None,
            "latency": "AWS/SageMaker" if self.latency_us is not None else None,
            "gpu_memory_util": self.gpu_memory_source if self.gpu_memory_util is not None else None,
            "gpus_requested": "ContainerInsights" if self.gpus_requested is not None else None,
        }
        return {k: v for k, v in found.items() if v}


@dataclass(frozen=True, slots=True)
class ResourceProfile:
    """One resource over ``[window_start, window_end)``."""

    resource_id: int
    arn: str  # an ARN AWS accepts: the endpoint's for one variant of a multi-variant endpoint (``variant``)
    kind: str
    name: str
    account_id: str
    region: str
    instance_type: str | None
    instance_count: int
    platform: str
    state: str | None
    window_start: datetime
    window_end: datetime
    active_since: datetime  # earliest sign of life inside the window (launch time or first datapoint)
    run_hours: float  # hours it ran inside the window (wall clock, per instance)
    cost: CostFacts
    hints: WorkloadHints = field(default_factory=WorkloadHints)
    signals: Signals = field(default_factory=Signals)
    coverage: Mapping[MetricKey, Coverage] = field(default_factory=dict)
    instance_id: str | None = None
    eks_cluster: str | None = None
    # An EC2 instance an AWS Batch compute environment launched (its ECS cluster's container instance): the
    # environment's name. The environment is the unit of action and carries the instance's bill lines: the instance
    # is judged there, not on its own.
    batch_environment: str | None = None
    serverless: bool = False
    batch_jobs_in_window: int | None = None  # Batch compute environments: jobs its queues ran in the window
    tags: Mapping[str, str] = field(default_factory=dict)
    # One production variant of a multi-variant endpoint: its variant, endpoint, and how its cost was split.
    variant_name: str | None = None
    endpoint_name: str | None = None
    cost_basis: str | None = None
    # The instance-equivalents the cost covers when not the whole instance count: an inference component's share
    # of its variant (None: unknown, so no cost), or the capacity of a variant that no component reserves.
    billed_instances: Decimal | None = None
    component_name: str | None = None  # an inference component: its name (``name`` is ``<endpoint>/<component>``)
    billed_unknown: bool = False  # a variant whose components could not be read: its own share is unknown
    variant: str | None = None  # the production variant this resource is, when its endpoint has several
    # A kind whose activity AWS does not expose (a notebook instance): (reason, fix, action) for rule cannot_judge.
    activity_unknown: tuple[str, str, Action] | None = None
    # Capacity held whether used or not (issue 25): a capacity reservation's instances nothing runs in (Total -
    # used), whether it is a Capacity Block (fee paid up front) and when its term ends; a Batch compute
    # environment's minimum vCPUs and the vCPUs of one instance of its type.
    unused_instances: int | None = None
    capacity_block: bool = False
    commitment_ends: datetime | None = None
    min_vcpus: int | None = None
    vcpu_per_instance: int | None = None
    last_user_activity: datetime | None = None  # Studio apps: LastUserActivityTimestamp
    commitment_term: str | None = None  # Bedrock Provisioned Throughput: OneMonth / SixMonths (None: no commitment)
    # Read by every rule on every resource: worked out once, when the profile is made (or replaced).
    _key: str = field(init=False, repr=False, compare=False)
    _neuron_telemetry: NeuronTelemetry = field(init=False, repr=False, compare=False)
    _monthly_cost: Decimal | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key", resource_key(self.arn, self.variant))
        object.__setattr__(self, "_neuron_telemetry", self._telemetry())
        count = self.billed_count
        rate = self.cost.hourly_rate
        object.__setattr__(self, "_monthly_cost", None if rate is None or count is None else monthly_cost(rate, count))

    @property
    def key(self) -> str:
        """Chipwise's id of this resource (:func:`chipwise.models.resources.resource_key`)."""
        return self._key

    @property
    def window_hours(self) -> float:
        return (self.window_end - self.window_start) / HOUR

    @property
    def live(self) -> bool:
        """Capacity that bills now (a running instance, an in-service endpoint, a training job in progress)."""
        return self.state in LIVE_STATES

    @property
    def neuron(self) -> bool:
        return self.platform in NEURON_PLATFORMS

    @property
    def family(self) -> str | None:
        """The instance family without ``ml.`` (``inf2``)."""
        if not self.instance_type:
            return None
        name = self.instance_type.removeprefix("ml.")
        return name.split(".", 1)[0]

    @property
    def neuron_telemetry(self) -> NeuronTelemetry:
        """present: some Neuron source has data; missing: the sources were checked and none has; unknown: not
        checked (no coverage rows, e.g. the metrics stage failed)."""
        return self._neuron_telemetry

    def _telemetry(self) -> NeuronTelemetry:
        if self.signals.neuron_util is not None:
            return "present"
        checked = [c for key, c in self.coverage.items() if key in NEURON_COVERAGE]
        if any(c.exists and c.hours_with_data > 0 for c in checked):
            return "present"
        return "missing" if checked else "unknown"

    @property
    def shares_instances(self) -> bool:
        """An inference component, or a variant whose instances components share: whole-instance advice (resize,
        move, schedule) does not apply to its part of the bill."""
        return self.kind == "sagemaker_inference_component" or self.billed_instances is not None or self.billed_unknown

    @property
    def billed_count(self) -> Decimal | None:
        """The instance-equivalents its cost covers (None: unknown, an inference component without a known share)."""
        if self.kind == "sagemaker_inference_component" or self.billed_unknown:
            return self.billed_instances
        return Decimal(self.instance_count) if self.billed_instances is None else self.billed_instances

    @property
    def monthly_cost(self) -> Decimal | None:
        """Always-on monthly cost (730 h) of the instances (or the share of them) it pays for at the effective
        rate."""
        return self._monthly_cost
