"""The optional agents' series: a read within ListMetrics' two weeks queries only the series it lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from chipwise.collect import metrics
from chipwise.collect.metrics import EC2_CPU, NEURON_CORE, SERVING_TOKENS, AgentListing, MetricTarget, only_listed

END = datetime(2026, 11, 21, 12, tzinfo=UTC)


class _Paginator:
    def __init__(self, pages: dict[str, list[dict[str, Any]]], calls: list[str]) -> None:
        self.pages, self.calls = pages, calls

    def paginate(self, Namespace: str) -> list[dict[str, Any]]:
        self.calls.append(Namespace)
        return [{"Metrics": self.pages.get(Namespace, [])}]


class _CloudWatch:
    def __init__(self, pages: dict[str, list[dict[str, Any]]], calls: list[str]) -> None:
        self.paginator = _Paginator(pages, calls)

    def get_paginator(self, name: str) -> _Paginator:
        assert name == "list_metrics"
        return self.paginator


class _Aws:
    def __init__(self, pages: dict[str, list[dict[str, Any]]]) -> None:
        self.calls: list[str] = []
        self.cloudwatch = _CloudWatch(pages, self.calls)

    def client(self, service: str) -> _CloudWatch:
        assert service == "cloudwatch"
        return self.cloudwatch


def _listing(pages: dict[str, list[dict[str, Any]]]) -> tuple[AgentListing, _Aws]:
    aws = _Aws(pages)
    return AgentListing(aws), aws  # type: ignore[arg-type]


def _target(spec: metrics.MetricSpec, *series: tuple[tuple[str, str], ...]) -> MetricTarget:
    return MetricTarget("arn:aws:ec2:us-east-1:123456789012:instance/i-1", spec, series)


ONE = (("InstanceId", "i-1"),)
TWO = (("InstanceId", "i-2"),)
VARIANT = (("EndpointName", "chat"), ("VariantName", "AllTraffic"))


def test_a_day_s_read_keeps_the_listed_agent_series_and_marks_them_listed() -> None:
    listing, aws = _listing(
        {
            "Chipwise/Neuron": [
                {"MetricName": "NeuronCoreUtilization", "Dimensions": [{"Name": "InstanceId", "Value": "i-1"}]},
                {"MetricName": "NeuronCoreUtilization", "Dimensions": [{"Name": "InstanceId", "Value": "i-1"}]},
            ],
            # the dimension order ListMetrics answers in is not the order a query names them in
            "Chipwise/Serving": [
                {
                    "MetricName": "GeneratedTokens",
                    "Dimensions": [
                        {"Name": "VariantName", "Value": "AllTraffic"},
                        {"Name": "EndpointName", "Value": "chat"},
                    ],
                }
            ],
        }
    )
    targets = [_target(EC2_CPU, ONE), _target(NEURON_CORE, ONE, TWO), _target(SERVING_TOKENS, VARIANT)]

    kept = only_listed(targets, listing, END - timedelta(hours=27), END)

    assert kept[0] == targets[0]  # AWS/EC2 is never cut
    assert (kept[1].series, kept[1].listed) == ((ONE,), True)
    assert (kept[2].series, kept[2].listed) == ((VARIANT,), True)
    assert aws.calls == ["Chipwise/Neuron", "Chipwise/Serving"]  # one listing per namespace, on first use


def test_an_unlisted_agent_metric_reads_nothing_and_is_not_marked_listed() -> None:
    listing, _ = _listing({})

    [kept] = only_listed([_target(NEURON_CORE, ONE)], listing, END - timedelta(hours=27), END)

    assert (kept.series, kept.listed) == ((), False)


def test_a_read_older_than_the_listing_horizon_keeps_every_series_and_never_lists() -> None:
    listing, aws = _listing({})
    targets = [_target(NEURON_CORE, ONE)]

    assert only_listed(targets, listing, END - timedelta(days=14), END) == targets
    assert only_listed(targets, listing, END - metrics.LISTING_HORIZON - timedelta(hours=1), END) == targets
    assert aws.calls == []


def test_a_scan_that_cannot_list_reads_every_agent_series(monkeypatch: Any) -> None:
    from chipwise.pipeline import scan_metrics

    class _Refused:
        def listed(self, namespace: str) -> frozenset[Any]:
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "ListMetrics")

    targets = [_target(NEURON_CORE, ONE)]
    run = type("Run", (), {"metric_end": END})()

    assert scan_metrics._only_listed(targets, _Refused(), END - timedelta(hours=27), run) == targets  # type: ignore[arg-type]
