"""A small account of every platform, seeded into the emulator with known metrics and Cost Explorer pages, for the
scan's integration tests (the values below are what the tests expect back)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3

from chipwise_devkit.emulator import Emulator, MetricPoint

ACCOUNT = "123456789012"
REGION = "us-east-1"
NOW = datetime(2026, 11, 20, 12, 17, tzinfo=UTC)
LOOKBACK_DAYS = 2
WINDOW_END = datetime(2026, 11, 20, 12, tzinfo=UTC)
WINDOW_START = WINDOW_END - timedelta(days=LOOKBACK_DAYS)
HOURS = [WINDOW_START + timedelta(hours=h) for h in range(LOOKBACK_DAYS * 24)]
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker"
TGI_NEURONX = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.1.2-neuronx-py310"
EC2_SERVICE = "Amazon Elastic Compute Cloud - Compute"
SAGEMAKER_SERVICE = "Amazon SageMaker"

# (service, usage type, unblended per day, amortized per day, hours per day)
COST_ROWS: list[tuple[str, str, str, str, str]] = [
    (EC2_SERVICE, "BoxUsage:inf2.xlarge", "18.1968", "13.101696", "24"),
    (EC2_SERVICE, "USE1-BoxUsage:g5.12xlarge", "136.128", "136.128", "24"),
    (EC2_SERVICE, "SpotUsage:trn1.2xlarge", "9.675", "9.675", "24"),
    (EC2_SERVICE, "BoxUsage:m5.large", "2.304", "2.304", "24"),
    (SAGEMAKER_SERVICE, "USE1-Host:ml.inf2.xlarge", "47.5200001", "47.5200001", "48"),
    (SAGEMAKER_SERVICE, "USE1-Host:ml.g5.xlarge", "33.8592", "33.8592", "24"),
    (SAGEMAKER_SERVICE, "USE1-Train:ml.p4d.24xlarge", "1317.45852", "1317.45852", "48"),
    (SAGEMAKER_SERVICE, "USE1-Host:VolumeUsage.gp2", "0.52", "0.52", "3.7"),
    (SAGEMAKER_SERVICE, "USW2-Host:ml.g5.xlarge", "1.11", "1.11", "1"),  # another region: not this scan's
]
DAYS = ["2026-11-18", "2026-11-19"]


def total_cost() -> Decimal:
    """Unblended over the window in this region (the us-west-2 row excluded)."""
    return sum((Decimal(r[2]) for r in COST_ROWS if not r[1].startswith("USW2")), Decimal(0)) * len(DAYS)


@dataclass
class Seeded:
    instance_ids: dict[str, str] = field(default_factory=dict)
    arns: dict[str, str] = field(default_factory=dict)


def seed_account(emulator: Emulator, cost_days: list[str] | None = None) -> Seeded:
    """The account; Cost Explorer pages for ``cost_days`` (default: the two days before ``NOW``)."""
    seeded = Seeded()
    _instances(seeded)
    _endpoints(seeded)
    _training_jobs(seeded)
    _batch(seeded)
    emulator.seed_metrics(list(_points(seeded)))
    emulator.inject_cost_and_usage(cost_pages(cost_days or DAYS))
    return seeded


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION)  # type: ignore[call-overload]


def _run(ec2: Any, name: str, instance_type: str, tags: dict[str, str]) -> str:
    tag_list = [{"Key": k, "Value": v} for k, v in {"Name": name, **tags}.items()]
    reservation = ec2.run_instances(
        ImageId="ami-12345678",
        InstanceType=instance_type,
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[{"ResourceType": "instance", "Tags": tag_list}],
    )
    return str(reservation["Instances"][0]["InstanceId"])


def _instances(seeded: Seeded) -> None:
    ec2 = _client("ec2")
    specs = {
        "inf2-box": ("inf2.xlarge", {"chipwise:model-family": "bert", "chipwise:workload": "inference"}),
        "gpu-box": ("g5.12xlarge", {"chipwise:owner": "bob@example.com"}),
        "eks-trn1-node": ("trn1.2xlarge", {"eks:cluster-name": "prod"}),
        "future-box": ("inf9.xlarge", {}),
        "web": ("m5.large", {}),
    }
    for name, (instance_type, tags) in specs.items():
        iid = _run(ec2, name, instance_type, tags)
        seeded.instance_ids[name] = iid
        seeded.arns[name] = f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{iid}"


def _endpoint(
    sm: Any, name: str, variant: dict[str, Any], image: str, env: dict[str, str], tags: dict[str, str]
) -> str:
    sm.create_model(
        ModelName=f"{name}-model", PrimaryContainer={"Image": image, "Environment": env}, ExecutionRoleArn=ROLE
    )
    sm.create_endpoint_config(
        EndpointConfigName=f"{name}-config",
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": f"{name}-model", **variant}],
    )
    tag_list = [{"Key": k, "Value": v} for k, v in tags.items()]
    return str(sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config", Tags=tag_list)["EndpointArn"])


def _endpoints(seeded: Seeded) -> None:
    sm = _client("sagemaker")
    seeded.arns["chat-inf2"] = _endpoint(
        sm,
        "chat-inf2",
        {"InstanceType": "ml.inf2.xlarge", "InitialInstanceCount": 2},
        TGI_NEURONX,
        {"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct"},
        {"chipwise:owner": "ml@example.com"},
    )
    seeded.arns["vision-g5"] = _endpoint(
        sm, "vision-g5", {"InstanceType": "ml.g5.xlarge", "InitialInstanceCount": 1}, "123.dkr.ecr/vision:1", {}, {}
    )
    seeded.arns["sls"] = _endpoint(
        sm, "sls", {"ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5}}, "123.dkr.ecr/tiny:1", {}, {}
    )


def _training_jobs(seeded: Seeded) -> None:
    sm = _client("sagemaker")
    for name, instance_type, count in (("ft-p4d", "ml.p4d.24xlarge", 2), ("ft-trn1", "ml.trn1.32xlarge", 1)):
        seeded.arns[name] = sm.create_training_job(
            TrainingJobName=name,
            AlgorithmSpecification={
                "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.1",
                "TrainingInputMode": "File",
            },
            RoleArn=ROLE,
            OutputDataConfig={"S3OutputPath": f"s3://models/{name}/"},
            ResourceConfig={"InstanceType": instance_type, "InstanceCount": count, "VolumeSizeInGB": 100},
            StoppingCondition={"MaxRuntimeInSeconds": 86400},
            Environment={"HF_MODEL_ID": "meta-llama/Llama-3.1-8B"},
        )["TrainingJobArn"]


def _batch(seeded: Seeded) -> None:
    ec2, iam, batch = _client("ec2"), _client("iam"), _client("batch")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="batch", Description="batch", VpcId=vpc)["GroupId"]
    trust = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "batch.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    )
    role = iam.create_role(RoleName="batch-service", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    profile = iam.create_instance_profile(InstanceProfileName="ecs-instance")["InstanceProfile"]["Arn"]
    env = batch.create_compute_environment(
        computeEnvironmentName="neuron-ce",
        type="MANAGED",
        state="ENABLED",
        serviceRole=role,
        computeResources={
            "type": "EC2",
            "minvCpus": 0,
            "maxvCpus": 64,
            "instanceTypes": ["inf2.xlarge", "trn1.2xlarge"],
            "subnets": [subnet],
            "securityGroupIds": [group],
            "instanceRole": profile,
        },
    )["computeEnvironmentArn"]
    seeded.arns["neuron-ce"] = env
    batch.create_job_queue(
        jobQueueName="neuron-queue",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": env}],
    )


def _points(seeded: Seeded) -> list[MetricPoint]:
    chat = {"EndpointName": "chat-inf2", "VariantName": "AllTraffic"}
    ids = seeded.instance_ids
    points: list[MetricPoint] = []
    for i, hour in enumerate(HOURS):
        half = hour + timedelta(minutes=30)
        if i < 24:  # the endpoint served the first day only: no invocation datapoints afterwards
            points.append(MetricPoint("AWS/SageMaker", "Invocations", chat, hour, 100.0))
        points += [
            MetricPoint("/aws/sagemaker/Endpoints", "CPUUtilization", chat, hour, 10.0, "Percent"),
            MetricPoint("/aws/sagemaker/Endpoints", "CPUUtilization", chat, half, 30.0, "Percent"),
            MetricPoint("Chipwise/Neuron", "NeuronCoreUtilization", chat, hour, 55.0, "Percent"),
            MetricPoint("AWS/EC2", "CPUUtilization", {"InstanceId": ids["inf2-box"]}, hour, 3.0, "Percent"),
            MetricPoint("CWAgent", "nvidia_smi_utilization_gpu", _gpu(ids["gpu-box"], 0), hour, 10.0),
            MetricPoint("CWAgent", "nvidia_smi_utilization_gpu", _gpu(ids["gpu-box"], 1), hour, 80.0),
            MetricPoint(
                "ContainerInsights",
                "node_neuroncore_utilization",
                {"ClusterName": "prod", "InstanceId": ids["eks-trn1-node"], "NodeName": "ip-10-9-1-7.ec2.internal"},
                hour,
                64.0,
                "Percent",
            ),
            MetricPoint(
                "/aws/sagemaker/TrainingJobs", "GPUUtilization", {"Host": "ft-p4d/algo-1"}, hour, 400.0, "Percent"
            ),
            MetricPoint(
                "/aws/sagemaker/TrainingJobs", "GPUUtilization", {"Host": "ft-p4d/algo-2"}, hour, 200.0, "Percent"
            ),
        ]
    return points


def _gpu(instance_id: str, index: int) -> dict[str, str]:
    return {"InstanceId": instance_id, "index": str(index), "name": "NVIDIA A10G"}


def cost_pages(days: list[str]) -> list[dict[str, Any]]:
    """The GetCostAndUsage pages the scan's one query shape gets back (one day each)."""
    return cost_pages_for(days, COST_ROWS)


