"""Usage types from Cost Explorer and the price list, taken apart."""

from __future__ import annotations

import pytest

from chipwise.catalog import classify_usage_type, get_catalog, get_regions, get_usage_kinds, parse_usage_type

CASES = [
    # usage type, kind, instance type, region, purchase, service
    ("USE1-Host:ml.inf2.xlarge", "Host", "ml.inf2.xlarge", "us-east-1", "on_demand", "sagemaker"),
    ("Host:ml.g5.2xlarge", "Host", "ml.g5.2xlarge", "us-east-1", "on_demand", "sagemaker"),
    ("BoxUsage:inf2.xlarge", "BoxUsage", "inf2.xlarge", "us-east-1", "on_demand", "ec2"),
    ("USE1-BoxUsage:trn1.32xlarge", "BoxUsage", "trn1.32xlarge", "us-east-1", "on_demand", "ec2"),
    ("USW2-SpotUsage:p5.48xlarge", "SpotUsage", "p5.48xlarge", "us-west-2", "spot", "ec2"),
    ("SpotUsage:g5.xlarge", "SpotUsage", "g5.xlarge", "us-east-1", "spot", "ec2"),
    ("USE2-Host:ml.p5en.48xlarge", "Host", "ml.p5en.48xlarge", "us-east-2", "on_demand", "sagemaker"),
    ("EU-Train:ml.trn1.32xlarge", "Train", "ml.trn1.32xlarge", "eu-west-1", "on_demand", "sagemaker"),
    ("EU-BoxUsage:p4d.24xlarge", "BoxUsage", "p4d.24xlarge", "eu-west-1", "on_demand", "ec2"),
    ("EU-SpotUsage:g5.xlarge", "SpotUsage", "g5.xlarge", "eu-west-1", "spot", "ec2"),
    ("EU-Host:ml.inf2.xlarge", "Host", "ml.inf2.xlarge", "eu-west-1", "on_demand", "sagemaker"),
    ("UGW1-BoxUsage:p4d.24xlarge", "BoxUsage", "p4d.24xlarge", "us-gov-west-1", "on_demand", "ec2"),
    ("EUN1-AsyncInf:ml.inf2.8xlarge", "AsyncInf", "ml.inf2.8xlarge", "eu-north-1", "on_demand", "sagemaker"),
    ("APN1-Notebk:ml.t3.medium", "Notebk", "ml.t3.medium", "ap-northeast-1", "on_demand", "sagemaker"),
    ("APS3-BoxUsage:inf1.xlarge", "BoxUsage", "inf1.xlarge", "ap-south-1", "on_demand", "ec2"),
    ("APS2-BoxUsage:g6e.12xlarge", "BoxUsage", "g6e.12xlarge", "ap-southeast-2", "on_demand", "ec2"),
    ("EUC1-BoxUsage:p6-b200.48xlarge", "BoxUsage", "p6-b200.48xlarge", "eu-central-1", "on_demand", "ec2"),
    ("USE1-BoxUsage:g4dn.xlarge", "BoxUsage", "g4dn.xlarge", "us-east-1", "on_demand", "ec2"),  # not in catalog
]


@pytest.mark.parametrize(("usage_type", "kind", "instance_type", "region", "purchase", "service"), CASES)
def test_instance_usage_types(
    usage_type: str, kind: str, instance_type: str, region: str, purchase: str, service: str
) -> None:
    parsed = parse_usage_type(usage_type)
    assert parsed is not None
    assert (parsed.kind, parsed.instance_type, parsed.region, parsed.purchase, parsed.service) == (
        kind,
        instance_type,
        region,
        purchase,
        service,
    )
    assert parsed.usage_type == usage_type


@pytest.mark.parametrize(
    "usage_type",
    [
        "USE1-EBS:VolumeUsage.gp3",
        "USE1-DataTransfer-Out-Bytes",
        "USE1-NatGateway-Hours",
        "USE1-APIRequest",
        "BoxUsage",
        "USE1-HostUsage:mac1.metal.x",  # a dedicated host, not an instance hour we price
        "Host:inf2.xlarge",  # SageMaker usage always names an ml. type
        "BoxUsage:ml.m5.xlarge",
        "ZZZ9-BoxUsage:inf2.xlarge",  # a prefix regions.json does not know
        "",
        "usE1-BoxUsage:inf2.xlarge",
    ],
)
def test_other_usage_types_are_not_instance_hours(usage_type: str) -> None:
    assert parse_usage_type(usage_type) is None


