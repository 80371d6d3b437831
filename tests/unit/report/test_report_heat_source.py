"""A heat-map is drawn from the metric its finding rests on (issue 35, item 7): a Neuron instance with neuron-monitor
reports and CPU metrics shows its NeuronCores, never CPU; CPU only for a finding judged on CPU. Every map's series
come from two statements at most (issue 37), whatever the number of maps."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from chipwise.report import build

START = datetime(2026, 11, 15, tzinfo=UTC)
END = START + timedelta(days=14)
HOURS = [START + timedelta(hours=h) for h in range(3)]
ACCOUNT = "123456789012"


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """The store holds EC2 CPUUtilization for every resource and neuron-monitor NeuronCore rollups for i-0trn1; a
    GPU instance (id 3) has its CloudWatch agent's GPU metric. Each read is recorded with what it asked for."""
    calls: list[tuple[str, Any]] = []

    def metric_averages(self: Any, resource_ids: Iterable[int], metrics: Iterable[tuple[str, str]], *_: Any) -> Any:
        ids, pairs = sorted(resource_ids), set(metrics)
        calls.append(("rollups", (ids, any(metric == "CPUUtilization" for _, metric in pairs))))
        found = {(rid, "AWS/EC2", "CPUUtilization"): [(h, 12.0) for h in HOURS] for rid in ids}
        if 3 in ids:
            found[(3, "CWAgent", "nvidia_smi_utilization_gpu")] = [(h, 40.0) for h in HOURS]
        return {key: rows for key, rows in found.items() if key[1:] in pairs}

    def neuroncore(self: Any, instances: Iterable[tuple[str, str]], *_: Any) -> Any:
        wanted = set(instances)
        calls.append(("neuron", sorted(wanted)))
        return {key: [(h, 88.0) for h in HOURS] for key in wanted if key == (ACCOUNT, "i-0trn1")}

    monkeypatch.setattr(build.UsageRepository, "metric_averages", metric_averages)
    monkeypatch.setattr(build.NeuronRepository, "neuroncore_utilisation", neuroncore)
    return calls


def _instance(rid: int, instance: str) -> Any:
    return SimpleNamespace(id=rid, arn=f"arn:aws:ec2:us-east-1:{ACCOUNT}:instance/{instance}", account_id=ACCOUNT)


TRN1, CPU_ONLY, GPU = _instance(1, "i-0trn1"), _instance(2, "i-0cpu"), _instance(3, "i-0gpu")


def test_a_neuron_finding_draws_neuroncore_utilisation_not_cpu(asked: list[tuple[str, Any]]) -> None:
    [found] = build._heat_series(None, [(TRN1, ["neuroncore_utilization", "neuron_executions"])], START, END)  # type: ignore[arg-type]
    assert found is not None
    values, label = found
    assert label == "NeuronCore utilisation (neuron-monitor reports)" and set(values.values()) == {88.0}


def test_cpu_is_drawn_only_for_a_finding_judged_on_cpu(asked: list[tuple[str, Any]]) -> None:
    wanted = [(CPU_ONLY, ["gpu_utilization"]), (CPU_ONLY, ["cpu_utilization"])]
    not_cpu, cpu = build._heat_series(None, wanted, START, END)  # type: ignore[arg-type]
    assert not_cpu is None
    assert cpu is not None and cpu[1].startswith("CPU utilisation (EC2")


def test_every_map_is_read_in_two_statements_at_most(asked: list[tuple[str, Any]]) -> None:
    wanted = [(TRN1, ["neuroncore_utilization"]), (CPU_ONLY, ["cpu_utilization"]), (GPU, ["gpu_utilization"])]
    found = build._heat_series(None, wanted, START, END)  # type: ignore[arg-type]
    labels = [f[1] if f else None for f in found]
    assert labels == [
        "NeuronCore utilisation (neuron-monitor reports)",
        "CPU utilisation (EC2; no accelerator metric stored)",
        "GPU utilisation (CloudWatch agent)",
    ]
    # one read of every resource's rollups (CPU's too: one finding rests on it); the neuron-monitor rollups only of
    # those without an accelerator metric
    assert asked == [("rollups", ([1, 2, 3], True)), ("neuron", [(ACCOUNT, "i-0cpu"), (ACCOUNT, "i-0trn1")])]


def test_no_neuron_read_when_every_map_has_an_accelerator_metric(asked: list[tuple[str, Any]]) -> None:
    [found] = build._heat_series(None, [(GPU, ["gpu_utilization"])], START, END)  # type: ignore[arg-type]
    assert found is not None and found[1] == "GPU utilisation (CloudWatch agent)"
    assert asked == [("rollups", ([3], False))]  # no finding rests on CPU: no CPU hour read
    assert build._heat_series(None, [], START, END) == [] and len(asked) == 1  # type: ignore[arg-type]
