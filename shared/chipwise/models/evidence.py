"""A finding's evidence: every figure a rule may record about a resource, with one schema for all rules.

Rules build their evidence as a mapping and :meth:`FindingEvidence.from_rule` validates it: an unknown key (a
typo, or a new figure nobody declared here) fails the rule's tests instead of reaching a reader that looks for
another spelling. The stored JSON keeps exactly the keys the rule set (``as_json``); readers such as the benchmark
dispatcher use :meth:`FindingEvidence.read` and read attributes.
"""

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

Number = int | float


class FindingEvidence(BaseModel):
    """The evidence of one finding; every field optional (each rule records the figures it used)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    # How the resource was priced
    hourly_rate_usd: Number | None = None
    rate_source: str | None = None
    catalog_rate_usd: Number | None = None
    commitment_discount: Number | None = None
    commitment_covered: bool | None = None
    instance_count: Number | None = None
    run_hours: Number | None = None
    window_days: Number | None = None
    window_spend_usd: Number | None = None
    # Utilisation and its sources
    idle_days: Number | None = None
    idle_hour_share: Number | None = None
    gpu_max_pct: Number | None = None
    gpu_p95_pct: Number | None = None
    gpu_p50_pct: Number | None = None
    gpu_hours_with_data: Number | None = None
    gpu_source: str | None = None
    busy_gpus_p95: Number | None = None
    cpu_p95_pct: Number | None = None
    neuroncore_max_pct: Number | None = None
    neuroncore_p95_pct: Number | None = None
    neuron_hours_with_data: Number | None = None
    neuron_source: str | None = None
    neuron_sources: str | None = None
    neuron_sources_checked: Number | None = None
    neuron_device_memory_gib: Number | None = None
    busy_cores_p95: Number | None = None
    busy_cores_basis: str | None = None
    executions_active_share: Number | None = None
    batch_jobs_in_window: Number | None = None
    # Traffic
    invocations_in_window: Number | None = None
    mean_requests_per_hour: Number | None = None
    peak_requests_per_hour: Number | None = None
    mean_executions_per_hour: Number | None = None
    mean_tokens_per_hour: Number | None = None
    peak_tokens_per_hour: Number | None = None
    active_hour_share: Number | None = None
    peak_to_mean: Number | None = None
    monthly_requests: Number | None = None
    input_tokens_per_request: Number | None = None
    output_tokens_per_request: Number | None = None
    latency_ms: Number | None = None
    latency_p95_ms: Number | None = None
    observed_tokens_per_second: Number | None = None
    # The model and the workload
    model_family: str | None = None
    hf_model_id: str | None = None
    model_id: str | None = None
    model_params_billion: Number | None = None
    model_memory_gib: Number | None = None
    model_memory_basis: str | None = None
    inference_support: str | None = None
    training_support: str | None = None
    workload_basis: str | None = None
    a10g_equivalents: Number | None = None
    # The recommended target
    required_memory_gib: Number | None = None
    required_cores: Number | None = None
    required_chips: Number | None = None
    target_hourly_usd: Number | None = None
    target_monthly_usd: Number | None = None
    current_cost_per_million_requests_usd: Number | None = None
    target_cost_per_million_requests_usd: Number | None = None
    price_performance_gain: Number | None = None
    price_performance_gain_low: Number | None = None
    price_performance_gain_high: Number | None = None
    savings_low_usd: Number | None = None
    savings_high_usd: Number | None = None
    throughput_ratio_low: Number | None = None
    throughput_ratio_high: Number | None = None
    best_case_target_count: int | None = None
    porting_cost_usd: Number | None = None
    # Bedrock on demand
    bedrock_model_id: str | None = None
    bedrock_input_per_million_usd: Number | None = None
    bedrock_output_per_million_usd: Number | None = None
    bedrock_monthly_usd: Number | None = None
    bedrock_price_estimate: bool | None = None
    # Where the resource's facts came from (issue 13): the variant of a multi-variant endpoint and how its cost was
    # split, the field that named the model, and which source answered for each signal.
    variant_name: str | None = None
    endpoint_name: str | None = None
    cost_basis: str | None = None
    model_id_basis: str | None = None
    model_family_basis: str | None = None
    jumpstart_model_id: str | None = None
    signal_sources: str | None = None
    # An inference component (or a variant it shares): its copies, accelerators per copy, the instance-equivalents
    # reserved, and the instance-equivalents the finding's cost covers.
    inference_component: str | None = None
    copies: Number | None = None
    accelerators_per_copy: Number | None = None
    billed_instances: Number | None = None
    saving_realised: str | None = None  # an inference component: its saving is cash when whole instances go
    # Off-hours capacity (accelerator_off_hours): the weekly pattern and the schedule it allows
    activity_signal: str | None = None
    activity_threshold: Number | None = None
    schedule: str | None = None
    off_stretches: str | None = None
    off_hours_per_week: Number | None = None
    on_hours_per_week: Number | None = None
    scale_ups_per_week: Number | None = None
    pattern_regularity: Number | None = None
    weeks_observed: Number | None = None
    cold_start_minutes: Number | None = None
    cold_start_monthly_usd: Number | None = None
    gross_monthly_savings_usd: Number | None = None  # the hours off before the cold starts (the saving is net)
    # Trustworthy telemetry and kinds without activity (issue 25): the verdict when Chipwise cannot judge, its
    # reason and fix; the second signals an idle GPU verdict was checked against (EKS nodes: Container Insights).
    verdict: str | None = None
    reason: str | None = None
    fix: str | None = None
    gpu_memory_max_pct: Number | None = None
    gpus_requested_max: Number | None = None
    gpu_power_max_watts: Number | None = None
    # Capacity held whether used or not (capacity_held_idle): reservations, Capacity Blocks, Batch minimum vCPUs
    used_instances: Number | None = None
    unused_instances: Number | None = None
    capacity_block: bool | None = None
    commitment_ends: str | None = None
    min_vcpus: Number | None = None
    held_instances: Number | None = None
    model_units: Number | None = None
    commitment_term: str | None = None
    scale_to_zero: str | None = None
    # Cost per million generated tokens (serving endpoints that publish their tokens; see chipwise.rules.tokens)
    token_data: str | None = None
    cost_per_million_tokens_allocation_usd: Number | None = None
    cost_per_million_tokens_usage_usd: Number | None = None
    target_cost_per_million_tokens_usd: Number | None = None
    # Set by the benchmark stage, not by rules: the latest measurement (see chipwise.benchmarks).
    benchmark: dict[str, Any] | None = None

    @classmethod
    def from_rule(cls, values: Mapping[str, Any]) -> Self:
        """A rule's evidence, validated: unknown keys and values of the wrong type raise."""
        return cls.model_validate(dict(values))

    @classmethod
    def read(cls, stored: Mapping[str, Any] | None) -> Self:
        """Stored evidence, leniently: keys this version does not know and values of the wrong type are dropped."""
        known = {k: v for k, v in (stored or {}).items() if k in cls.model_fields}
        try:
            return cls.model_validate(known)
        except ValueError:
            kept = {}
            for key, value in known.items():
                try:
                    cls.model_validate({key: value})
                except ValueError:
                    continue
                kept[key] = value
            return cls.model_validate(kept)

    def as_json(self) -> dict[str, Any]:
        """The keys that were set (None included), as JSON values."""
        return self.model_dump(mode="json", exclude_unset=True)