def cost_pages_for(days: list[str], rows: list[tuple[str, str, str, str, str]]) -> list[dict[str, Any]]:
    """GetCostAndUsage pages, one day each, every day with ``rows`` (service, usage type, unblended, amortized,
    hours)."""
    definitions = [{"Type": "DIMENSION", "Key": "SERVICE"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}]
    pages = []
    for n, day in enumerate(days):
        end = (datetime.fromisoformat(day) + timedelta(days=1)).date().isoformat()
        groups = [
            {
                "Keys": [service, usage_type],
                "Metrics": {
                    "UnblendedCost": {"Amount": unblended, "Unit": "USD"},
                    "AmortizedCost": {"Amount": amortized, "Unit": "USD"},
                    "UsageQuantity": {"Amount": hours, "Unit": "Hrs"},
                },
            }
            for service, usage_type, unblended, amortized, hours in rows
        ]
        page: dict[str, Any] = {
            "ResultsByTime": [
                {"TimePeriod": {"Start": day, "End": end}, "Total": {}, "Groups": groups, "Estimated": False}
            ],
            "GroupDefinitions": definitions,
            "DimensionValueAttributes": [],
        }
        if n < len(days) - 1:
            page["NextPageToken"] = f"page-{n + 2}"
        pages.append(page)
    return pages
