"""Issue 13, item 5: the CloudWatch agent's GPU series are matched by what it publishes. By default the agent's
``nvidia_smi_*`` carry ``index``, ``name`` and ``host`` (``InstanceId`` only with ``append_dimensions``)."""

from __future__ import annotations

from typing import Any

from chipwise.collect.metrics import Discovered, agent_series_for, host_names, plan_targets
from chipwise.models.records import CollectedResource
from chipwise.models.resources import parse_details

DNS = "ip-10-0-1-5.ec2.internal"


def _box(instance_id: str = "i-1", dns: str | None = DNS, image: str = "ami-1", **kw: Any) -> CollectedResource:
    return CollectedResource(
        arn=f"arn:aws:ec2:us-east-1:123456789012:instance/{instance_id}",
        kind="ec2_instance",
        name=instance_id,
        instance_type=kw.get("instance_type", "g5.12xlarge"),
        instance_count=1,
        platform="nvidia",
        state="running",
        unknown_instance_type=False,
        details=parse_details("ec2_instance", {"instance_id": instance_id, "private_dns_name": dns, "image_id": image}),
    )


def _series(host: str, index: int, **extra: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"host": host, "index": str(index), "name": "NVIDIA A10G", **extra}.items()))


def test_host_names_are_the_dns_name_and_its_first_label() -> None:
    assert host_names(DNS) == (DNS, "ip-10-0-1-5")
    assert host_names("ip-10-0-1-5") == ("ip-10-0-1-5",)
    assert host_names(None) == ()


def test_default_agent_series_match_by_host_full_or_short() -> None:
    # Given the default agent on Amazon Linux (full host name) and on Ubuntu (short host name)
    full = [_series(DNS, 0), _series(DNS, 1)]
    discovered = Discovered(gpu_series_by_host={DNS: full})
    series, basis = agent_series_for(_box(), discovered)
    assert (len(series), basis) == (2, "host")
    short = Discovered(gpu_series_by_host={"ip-10-0-1-5": [_series("ip-10-0-1-5", 0)]})
    assert agent_series_for(_box(), short)[1] == "host"


def test_instance_id_wins_when_the_agent_appends_it() -> None:
    with_id = [(("InstanceId", "i-1"), ("index", "0"), ("name", "NVIDIA A10G"))]
    discovered = Discovered(gpu_series={"i-1": with_id}, gpu_series_by_host={DNS: [_series(DNS, 0)]})
    assert agent_series_for(_box(), discovered) == (tuple(with_id), "InstanceId")


def test_image_and_type_dimensions_must_agree_when_present() -> None:
    # Given host series that also carry ImageId / InstanceType of another machine
    other_image = [_series(DNS, 0, ImageId="ami-2")]
    other_type = [_series(DNS, 0, InstanceType="p4d.24xlarge")]
    same = [_series(DNS, 0, ImageId="ami-1", InstanceType="g5.12xlarge")]
    # Then they do not match; agreeing ones do
    assert agent_series_for(_box(), Discovered(gpu_series_by_host={DNS: other_image})) == ((), None)
    assert agent_series_for(_box(), Discovered(gpu_series_by_host={DNS: other_type})) == ((), None)
    assert agent_series_for(_box(), Discovered(gpu_series_by_host={DNS: same}))[1] == "host"


def test_a_host_name_two_instances_share_matches_neither() -> None:
    # Given two instances (two VPCs) with the same private DNS name, and one agent series for that host
    a, b = _box("i-1"), _box("i-2")
    discovered = Discovered(gpu_series_by_host={DNS: [_series(DNS, 0)]})
    # When planned, Then neither gets the series (attribution would be a guess): no telemetry, never idle
    targets = plan_targets([a, b], discovered)
    gpu = [t for t in targets if t.spec.metric == "nvidia_smi_utilization_gpu"]
    assert [len(t.series) for t in gpu] == [0, 0]


def test_plan_targets_read_the_host_matched_series() -> None:
    discovered = Discovered(gpu_series_by_host={DNS: [_series(DNS, 0), _series(DNS, 1)]})
    targets = plan_targets([_box()], discovered)
    gpu = next(t for t in targets if t.spec.metric == "nvidia_smi_utilization_gpu")
    assert len(gpu.series) == 2 and gpu.listed
