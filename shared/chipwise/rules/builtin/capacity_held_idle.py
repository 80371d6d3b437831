"""capacity_held_idle: accelerator capacity paid for whether used or not, with nothing using it.

- **Capacity reservations** (EC2 On-Demand Capacity Reservations): the instances nothing runs in
  (``TotalInstanceCount`` - the instances using it) are billed at the on-demand rate. Saving: that unused capacity,
  by lowering the reservation's instance count (or cancelling it).
- **Capacity Blocks** (``ReservationType`` ``capacity-block``): the fee is paid up front for the whole term, so the
  unused share is committed money until the block ends: shown, and kept out of the totals (``committed``).
- **AWS Batch compute environments** on accelerator types whose minimum vCPUs (``minvCpus`` > 0) keep instances
  running while no job ran in the look-back window (at least ``min_idle_days``; DescribeComputeEnvironments gives no
  creation time): the instances the minimum holds (minvCpus / the type's vCPUs, rounded up) are the waste. Saving:
  set ``minvCpus`` to 0.

- **Bedrock Provisioned Throughput**: model units billed per hour whether used or not; no invocation in AWS/Bedrock
  (``ModelId`` = the provisioned model's ARN) over the window (at least ``min_idle_days``) is idle. Without a
  commitment: delete it; with one (``OneMonth``/``SixMonths``): it bills until ``commitmentExpirationTime``, which
  the outcome names (do not renew; delete it then). A model unit has no public price in Chipwise's verified data
  (``bedrock-prices-verified.csv`` holds on-demand token prices only): it is priced from what the account pays for
  it, its bill's effective rate per model-unit hour (under a commitment: shown, kept out of the totals until the
  term ends, ``committed``). Without a bill line the finding asks for a quote and stays out of the totals.

- **SageMaker Studio apps** on accelerator types, InService, whose last user activity (DescribeApp
  ``LastUserActivityTimestamp``) is older than ``min_idle_days``: the whole instance is the waste. Saving: delete
  the app (and turn on idle shutdown). An app with no recorded activity is rule ``cannot_judge``'s.

The rate is the account's effective rate for the type (Cost Explorer), else the catalog's on-demand price.
"""

from __future__ import annotations

import math
from decimal import Decimal

from pydantic import Field

from chipwise.analyse.metric_keys import BEDROCK_INVOCATIONS
from chipwise.analyse.profiles import ResourceProfile
from chipwise.economics import monthly_cost
from chipwise.rules.base import (
    EvidenceValue,
    FindingDraft,
    Outcome,
    Rule,
    RuleContext,
    RuleMeta,
    RuleParams,
    cost_evidence,
    money,
)
from chipwise.rules.registry import register


class CapacityHeldIdleParams(RuleParams):
    min_idle_days: float = Field(
        7, ge=1, le=63, description="Days a Batch compute environment must have held instances without jobs."
    )


