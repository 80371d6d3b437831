"""capacity_held_idle: unused reserved capacity at the on-demand rate, a Capacity Block's unused share as
committed, Batch minimum vCPUs held with no jobs."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

from rules_factories import ctx, flat, profile

from chipwise.analyse.metric_keys import BEDROCK_INVOCATIONS
from chipwise.analyse.profiles import Coverage
from chipwise.rules.builtin.capacity_held_idle import CapacityHeldIdle, CapacityHeldIdleParams

RULE = CapacityHeldIdle(CapacityHeldIdleParams())


def _reservation(total: int, unused: int, block: bool = False) -> object:
    base = profile(
        "cr", kind="ec2_capacity_reservation", instance_type="p5.48xlarge", count=total, state="active", rate="55.04"
    )
    return replace(
        base, unused_instances=unused, capacity_block=block, commitment_ends=datetime(2026, 12, 4, 11, 30, tzinfo=UTC)
    )


def test_unused_reservation_capacity_is_saved_by_lowering_the_count() -> None:
    # Given a reservation of 4 x p5.48xlarge ($55.04/h) with 3 unused
    draft = RULE.evaluate(_reservation(4, 3), ctx())  # type: ignore[arg-type]
    # Then 3 x 55.04 x 730 = $120,537.60 a month is saved by lowering it to 1
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == draft.monthly_cost_usd == Decimal("120537.60")
    assert draft.recommendation.target_count == 1 and draft.recommendation.excluded_from_totals is None


def test_a_fully_used_reservation_has_no_finding() -> None:
    assert RULE.evaluate(_reservation(4, 0), ctx()) is None  # type: ignore[arg-type]


def test_a_capacity_block_unused_share_is_committed_until_it_ends() -> None:
    draft = RULE.evaluate(_reservation(2, 2, block=True), ctx())  # type: ignore[arg-type]
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("80358.40")  # 2 x 55.04 x 730
    assert draft.recommendation.excluded_from_totals == "committed"
    assert "2026-12-04" in draft.summary


def _batch(min_vcpus: int, jobs: int) -> object:
    base = profile("ce", kind="batch_compute_environment", instance_type="trn1.32xlarge", state="ENABLED", rate="21.50")
    return replace(base, min_vcpus=min_vcpus, vcpu_per_instance=128, batch_jobs_in_window=jobs)


def test_batch_minimum_vcpus_without_jobs_are_the_held_instances() -> None:
    # Given minvCpus 200 on trn1.32xlarge (128 vCPUs, $21.50/h) and no job in 14 days: ceil(200/128) = 2 held
    draft = RULE.evaluate(_batch(200, 0), ctx())  # type: ignore[arg-type]
    # Then 2 x 21.50 x 730 = $31,390.00 a month, by setting minvCpus to 0
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("31390.00")
    assert draft.evidence.held_instances == 2 and draft.recommendation.target_count == 0


def test_batch_with_jobs_or_no_minimum_is_not_waste() -> None:
    assert RULE.evaluate(_batch(200, 3), ctx()) is None  # type: ignore[arg-type]
    assert RULE.evaluate(_batch(0, 0), ctx()) is None  # type: ignore[arg-type]


def _throughput(rate: str | None, rate_source: str, committed: bool) -> object:
    base = profile(
        "pt",
        kind="bedrock_provisioned_throughput",
        instance_type="",
        count=2,
        state="InService",
        rate=rate,
        rate_source=rate_source,
        coverage={BEDROCK_INVOCATIONS: Coverage(True, 336)},
        bedrock_invocations=flat(0),
    )
    if not committed:
        return base
    return replace(base, commitment_term="OneMonth", commitment_ends=datetime(2026, 12, 30, tzinfo=UTC))


def test_an_idle_provisioned_throughput_is_priced_from_what_the_account_pays() -> None:
    # Given 2 idle model units whose bill says $30.25 per model-unit hour (no public price), with no commitment
    draft = RULE.evaluate(_throughput("30.25", "bill", committed=False), ctx())  # type: ignore[arg-type]
    # Then the saving is its bill: $60.50 an hour x 730 = $44,165.00 a month, counted
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == draft.monthly_cost_usd == Decimal("44165.00")
    assert draft.recommendation.excluded_from_totals is None and "Its bill: $60.50 an hour" in draft.summary
    # ...under a one-month commitment the same figure is shown and kept out of the totals until the term ends
    held = RULE.evaluate(_throughput("30.25", "bill", committed=True), ctx())  # type: ignore[arg-type]
    assert held is not None and held.estimated_monthly_savings_usd == Decimal("44165.00")
    assert held.recommendation.excluded_from_totals == "committed"


def test_an_idle_provisioned_throughput_no_bill_names_asks_for_a_quote() -> None:
    draft = RULE.evaluate(_throughput(None, "cost_explorer", committed=False), ctx())  # type: ignore[arg-type]
    assert draft is not None and draft.estimated_monthly_savings_usd == Decimal(0)
    assert draft.recommendation.excluded_from_totals == "quote_needed" and "quote" in draft.summary
