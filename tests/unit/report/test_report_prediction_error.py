"""Each rule's prediction error over time: estimates against measurements and realised savings, per rule and day."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from chipwise.report.build import prediction_errors
from chipwise.store.repositories.findings import Prediction

DAY1 = datetime(2026, 11, 26, 3, tzinfo=UTC)
DAY2 = datetime(2026, 11, 27, 3, tzinfo=UTC)


def test_errors_are_summed_per_rule_kind_and_day() -> None:
    rows = prediction_errors(
        [
            # the demo's two training benchmarks: $1,717.40 and $1,431.17 estimated, $1,262.80 and $1,052.32 measured
            Prediction("gpu_training_portable", DAY2, Decimal("1717.40"), Decimal("1262.80"), "measured"),
            Prediction("gpu_training_portable", DAY2, Decimal("1431.17"), Decimal("1052.32"), "measured"),
            Prediction("gpu_training_portable", DAY1, Decimal("1000"), Decimal("1100"), "measured"),
            Prediction("inferentia_idle", DAY2, Decimal("722.70"), Decimal("722.70"), "realised"),
        ]
    )
    assert [(r.rule_label, r.kind, r.day, r.findings) for r in rows] == [
        ("GPU training portable to Trainium", "measured", date(2026, 11, 26), 1),
        ("GPU training portable to Trainium", "measured", date(2026, 11, 27), 2),
        ("Idle Inferentia endpoint or instance", "realised", date(2026, 11, 27), 1),
    ]
    # (2,315.12 − 3,148.57) ÷ 3,148.57 = −26.47 %; (1,100 − 1,000) ÷ 1,000 = +10 %; realised as estimated: 0 %
    assert [r.error_percent for r in rows] == [Decimal("10.0"), Decimal("-26.5"), Decimal("0.0")]
    assert (rows[1].estimated_usd, rows[1].actual_usd) == (Decimal("3148.57"), Decimal("2315.12"))


def test_a_zero_estimate_has_no_error_ratio() -> None:
    (row,) = prediction_errors([Prediction("neuron_telemetry_missing", DAY1, Decimal(0), Decimal(5), "realised")])
    assert row.error_percent is None
