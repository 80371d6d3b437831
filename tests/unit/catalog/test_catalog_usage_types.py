"""Usage types from Cost Explorer and the price list, taken apart."""

from __future__ import annotations

import pytest

from chipwise.catalog import get_catalog, parse_usage_type

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
