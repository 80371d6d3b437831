"""The base of the rules that move or resize a resource (gpu_inference_portable, gpu_training_portable,
inferentia_underutilized, trainium_serving_inference, spiky_inference_bedrock): the minimum saving worth reporting,
the precedence over an off-hours schedule, and the sizing of a Neuron target through the one sizing engine
(:mod:`chipwise.analyse.sizing`, which the planner uses too). A rule module keeps only what is its own: when it
fires, what it needs and what it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from chipwise.analyse import sizing
from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.sizing import Fit, Need
from chipwise.models.common import Action
from chipwise.rules.base import Outcome, Rule, RuleContext, RuleMeta, SavingParams, Severity

OFF_HOURS = "accelerator_off_hours"


S = TypeVar("S", bound=SavingParams)


def resizing_meta(*, title: str, severity: Severity, applies_to: str) -> RuleMeta:
    """The metadata of a rule that resizes or moves a resource. Resizing or moving changes the hourly rate a
    schedule would save on: the two savings do not add up, so the resource gets this finding and not also an
    off-hours one (a schedule is judged again after the change)."""
    return RuleMeta(title=title, severity=severity, applies_to=applies_to, supersedes=(OFF_HOURS,))


@dataclass(frozen=True)
class SizedTarget:
    """A sized Neuron target for a resource: what it must hold and carry (headroom included) and the fit."""

    need: Need
    fit: Fit
    saving: Decimal  # the resource's monthly cost - the target's

    def outcome(self, monthly: Decimal, action: Action, **details: Any) -> Outcome:
        """The outcome of moving the resource (``monthly``, its cost) onto this target: its saving, Inferentia
        instance type and count; ``details`` are the rest of the :class:`Outcome` (confidence, summary, ...)."""
        fit = self.fit
        return Outcome(
            monthly,
            self.saving,
            action,
            target_platform="inferentia",
            target_instance_type=fit.instance.name,
            target_count=fit.count,
            **details,
        )


class MigrationRule(Rule[S]):
    """A rule that proposes a cheaper place for a resource; see the module docstring."""

    def worth_reporting(self, saving: Decimal) -> bool:
        """A positive saving at least the rule's minimum."""
        return saving > 0 and saving >= self.params.min_monthly_savings_usd

    def size(
        self,
        profile: ResourceProfile,
        ctx: RuleContext,
        families: tuple[str, ...],
        *,
        memory_gib: Decimal,
        cores: Decimal | None = None,
        chips: Decimal | None = None,
        a10g_units: Decimal | None = None,
    ) -> SizedTarget | None:
        """The cheapest priced target among ``families`` (SageMaker types for an endpoint) that holds the model
        (``memory_gib`` x the memory headroom) and carries the busy ``cores``, ``chips`` or ``a10g_units`` (x the
        core headroom); None when nothing fits. The caller checks :meth:`worth_reporting` on its saving."""
        economics = ctx.assumptions
        monthly = profile.monthly_cost
        headroom = economics.core_headroom_factor.value
        need = Need(
            memory_gib=memory_gib * economics.memory_headroom_factor.value,
            cores=cores * headroom if cores is not None else None,
            chips=chips * headroom if chips is not None else None,
            a10g_units=a10g_units * headroom if a10g_units is not None else None,
        )
        targets = sizing.candidates(ctx.catalog, families, profile.kind == "sagemaker_endpoint")
        fit = sizing.cheapest_fit(targets, ctx.catalog, profile.region, need, economics)
        if fit is None or monthly is None:
            return None
        return SizedTarget(need=need, fit=fit, saving=monthly - fit.monthly_usd)
