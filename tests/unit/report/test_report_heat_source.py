"""A heat-map is drawn from the metric its finding rests on (issue 35, item 7): a Neuron instance with neuron-monitor
reports and CPU metrics shows its NeuronCores, never CPU; CPU only for a finding judged on CPU."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from chipwise.report import build

START = datetime(2026, 11, 15, tzinfo=UTC)
END = START + timedelta(days=14)
HOURS = [START + timedelta(hours=h) for h in range(3)]


@pytest.fixture
def stored(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A trn1 EC2 instance whose store holds EC2 CPUUtilization and neuron-monitor NeuronCore rollups."""

    def metric_averages(self: Any, resource_id: int, namespace: str, metric: str, *_: Any) -> list[Any]:
        return [(h, 12.0) for h in HOURS] if (namespace, metric) == ("AWS/EC2", "CPUUtilization") else []

    def neuroncore(self: Any, account_id: str, instance_id: str, *_: Any) -> list[Any]:
        return [(h, 88.0) for h in HOURS] if instance_id == "i-0trn1" else []

    monkeypatch.setattr(build.UsageRepository, "metric_averages", metric_averages)
    monkeypatch.setattr(build.NeuronRepository, "neuroncore_utilisation", neuroncore)
    return SimpleNamespace(id=1, arn="arn:aws:ec2:us-east-1:123456789012:instance/i-0trn1", account_id="123456789012")


def test_a_neuron_finding_draws_neuroncore_utilisation_not_cpu(stored: Any) -> None:
    found = build._hourly(None, stored, START, END, ["neuroncore_utilization", "neuron_executions"])  # type: ignore[arg-type]
    assert found is not None
    values, label = found
    assert label == "NeuronCore utilisation (neuron-monitor reports)" and set(values.values()) == {88.0}


def test_cpu_is_drawn_only_for_a_finding_judged_on_cpu(stored: Any) -> None:
    cpu_only = SimpleNamespace(id=2, arn="arn:aws:ec2:us-east-1:123456789012:instance/i-0cpu", account_id="1")
    assert build._hourly(None, cpu_only, START, END, ["gpu_utilization"]) is None  # type: ignore[arg-type]
    found = build._hourly(None, cpu_only, START, END, ["cpu_utilization"])  # type: ignore[arg-type]
    assert found is not None and found[1].startswith("CPU utilisation (EC2")