def test_parsed_types_are_catalog_names() -> None:
    catalog = get_catalog()
    for usage_type, *_ in CASES[:-1]:
        parsed = parse_usage_type(usage_type)
        assert parsed is not None and catalog.get(parsed.instance_type) is not None, usage_type


# --- every kind Cost Explorer shows for EC2 compute and SageMaker: attributed, ignored with a reason, or unknown --

# Real usage-type strings (Price List / CUR / Cost Explorer shapes): usage type -> (kind, treatment, type, region).
REAL = [
    ("BoxUsage:p5.48xlarge", "BoxUsage", "instance_hours", "p5.48xlarge", "us-east-1"),
    ("USE2-BoxUsage:inf2.48xlarge", "BoxUsage", "instance_hours", "inf2.48xlarge", "us-east-2"),
    ("USW1-BoxUsage:inf1.xlarge", "BoxUsage", "instance_hours", "inf1.xlarge", "us-west-1"),
    ("EUW2-BoxUsage:g5.12xlarge", "BoxUsage", "instance_hours", "g5.12xlarge", "eu-west-2"),
    ("EUW3-SpotUsage:g4dn.xlarge", "SpotUsage", "instance_hours", "g4dn.xlarge", "eu-west-3"),
    ("APN2-BoxUsage:p4d.24xlarge", "BoxUsage", "instance_hours", "p4d.24xlarge", "ap-northeast-2"),
    ("APS1-SpotUsage:g5.2xlarge", "SpotUsage", "instance_hours", "g5.2xlarge", "ap-southeast-1"),
    ("CAN1-BoxUsage:g4dn.2xlarge", "BoxUsage", "instance_hours", "g4dn.2xlarge", "ca-central-1"),
    ("SAE1-BoxUsage:g4dn.xlarge", "BoxUsage", "instance_hours", "g4dn.xlarge", "sa-east-1"),
    ("UGE1-BoxUsage:p4d.24xlarge", "BoxUsage", "instance_hours", "p4d.24xlarge", "us-gov-east-1"),
    ("MXC1-BoxUsage:g6.xlarge", "BoxUsage", "instance_hours", "g6.xlarge", "mx-central-1"),
    ("APS9-BoxUsage:g6.xlarge", "BoxUsage", "instance_hours", "g6.xlarge", "ap-southeast-7"),
    ("USE1-DedicatedUsage:p4d.24xlarge", "DedicatedUsage", "instance_hours", "p4d.24xlarge", "us-east-1"),
    ("USE1-Reservation:p5.48xlarge", "Reservation", "instance_hours", "p5.48xlarge", "us-east-1"),
    ("EU-DedicatedRes:trn1.32xlarge", "DedicatedRes", "instance_hours", "trn1.32xlarge", "eu-west-1"),
    ("UnusedBox:p4de.24xlarge", "UnusedBox", "unused_reservation", "p4de.24xlarge", "us-east-1"),
    ("USW2-UnusedBox:trn1.32xlarge", "UnusedBox", "unused_reservation", "trn1.32xlarge", "us-west-2"),
    ("AFS1-UnusedBox:c5ad.2xlarge", "UnusedBox", "unused_reservation", "c5ad.2xlarge", "af-south-1"),
    ("USE1-UnusedDed:p5.48xlarge", "UnusedDed", "unused_reservation", "p5.48xlarge", "us-east-1"),
    ("USE1-Host:ml.g6e.2xlarge", "Host", "instance_hours", "ml.g6e.2xlarge", "us-east-1"),
    ("USE1-AsyncInf:ml.inf2.xlarge", "AsyncInf", "instance_hours", "ml.inf2.xlarge", "us-east-1"),
    ("EU-Train:ml.m5.large", "Train", "instance_hours", "ml.m5.large", "eu-west-1"),
    ("USE1-Processing:ml.m5.xlarge", "Processing", "instance_hours", "ml.m5.xlarge", "us-east-1"),
    ("EU-Processing:ml.g5.4xlarge", "Processing", "instance_hours", "ml.g5.4xlarge", "eu-west-1"),
    ("USE1-Transform:ml.g4dn.xlarge", "Transform", "instance_hours", "ml.g4dn.xlarge", "us-east-1"),
    ("USW2-Notebk:ml.g5.xlarge", "Notebk", "instance_hours", "ml.g5.xlarge", "us-west-2"),
    ("EU-Studio:JupyterLab-ml.t3.medium", "Studio", "instance_hours", "ml.t3.medium", "eu-west-1"),
    ("USE1-Studio:KernelGateway-ml.g4dn.xlarge", "Studio", "instance_hours", "ml.g4dn.xlarge", "us-east-1"),
    ("USE1-HostBoxUsage:p4d.24xlarge", "HostBoxUsage", "ignored", None, "us-east-1"),
    ("USE1-HostUsage:p4d", "HostUsage", "ignored", None, "us-east-1"),
    ("USE1-ReservedHostUsage:mac1", "ReservedHostUsage", "ignored", None, "us-east-1"),
    ("USE1-EBSOptimized:g4dn.xlarge", "EBSOptimized", "ignored", None, "us-east-1"),
    ("HeavyUsage:p3.2xlarge", "HeavyUsage", "ignored", None, "us-east-1"),
    ("USE1-ServerlessInf:Mem-6GB", "ServerlessInf", "ignored", None, "us-east-1"),
    ("USE1-Host:VolumeUsage.gp2", "storage", "ignored", None, "us-east-1"),
    ("EU-Train:VolumeUsage.gp2", "storage", "ignored", None, "eu-west-1"),
    ("USE1-Canvas:Session-Hrs", "unknown", "unknown", None, "us-east-1"),
    ("USE2-DataTransfer-Out-Bytes", "unknown", "unknown", None, None),
    ("EUW1-BoxUsage:p4d.24xlarge", "unknown", "unknown", None, None),  # EC2 never bills Ireland as EUW1
    ("USE1-Host:ml", "unknown", "unknown", None, "us-east-1"),
]


