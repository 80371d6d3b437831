"""The demo account's specification and its ground truth agree (no emulator needed)."""

from __future__ import annotations

from chipwise_devkit.demo.account import demo_resources, demo_subjects, ground_truth
from chipwise_devkit.demo.series import Flat, Spiky, Steady, Window, hours_ending

RULES = {
    "inferentia_idle",
    "inferentia_underutilized",
    "trainium_serving_inference",
    "gpu_training_portable",
    "gpu_inference_portable",
    "gpu_idle",
    "spiky_inference_bedrock",
    "neuron_telemetry_missing",
    "accelerator_off_hours",
    "cannot_judge",
    "capacity_held_idle",
}


def test_ground_truth_names_exactly_the_seeded_resources() -> None:
    # Given the demo estate and its ground truth
    resources = demo_resources()
    subjects = demo_subjects()  # the resources and the inference components on them
    truth = ground_truth()
    # Then both list the same resources, with the same expectations, and every rule is exercised
    assert len(resources) >= 30
    assert {r.name for r in resources} <= set(subjects)
    assert "shared-llm-g5/summarise-v1" in subjects
    assert set(subjects) == set(truth)
    assert all(list(expected) == truth[name] for name, expected in subjects.items())
    assert {rule for rules in truth.values() for rule in rules} == RULES


def test_the_custom_cuda_job_expects_no_porting() -> None:
    custom = [r for r in demo_resources() if r.tags.get("chipwise:custom-cuda") == "true"]
    assert custom and all(not r.expected for r in custom)


def test_series_shapes() -> None:
    from datetime import UTC, datetime
    from random import Random

    stamps = hours_ending(datetime(2026, 11, 22, tzinfo=UTC), 14 * 24)
    steady = Steady(50.0)(stamps, Random(1))
    assert 35 < sum(steady) / len(steady) < 60 and max(steady) <= 100
    weekend = [v for ts, v in zip(stamps, steady, strict=True) if ts.weekday() >= 5]
    weekday = [v for ts, v in zip(stamps, steady, strict=True) if ts.weekday() < 5]
    assert sum(weekend) / len(weekend) < sum(weekday) / len(weekday)
    spiky = Spiky(10.0, bursts_per_day=2)(stamps, Random(1))
    busy = [v for v in spiky if v > 0]
    assert len(busy) == 2 * 15 or len(busy) == 2 * 14  # two burst hours a day
    assert max(spiky) / (sum(spiky) / len(spiky)) > 5  # peak-to-mean
    assert all(v == 0.3 for v in Flat(0.3)(stamps, Random(1)))
    run = Window(Steady(80.0), hours=10, ended_hours_ago=5)(stamps, Random(1))
    assert sum(1 for v in run if v == v) == 10 and run[-1] != run[-1]  # NaN outside the run