@register
class CapacityHeldIdle(Rule[CapacityHeldIdleParams]):
    """Unused capacity reservations bill at the on-demand rate, Capacity Blocks are paid up front, and a Batch minimum
    vCPU count keeps instances running without jobs: capacity paid for with nothing on it."""

    meta = RuleMeta(
        title="Reserved or held accelerator capacity nothing uses",
        severity="high",
        applies_to="Active capacity reservations and Capacity Blocks; enabled Batch compute environments on "
        "accelerator types",
    )

    def evaluate(self, profile: ResourceProfile, ctx: RuleContext) -> FindingDraft | None:
        if profile.kind == "bedrock_provisioned_throughput" and profile.state == "InService":
            return self._provisioned(profile)
        if not profile.live or profile.platform == "cpu" or profile.cost.hourly_rate is None:
            return None
        if profile.kind == "ec2_capacity_reservation":
            return self._reservation(profile)
        if profile.kind == "batch_compute_environment":
            return self._batch(profile)
        if profile.kind == "sagemaker_studio_app":
            return self._studio(profile)
        return None

    def _studio(self, profile: ResourceProfile) -> FindingDraft | None:
        last, rate = profile.last_user_activity, profile.cost.hourly_rate
        if last is None or rate is None:
            return None
        quiet_days = (profile.window_end - last).total_seconds() / 86400
        if quiet_days < self.params.min_idle_days:
            return None
        monthly = monthly_cost(rate, 1)
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=monthly,
                action="delete",
                confidence="high",
                summary=f"{profile.name} (a Studio app on {profile.instance_type}) has had no user activity for "
                f"{quiet_days:.0f} days: delete the app (its space keeps the files) and turn on idle shutdown to "
                f"save {money(monthly)}/month.",
                evidence={"idle_days": round(quiet_days, 1), **cost_evidence(profile)},
                signals_used=("last_user_activity",),
            ),
        )

    def _reservation(self, profile: ResourceProfile) -> FindingDraft | None:
        unused = profile.unused_instances or 0
        rate = profile.cost.hourly_rate
        if unused <= 0 or rate is None:
            return None
        monthly = monthly_cost(rate, unused)
        ends = profile.commitment_ends.date().isoformat() if profile.commitment_ends else "its end date"
        used = profile.instance_count - unused
        what = f"{profile.name} ({unused} of {profile.instance_count} × {profile.instance_type} unused)"
        if profile.capacity_block:
            return self.draft(
                profile,
                Outcome(
                    monthly_cost=monthly,
                    saving=monthly,
                    action="rightsize",
                    confidence="high",
                    summary=f"{what}: a Capacity Block's fee is paid up front, so {money(monthly)}/month of it is "
                    f"committed until {ends}; run work on it or book the next block smaller.",
                    evidence={"instance_count": profile.instance_count, **_evidence(profile, used, unused)},
                    signals_used=("capacity_reservation_usage",),
                    excluded_from_totals="committed",
                ),
            )
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=monthly,
                action="rightsize",
                confidence="high",
                summary=f"{what}: unused reserved capacity bills at the on-demand rate; lower its instance count to "
                f"{used} (or cancel it) to save {money(monthly)}/month.",
                evidence=_evidence(profile, used, unused),
                signals_used=("capacity_reservation_usage",),
                target_count=used,
            ),
        )

    def _batch(self, profile: ResourceProfile) -> FindingDraft | None:
        minimum, vcpu, rate = profile.min_vcpus or 0, profile.vcpu_per_instance, profile.cost.hourly_rate
        jobs = profile.batch_jobs_in_window
        if minimum <= 0 or not vcpu or rate is None or jobs is None or jobs > 0:
            return None
        if profile.window_hours < self.params.min_idle_days * 24:
            return None  # the job listing looked back less than the idle period
        held = math.ceil(minimum / vcpu)
        monthly = monthly_cost(rate, held)
        return self.draft(
            profile,
            Outcome(
                monthly_cost=monthly,
                saving=monthly,
                action="rightsize",
                confidence="high",
                summary=f"{profile.name} keeps minvCpus {minimum} ({held} × {profile.instance_type}) running and ran "
                f"no job in {profile.window_hours / 24:.0f} days: set minvCpus to 0 to save {money(monthly)}/month.",
                evidence={
                    "batch_jobs_in_window": 0,
                    "min_vcpus": minimum,
                    "held_instances": held,
                    **cost_evidence(profile),
                    "instance_count": held,
                },
                signals_used=("batch_jobs",),
                target_count=0,
            ),
        )

    def _provisioned(self, profile: ResourceProfile) -> FindingDraft | None:
        covered = profile.coverage.get(BEDROCK_INVOCATIONS)
        invocations = profile.signals.bedrock_invocations
        if covered is None or not covered.exists or profile.window_hours < self.params.min_idle_days * 24:
            return None  # not read (rule cannot_judge says so) or a window shorter than the idle period
        if invocations is not None and invocations.total > 0:
            return None
        days = profile.window_hours / 24
        units = f"{profile.instance_count} model unit{'s' if profile.instance_count != 1 else ''}"
        if profile.commitment_term and profile.commitment_ends:
            ends = profile.commitment_ends.date().isoformat()
            step = f"its {profile.commitment_term} commitment bills until {ends}: do not renew it and delete it then"
        else:
            step = "it has no commitment: delete it"
        evidence: dict[str, EvidenceValue] = {
            "invocations_in_window": 0,
            "model_units": profile.instance_count,
            "commitment_ends": profile.commitment_ends.isoformat() if profile.commitment_ends else None,
            "commitment_term": profile.commitment_term,
            "window_days": round(days, 1),
        }
        idle = f"{profile.name} ({units}) had no invocation in {days:.0f} days; {step}."
        rate = profile.cost.hourly_rate
        if rate is not None and profile.cost.rate_source == "bill":  # what the account pays for it is its price
            monthly = monthly_cost(rate, profile.instance_count)
            committed = bool(profile.commitment_term and profile.commitment_ends)
            return self.draft(
                profile,
                Outcome(
                    monthly_cost=monthly,
                    saving=monthly,
                    action="delete",
                    confidence="high",
                    summary=f"{idle} Its bill: {money(rate * profile.instance_count)} an hour for the {units}, "
                    f"{money(monthly)} a month"
                    + (": committed until the term ends, saved from then on." if committed else "."),
                    evidence={**evidence, **cost_evidence(profile)},
                    signals_used=("invocations",),
                    target_count=0,
                    excluded_from_totals="committed" if committed else None,
                ),
            )
        return self.draft(
            profile,
            Outcome(
                monthly_cost=Decimal(0),
                saving=Decimal(0),
                action="delete",
                confidence="high",
                summary=f"{idle} Its price per model unit is not in Chipwise's verified price data and no bill line "
                "names it: ask AWS for a quote (Bedrock console) to size the saving.",
                evidence=evidence,
                signals_used=("invocations",),
                excluded_from_totals="quote_needed",
            ),
        )


def _evidence(profile: ResourceProfile, used: int, unused: int) -> dict[str, EvidenceValue]:
    return {
        "used_instances": used,
        "unused_instances": unused,
        "capacity_block": profile.capacity_block,
        "commitment_ends": profile.commitment_ends.isoformat() if profile.commitment_ends else None,
        **cost_evidence(profile),
    }