@pytest.mark.parametrize(("usage_type", "kind", "treatment", "instance_type", "region"), REAL)
def test_real_usage_types_are_classified(
    usage_type: str, kind: str, treatment: str, instance_type: str | None, region: str | None
) -> None:
    found = classify_usage_type(usage_type)
    assert (found.kind, found.treatment, found.instance_type, found.region) == (
        kind,
        treatment,
        instance_type,
        region,
    )
    # an ignored or unknown usage type always says why
    assert (found.reason is not None) == (treatment in ("ignored", "unknown"))


def test_every_kind_named_by_the_issue_has_a_treatment() -> None:
    kinds = get_usage_kinds()
    for name in (
        "BoxUsage",
        "SpotUsage",
        "DedicatedUsage",
        "HostUsage",
        "UnusedBox",
        "Reservation",
        "Host",
        "Train",
        "AsyncInf",
        "ServerlessInf",
        "Processing",
        "Transform",
        "Notebk",
        "Studio",
    ):
        info = kinds.get(name)
        assert info is not None, name
        assert info.treatment != "ignored" or info.reason, name
    # the account's own rate comes from instance hours only: never from unused reservations or fees
    assert "UnusedBox" not in kinds.names("instance_hours") and "HeavyUsage" not in kinds.names("instance_hours")
    assert {"Processing", "Transform"} <= set(kinds.names("instance_hours"))


def test_the_region_prefixes_are_the_billing_codes() -> None:
    regions = get_regions()
    expected = {
        "USE1": "us-east-1",
        "USE2": "us-east-2",
        "USW1": "us-west-1",
        "USW2": "us-west-2",
        "EU": "eu-west-1",
        "EUC1": "eu-central-1",
        "EUW2": "eu-west-2",
        "EUW3": "eu-west-3",
        "EUN1": "eu-north-1",
        "APN1": "ap-northeast-1",
        "APN2": "ap-northeast-2",
        "APS1": "ap-southeast-1",
        "APS2": "ap-southeast-2",
        "APS3": "ap-south-1",
        "CAN1": "ca-central-1",
        "SAE1": "sa-east-1",
        "UGW1": "us-gov-west-1",
        "UGE1": "us-gov-east-1",
    }
    for prefix, code in expected.items():
        region = regions.by_prefix(prefix)
        assert region is not None and region.code == code, prefix
    assert regions.by_prefix("EUW1") is None
    # every prefix says where it was read, except the few still to be confirmed
    unconfirmed = {r.code for r in regions.all() if r.prefix_source is None}
    assert unconfirmed == {"eu-central-2", "eu-south-2", "me-central-1", "il-central-1"}
