"""accelerator_off_hours: a weekly pattern with long idle stretches -> a schedule, with the hours off, the saving
(hours off × 730/168 × rate), the cold start to expect and a confidence from how regular the pattern is.

The window is the 14 days to Friday 2026-11-20 12:00 UTC: every hour of the week occurs exactly twice."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal

from rules_factories import GIB, HOURS, WINDOW_END, WINDOW_START, ctx, flat, profile

from chipwise.analyse.series import SeriesStats, summarise
from chipwise.analyse.weekly import slot_occurrences, weekly_pattern
from chipwise.rules.builtin.accelerator_off_hours import AcceleratorOffHours, AcceleratorOffHoursParams
from chipwise.rules.engine import evaluate_profiles
from chipwise.rules.policy import Policy

RULE = AcceleratorOffHours(AcceleratorOffHoursParams())
LLAMA_8B = {"model_family": "llama", "hf_model_id": "meta-llama/Llama-3.1-8B-Instruct"}


def weekly_series(value: Callable[[datetime], float | None]) -> SeriesStats:
    """An hourly series over the 14-day window (None: no datapoint), kept by hour of the week."""
    hours = [WINDOW_START + timedelta(hours=i) for i in range(HOURS)]
    pairs = [(h, v) for h in hours if (v := value(h)) is not None]
    stats = summarise([h for h, _ in pairs], [v for _, v in pairs], weekly=True)
    assert stats is not None
    return stats


def office_hours(h: datetime) -> bool:
    return h.weekday() < 5 and 9 <= h.hour < 19


OFFICE_REQUESTS = weekly_series(lambda h: 1200.0 if office_hours(h) else None)


def test_every_hour_of_the_week_occurs_twice_in_the_window() -> None:
    assert set(slot_occurrences(WINDOW_START, WINDOW_END)) == {2}


def test_a_weekday_nine_to_seven_endpoint_is_scheduled_off_nights_and_weekends() -> None:
    # Given an ml.inf2.xlarge endpoint ($2.10/h) serving 1,200 requests an hour Mon-Fri 09:00-19:00 UTC, none else
    bot = profile(
        "office-bot",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        rate="2.10",
        invocations=OFFICE_REQUESTS,
    )
    # When the rule runs
    draft = RULE.evaluate(bot, ctx())
    # Then it is on 5 x 10 = 50 h a week and off 168 - 50 = 118 h: four 14-h nights (19:00 -> 09:00) and the
    # 62-h weekend (Fri 19:00 -> Mon 09:00); the hours off save 118 x 730 / 168 x 2.10 = $1,076.75 a month; 5
    # scale-ups a week, each 10 minutes early: 5 x 730 / 168 x 2.10 x 10 / 60 = $7.60 a month of cold starts; the
    # saving shown is net of them: 1,076.75 - 7.60 = $1,069.15
    assert draft is not None
    assert draft.recommendation.action == "schedule"
    assert draft.monthly_cost_usd == Decimal("1533.00")
    assert draft.estimated_monthly_savings_usd == Decimal("1069.15")
    ev = draft.evidence
    assert ev.off_hours_per_week == 118
    assert ev.on_hours_per_week == 50
    assert ev.scale_ups_per_week == 5
    assert ev.schedule == "Mon–Fri 09:00–19:00; Sat–Sun off (UTC)"
    assert ev.off_stretches == (
        "Mon 19:00 → Tue 09:00; Tue 19:00 → Wed 09:00; Wed 19:00 → Thu 09:00; Thu 19:00 → Fri 09:00; "
        "Fri 19:00 → Mon 09:00"
    )
    assert ev.pattern_regularity == 1.0
    assert ev.weeks_observed == 2.0
    assert ev.cold_start_minutes == 10.0
    assert ev.cold_start_monthly_usd == 7.6
    assert ev.gross_monthly_savings_usd == 1076.75
    assert "to save $1,069.15/month, net: the hours off save $1,076.75, less 5 scale-ups a week" in draft.summary
    assert ev.scale_to_zero == "inference_components_min_0"
    assert draft.confidence == "high"
    assert "scale it to zero" in draft.summary


def test_an_instance_is_read_from_its_busiest_neuroncore() -> None:
    # Given 2 x inf2.8xlarge ($1.97/h each) whose busiest NeuronCore runs 60 % in office hours and 0.5 % otherwise
    util = weekly_series(lambda h: 60.0 if office_hours(h) else 0.5)
    box = profile("batch-box", instance_type="inf2.8xlarge", count=2, rate="1.97", neuron_util=util)
    draft = RULE.evaluate(box, ctx())
    # Then the hours off save 118 x 730 / 168 x 1.97 x 2 = 339,391.6 / 168 = $2,020.19 a month, less 5 cold
    # starts a week of 10 minutes: 5 x 730 / 168 x 1.97 x 2 x 10 / 60 = 14,381 / 1,008 = $14.27: $2,005.92 net
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("2005.92")
    assert draft.evidence.cold_start_monthly_usd == 14.27
    assert draft.evidence.activity_signal == "neuroncore_utilization"
    assert draft.evidence.scale_to_zero == "instance_stop_start"
    assert "stop and start" in draft.summary


def test_a_catalog_rate_costs_a_level_of_confidence() -> None:
    bot = profile(
        "office-bot",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        rate="2.10",
        rate_source="catalog",
        invocations=OFFICE_REQUESTS,
    )
    draft = RULE.evaluate(bot, ctx())
    assert draft is not None
    assert draft.confidence == "medium"


def test_a_round_the_clock_endpoint_does_not_fire() -> None:
    # Given requests in every hour of the two weeks
    busy = weekly_series(lambda h: 300.0)
    bot = profile("always-on", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", invocations=busy)
    assert RULE.evaluate(bot, ctx()) is None


def test_load_at_random_hours_does_not_fire() -> None:
    # Given requests in about 30 % of the hours, drawn at random (seeded): many hours of the week happen to be
    # quiet in both weeks, but the busy ones are busy in only about half of their weeks
    draw = random.Random(18)
    busy = {h for h in range(HOURS) if draw.random() < 0.3}
    irregular = weekly_series(lambda h: 500.0 if int((h - WINDOW_START) / timedelta(hours=1)) in busy else None)
    bot = profile("irregular", kind="sagemaker_endpoint", instance_type="ml.inf2.xlarge", invocations=irregular)
    # When the rule runs: no finding
    assert RULE.evaluate(bot, ctx()) is None
    # Because the pattern is not regular: the on-hours were busy in well under 80 % of their weeks
    pattern = weekly_pattern(
        irregular,
        threshold=1e-9,
        counter=True,
        since=WINDOW_START,
        end=WINDOW_END,
        min_weeks=2,
        min_off_stretch_hours=4,
    )
    assert pattern is not None
    assert pattern.regularity < 0.8


def test_an_instance_without_accelerator_telemetry_is_never_scheduled() -> None:
    box = profile("dark-box", instance_type="inf2.xlarge")
    assert RULE.evaluate(box, ctx()) is None


def test_missing_gauge_hours_are_not_read_as_idle() -> None:
    # Given utilisation reported only in office hours (the agent stopped reporting otherwise): nothing is known of
    # the other hours, so the telemetry covers 100 of 336 hours and the rule does not judge
    util = weekly_series(lambda h: 60.0 if office_hours(h) else None)
    box = profile("gappy", instance_type="inf2.xlarge", neuron_util=util)
    assert RULE.evaluate(box, ctx()) is None


def test_the_schedule_beats_the_bedrock_move_and_idle_beats_the_schedule() -> None:
    # Given an ml.g5.12xlarge endpoint serving Llama-3.1-8B weekdays 09:00-12:00 with a 40,000-request burst on
    # Monday mornings: spiky enough for Bedrock, regular enough for a schedule
    def spiky_office(h: datetime) -> float | None:
        if h.weekday() < 5 and 9 <= h.hour < 12:
            return 40_000.0 if h.weekday() == 0 and h.hour == 9 else 100.0
        return None

    bot = profile(
        "office-llama",
        kind="sagemaker_endpoint",
        instance_type="ml.g5.12xlarge",
        rate="7.09",
        hints=LLAMA_8B,
        invocations=weekly_series(spiky_office),
    )
    rules = Policy.default().rules()
    found = {d.rule_id for d in evaluate_profiles([bot], rules, ctx())}
    assert "accelerator_off_hours" in found
    assert "spiky_inference_bedrock" not in found
    # And the spiky rule would have fired on its own
    spiky = next(rule for rule in rules if rule.meta.id == "spiky_inference_bedrock")
    assert spiky.evaluate(bot, ctx()) is not None
    # Given an inf2 instance whose office-hours load stopped 8 days ago: idle, not a schedule
    stopped = WINDOW_END - timedelta(days=8)
    util = weekly_series(lambda h: 60.0 if office_hours(h) and h < stopped else 0.2)
    box = profile("retired-box", instance_type="inf2.xlarge", neuron_util=util)
    found = {d.rule_id for d in evaluate_profiles([box], rules, ctx())}
    assert "inferentia_idle" in found
    assert "accelerator_off_hours" not in found


def test_a_resize_of_the_same_resource_supersedes_the_schedule_so_totals_never_add_both() -> None:
    # Given an inf2.48xlarge instance ($12.98/h) at 20 % of its busiest NeuronCore in office hours and 0.5 % otherwise,
    # holding a 20 GiB model: oversized (a smaller inf2 carries it) and off at nights and weekends
    util = weekly_series(lambda h: 20.0 if office_hours(h) else 0.5)
    box = profile(
        "oversized-office-box",
        instance_type="inf2.48xlarge",
        rate="12.98",
        neuron_util=util,
        neuron_memory_bytes=flat(20 * GIB),
    )
    rules = Policy.default().rules()
    # When each rule runs alone, both fire
    alone = {rule.meta.id for rule in rules if rule.evaluate(box, ctx()) is not None}
    assert {"inferentia_underutilized", "accelerator_off_hours"} <= alone
    # Then the engine keeps the resize only: the schedule's saving would be counted on a rate the resize changes
    found = {d.rule_id for d in evaluate_profiles([box], rules, ctx())}
    assert "inferentia_underutilized" in found
    assert "accelerator_off_hours" not in found
