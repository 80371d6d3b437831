"""Seed the AWS emulator with the demo account: inventory, CloudWatch metrics, neuron-monitor reports in S3
and Cost Explorer results, all derived from :mod:`chipwise_devkit.demo.account`."""

from __future__ import annotations

import gzip
import json
import random
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from chipwise.aws import AwsContext, aws_context
from chipwise.catalog import Catalog, InstanceType, get_catalog
from chipwise.settings import get_settings
from chipwise_devkit.demo.account import (
    DEMO_ACCOUNT_ID,
    EC2_SERVICE,
    GIB,
    HISTORY_HOURS,
    NEURON_REPORT_PERIOD_S,
    SAGEMAKER_SERVICE,
    DemoComponent,
    DemoResource,
    amortized_share,
    demo_resources,
)
from chipwise_devkit.demo.series import Flat, Steady, Window, hours_ending

if TYPE_CHECKING:
    from mypy_boto3_ec2.literals import InstanceTypeType
    from mypy_boto3_ec2.type_defs import TagSpecificationTypeDef
    from mypy_boto3_sagemaker.literals import ProductionVariantInstanceTypeType, TrainingInstanceTypeType
    from mypy_boto3_sagemaker.type_defs import (
        ContainerDefinitionTypeDef,
        ProductionVariantTypeDef,
        ResourceConfigTypeDef,
        TagTypeDef,
    )

COST_DAYS = 14
AMI = "ami-0c55b159cbfafe1f0"
ROLE_ARN = f"arn:aws:iam::{DEMO_ACCOUNT_ID}:role/chipwise-demo-sagemaker"
VARIANT = "AllTraffic"


@dataclass
class SeededAccount:
    """What was seeded: ids to find resources by name, and totals to check the pipeline against."""

    account_id: str
    region: str
    now: datetime
    arns: dict[str, str] = field(default_factory=dict)
    instance_ids: dict[str, str] = field(default_factory=dict)
    launched: dict[str, list[str]] = field(default_factory=dict)  # a Batch compute environment -> its instances
    metric_points: int = 0
    neuron_reports: int = 0
    neuron_objects: int = 0
    cost_by_usage_type: dict[str, Decimal] = field(default_factory=dict)

    @property
    def total_cost(self) -> Decimal:
        return sum(self.cost_by_usage_type.values(), Decimal(0))


@dataclass(frozen=True)
class Point:
    """A CloudWatch datapoint in the shape ``Emulator.seed_metrics`` takes."""

    namespace: str
    metric_name: str
    dimensions: dict[str, str]
    timestamp: datetime
    value: float
    unit: str = "None"


def _rng(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


def seed_demo_account(emulator: Any, now: datetime | None = None, region: str = "us-east-1") -> SeededAccount:
    """Create the demo estate in the emulator (whose environment must already be applied). Its clock (unless
    given) is the start of the UTC day: the bill's days, the training jobs' hours and every figure built on them are
    the same whatever hour the demo runs."""
    now = (now or datetime.now(UTC).replace(hour=0)).replace(minute=0, second=0, microsecond=0)
    aws = aws_context(region)
    seeded = SeededAccount(account_id=DEMO_ACCOUNT_ID, region=region, now=now)
    network = _network(aws)
    points: list[Point] = []
    for res in demo_resources():
        points.extend(_create(aws, res, seeded, network))
    from chipwise_devkit.emulator import MetricPoint

    seeded.metric_points = emulator.seed_metrics(
        (MetricPoint(p.namespace, p.metric_name, p.dimensions, p.timestamp, p.value, p.unit) for p in points),
        account_id=DEMO_ACCOUNT_ID,
        region=region,
    )
    _upload_neuron_reports(aws, seeded)
    pages = cost_and_usage_pages(seeded)
    emulator.inject_cost_and_usage(pages, account_id=DEMO_ACCOUNT_ID)
    return seeded


# --- inventory ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Network:
    subnet: str
    security_group: str
    service_role: str
    instance_profile: str


def _network(aws: AwsContext) -> Network:
    ec2 = aws.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.20.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="chipwise-demo-batch", Description="demo", VpcId=vpc)["GroupId"]
    iam = aws.client("iam")
    trust = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": "sts:AssumeRole",
                    "Principal": {"Service": ["batch.amazonaws.com", "ec2.amazonaws.com"]},
                }
            ],
        }
    )
    service_role = iam.create_role(RoleName="AWSBatchServiceRole", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    iam.create_role(RoleName="ecsInstanceRole", AssumeRolePolicyDocument=trust)
    profile = iam.create_instance_profile(InstanceProfileName="ecsInstanceRole")["InstanceProfile"]["Arn"]
    iam.add_role_to_instance_profile(InstanceProfileName="ecsInstanceRole", RoleName="ecsInstanceRole")
    return Network(subnet=subnet, security_group=group, service_role=service_role, instance_profile=profile)


def _create(aws: AwsContext, res: DemoResource, seeded: SeededAccount, network: Network) -> list[Point]:
    points = _create_one(aws, res, seeded, network)
    if res.retired_hours_ago:  # no datapoint after it was deleted
        deleted = seeded.now - timedelta(hours=res.retired_hours_ago)
        points = [p for p in points if p.timestamp < deleted]
    return points


def _create_one(aws: AwsContext, res: DemoResource, seeded: SeededAccount, network: Network) -> list[Point]:
    stamps = hours_ending(seeded.now, HISTORY_HOURS)
    if res.kind == "ec2_instance":
        instance_id = _run_instance(aws, res)
        seeded.instance_ids[res.name] = instance_id
        seeded.arns[res.name] = f"arn:aws:ec2:{aws.region}:{DEMO_ACCOUNT_ID}:instance/{instance_id}"
        return _instance_points(res, instance_id, stamps)
    if res.kind == "sagemaker_endpoint":
        seeded.arns[res.name] = _create_endpoint(aws, res)
        return _endpoint_points(res, stamps)
    if res.kind == "sagemaker_training_job":
        seeded.arns[res.name] = _create_training_job(aws, res)
        return _training_points(res, stamps)
    if res.kind == "sagemaker_notebook_instance":
        seeded.arns[res.name] = _create_notebook(aws, res)
        return []
    if res.kind == "sagemaker_hyperpod_cluster":
        seeded.arns[res.name] = _create_hyperpod_cluster(aws, res)
        return []
    if res.kind == "ec2_capacity_reservation":
        seeded.arns[res.name] = _create_capacity_reservation(aws, res, seeded.now)
        return []
    if res.kind == "sagemaker_studio_app":
        seeded.arns[res.name] = _create_studio_app(aws, res, seeded.now)
        return []
    if res.kind == "bedrock_provisioned_throughput":
        seeded.arns[res.name] = str(
            aws.client("bedrock").create_provisioned_model_throughput(
                modelUnits=res.count,
                provisionedModelName=res.name,
                modelId=res.instance_type,
                commitmentDuration="OneMonth",
            )["provisionedModelArn"]
        )
        return []
    known = _instance_ids(aws)
    seeded.arns[res.name] = _create_compute_environment(aws, res, network)
    seeded.launched[res.name] = sorted(_instance_ids(aws) - known)  # what its minvCpus keeps running
    register_container_instances(aws, seeded.arns[res.name], seeded.launched[res.name])
    return []


def register_container_instances(aws: AwsContext, environment_arn: str, instance_ids: list[str]) -> None:
    """What the ECS agent on each instance a managed compute environment launches does when it boots: register it
    as a container instance of the environment's ECS cluster (the emulator launches the instances, not the agent)."""
    batch, ecs = aws.client("batch"), aws.client("ecs")
    env = batch.describe_compute_environments(computeEnvironments=[environment_arn])["computeEnvironments"][0]
    for instance_id in instance_ids:
        document = {"instanceId": instance_id, "region": aws.region, "accountId": DEMO_ACCOUNT_ID}
        ecs.register_container_instance(cluster=env["ecsClusterArn"], instanceIdentityDocument=json.dumps(document))


def _instance_ids(aws: AwsContext) -> set[str]:
    pages = aws.client("ec2").get_paginator("describe_instances").paginate()
    return {i["InstanceId"] for page in pages for r in page["Reservations"] for i in r["Instances"]}


def _create_studio_app(aws: AwsContext, res: DemoResource, now: datetime) -> str:
    from chipwise_devkit.emulator.studio_apps import set_last_user_activity

    domain, space, app = res.name.split("/")
    arn = str(
        aws.client("sagemaker").create_app(
            DomainId=domain,
            SpaceName=space,
            AppType="JupyterLab",
            AppName=app,
            ResourceSpec={"InstanceType": cast("Any", res.instance_type)},
        )["AppArn"]
    )
    set_last_user_activity(DEMO_ACCOUNT_ID, aws.region, arn, now - timedelta(days=res.idle_days))
    return arn


def _create_notebook(aws: AwsContext, res: DemoResource) -> str:
    return aws.client("sagemaker").create_notebook_instance(
        NotebookInstanceName=res.name,
        InstanceType=cast("Any", res.instance_type),
        RoleArn=f"arn:aws:iam::{DEMO_ACCOUNT_ID}:role/sagemaker",
    )["NotebookInstanceArn"]


def _create_hyperpod_cluster(aws: AwsContext, res: DemoResource) -> str:
    lifecycle = {"SourceS3Uri": "s3://sagemaker-demo-hyperpod/lifecycle/", "OnCreate": "on_create.sh"}
    role = f"arn:aws:iam::{DEMO_ACCOUNT_ID}:role/sagemaker"
    groups: list[Any] = [
        {
            "InstanceGroupName": "controller",
            "InstanceType": "ml.m5.xlarge",
            "InstanceCount": 1,
            "LifeCycleConfig": lifecycle,
            "ExecutionRole": role,
            "ThreadsPerCore": 1,
        },
        {
            "InstanceGroupName": "workers",
            "InstanceType": res.instance_type,
            "InstanceCount": res.count,
            "LifeCycleConfig": lifecycle,
            "ExecutionRole": role,
            "ThreadsPerCore": 1,
        },
    ]
    return aws.client("sagemaker").create_cluster(ClusterName=res.name, InstanceGroups=groups)["ClusterArn"]


def _create_capacity_reservation(aws: AwsContext, res: DemoResource, now: datetime) -> str:
    ec2: Any = aws.client("ec2")
    tags = [{"ResourceType": "capacity-reservation", "Tags": [{"Key": "Name", "Value": res.name}]}]
    if res.capacity_block:
        offering = ec2.describe_capacity_block_offerings(
            InstanceType=res.instance_type,
            InstanceCount=res.count,
            CapacityDurationHours=14 * 24,
            StartDateRange=now - timedelta(days=3),
        )["CapacityBlockOfferings"][0]
        bought = ec2.purchase_capacity_block(
            CapacityBlockOfferingId=offering["CapacityBlockOfferingId"],
            InstancePlatform="Linux/UNIX",
            TagSpecifications=tags,
        )
        return str(bought["CapacityReservation"]["CapacityReservationArn"])
    created = ec2.create_capacity_reservation(
        InstanceType=res.instance_type,
        InstancePlatform="Linux/UNIX",
        AvailabilityZone=f"{aws.region}a",
        InstanceCount=res.count,
        TagSpecifications=tags,
    )
    return str(created["CapacityReservation"]["CapacityReservationArn"])


def _tags(tags: dict[str, str]) -> list[TagTypeDef]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def _run_instance(aws: AwsContext, res: DemoResource) -> str:
    tags = {"Name": res.name, **res.tags}
    if res.eks_cluster:
        tags |= {"eks:cluster-name": res.eks_cluster, f"kubernetes.io/cluster/{res.eks_cluster}": "owned"}
    spec: TagSpecificationTypeDef = {
        "ResourceType": "instance",
        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
    }
    reservation = aws.client("ec2").run_instances(
        ImageId=AMI,
        InstanceType=cast("InstanceTypeType", res.instance_type),
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[spec],
    )
    return reservation["Instances"][0]["InstanceId"]


def _create_endpoint(aws: AwsContext, res: DemoResource) -> str:
    """A single-model endpoint, or (``res.components``) an endpoint for inference components: its variant names no
    model and scales its instances to what the components need; each component places a model on it."""
    sm = aws.client("sagemaker")
    variant: ProductionVariantTypeDef = {
        "VariantName": VARIANT,
        "InstanceType": cast("ProductionVariantInstanceTypeType", res.instance_type),
        "InitialInstanceCount": res.count,
        "InitialVariantWeight": 1.0,
    }
    if res.components:
        variant["ManagedInstanceScaling"] = {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": res.count}
        variant["RoutingConfig"] = {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
    else:
        container: ContainerDefinitionTypeDef = {"Image": res.image or "", "Environment": res.environment}
        sm.create_model(ModelName=f"{res.name}-model", PrimaryContainer=container, ExecutionRoleArn=ROLE_ARN)
        variant["ModelName"] = f"{res.name}-model"
    sm.create_endpoint_config(
        EndpointConfigName=f"{res.name}-config", ProductionVariants=[variant], ExecutionRoleArn=ROLE_ARN
    )
    created = sm.create_endpoint(EndpointName=res.name, EndpointConfigName=f"{res.name}-config", Tags=_tags(res.tags))
    for component in res.components:
        sm.create_inference_component(
            InferenceComponentName=component.name,
            EndpointName=res.name,
            VariantName=VARIANT,
            Specification={
                "Container": {"Image": component.image, "Environment": component.environment},
                "ComputeResourceRequirements": {
                    "NumberOfAcceleratorDevicesRequired": component.gpus_per_copy,
                    "MinMemoryRequiredInMb": 16384,
                },
            },
            RuntimeConfig={"CopyCount": component.copies},
            Tags=_tags(res.tags),
        )
    return created["EndpointArn"]


def _create_training_job(aws: AwsContext, res: DemoResource) -> str:
    config: ResourceConfigTypeDef = {
        "InstanceType": cast("TrainingInstanceTypeType", res.instance_type),
        "InstanceCount": res.count,
        "VolumeSizeInGB": 500,
    }
    return aws.client("sagemaker").create_training_job(
        TrainingJobName=res.name,
        AlgorithmSpecification={"TrainingImage": res.image or "", "TrainingInputMode": "File"},
        RoleArn=ROLE_ARN,
        OutputDataConfig={"S3OutputPath": f"s3://chipwise-demo-models/{res.name}/"},
        ResourceConfig=config,
        StoppingCondition={"MaxRuntimeInSeconds": 5 * 24 * 3600},
        Environment=res.environment,
        HyperParameters={"epochs": "3"},
        Tags=_tags(res.tags),
    )["TrainingJobArn"]


def _create_compute_environment(aws: AwsContext, res: DemoResource, network: Network) -> str:
    return aws.client("batch").create_compute_environment(
        computeEnvironmentName=res.name,
        type="MANAGED",
        state="ENABLED",
        computeResources={
            "type": "EC2",
            "minvCpus": res.min_vcpus,
            "maxvCpus": 256,
            "instanceTypes": [res.instance_type],
            "subnets": [network.subnet],
            "securityGroupIds": [network.security_group],
            "instanceRole": network.instance_profile,
        },
        serviceRole=network.service_role,
    )["computeEnvironmentArn"]


# --- CloudWatch ----------------------------------------------------------------------------------------------


def _series_points(
    namespace: str,
    metric: str,
    dims: dict[str, str],
    stamps: list[datetime],
    values: list[float],
    unit: str = "Percent",
    skip_zero: bool = False,
) -> list[Point]:
    return [
        Point(namespace, metric, dims, ts, round(v, 4), unit)
        for ts, v in zip(stamps, values, strict=True)
        if v == v and not (skip_zero and v < 0.5)  # NaN: no datapoint that hour
    ]


def _endpoint_points(res: DemoResource, stamps: list[datetime]) -> list[Point]:
    rng = _rng(res.name)
    dims = {"EndpointName": res.name, "VariantName": VARIANT}
    pts: list[Point] = []
    if res.traffic is not None:
        per_hour = [rps * 3600 for rps in res.traffic.requests_per_second(stamps, rng)]
        latency = [res.traffic.latency_ms * 1000 * rng.uniform(0.9, 1.2) if n else 0.0 for n in per_hour]
        pts += _series_points("AWS/SageMaker", "Invocations", dims, stamps, per_hour, "None", skip_zero=True)
        per_instance = [n / res.count for n in per_hour]
        pts += _series_points(
            "AWS/SageMaker", "InvocationsPerInstance", dims, stamps, per_instance, "None", skip_zero=True
        )
        pts += _series_points("AWS/SageMaker", "ModelLatency", dims, stamps, latency, "Microseconds", skip_zero=True)
    pts += _series_points("/aws/sagemaker/Endpoints", "CPUUtilization", dims, stamps, res.cpu(stamps, rng))
    pts += _series_points("/aws/sagemaker/Endpoints", "MemoryUtilization", dims, stamps, Flat(42.0, 3.0)(stamps, rng))
    if res.gpu is not None:
        gpu = res.gpu(stamps, rng)
        pts += _series_points("/aws/sagemaker/Endpoints", "GPUUtilization", dims, stamps, gpu)
        gpu_memory = Flat(55.0 * _accelerators(res), 2.0)(stamps, rng)
        pts += _series_points("/aws/sagemaker/Endpoints", "GPUMemoryUtilization", dims, stamps, gpu_memory)
    if res.neuron is not None:
        pts += _neuron_cloudwatch_points(res, dims, stamps, rng)
    for component in res.components:
        pts += _component_points(component, stamps, _rng(f"{res.name}/{component.name}"))
    return pts


def _component_points(component: DemoComponent, stamps: list[datetime], rng: random.Random) -> list[Point]:
    """What SageMaker publishes for an inference component, by InferenceComponentName: its invocations and latency
    in AWS/SageMaker, its utilisation (% of what it reserved) in /aws/sagemaker/InferenceComponents."""
    dims = {"InferenceComponentName": component.name}
    per_hour = [rps * 3600 for rps in component.traffic.requests_per_second(stamps, rng)]
    latency = [component.traffic.latency_ms * 1000 * rng.uniform(0.9, 1.2) if n else 0.0 for n in per_hour]
    ns = "/aws/sagemaker/InferenceComponents"
    gpu = component.gpu(stamps, rng)
    return [
        *_series_points("AWS/SageMaker", "Invocations", dims, stamps, per_hour, "None", skip_zero=True),
        *_series_points("AWS/SageMaker", "ModelLatency", dims, stamps, latency, "Microseconds", skip_zero=True),
        *_series_points(ns, "GPUUtilizationNormalized", dims, stamps, gpu),
        *_series_points(ns, "GPUMemoryUtilizationNormalized", dims, stamps, Flat(60.0, 2.0)(stamps, rng)),
        *_series_points(ns, "CPUUtilizationNormalized", dims, stamps, [min(100.0, 2.0 + g * 0.3) for g in gpu]),
    ]


def _neuron_cloudwatch_points(
    res: DemoResource, dims: dict[str, str], stamps: list[datetime], rng: random.Random
) -> list[Point]:
    """What ``chipwise neuron-agent --to cloudwatch`` publishes (namespace ``Chipwise/Neuron``)."""
    assert res.neuron is not None
    util = res.neuron.utilization(stamps, rng)
    executions = [e * 3600 for e in res.neuron.executions_per_second(stamps, rng)]
    memory = [res.neuron.device_memory_gib * GIB] * len(stamps)
    ns = "Chipwise/Neuron"
    return [
        *_series_points(ns, "NeuronCoreUtilization", dims, stamps, util),
        *_series_points(ns, "NeuronCoreUtilizationAvg", dims, stamps, [u * 0.8 for u in util]),
        *_series_points(ns, "NeuronDeviceMemoryUsed", dims, stamps, memory, "Bytes"),
        *_series_points(ns, "ExecutionsCompleted", dims, stamps, executions, "Count"),
    ]


def _accelerators(res: DemoResource) -> int:
    facts = get_catalog().get(res.instance_type)
    return max(1, facts.accelerator_count if facts else 1)


def gpu_dimensions(instance_id: str, index: int, gpu_name: str) -> dict[str, str]:
    """CloudWatch agent nvidia_gpu dimensions with ``append_dimensions: {InstanceId}``."""
    return {"InstanceId": instance_id, "index": str(index), "name": gpu_name}


def _instance_points(res: DemoResource, instance_id: str, stamps: list[datetime]) -> list[Point]:
    rng = _rng(res.name)
    pts = _series_points("AWS/EC2", "CPUUtilization", {"InstanceId": instance_id}, stamps, res.cpu(stamps, rng))
    if res.gpu is not None and res.container_insights and res.eks_cluster:
        return pts + _container_insights_gpu_points(res, instance_id, stamps, rng)
    if res.gpu is not None:
        facts = get_catalog().get(res.instance_type)
        gpu_name = f"NVIDIA {facts.accelerator}" if facts and facts.accelerator else "NVIDIA GPU"
        busiest = res.gpu(stamps, rng)
        for index in range(_accelerators(res)):
            share = 1.0 if index == 0 else rng.uniform(0.6, 0.95)
            dims = gpu_dimensions(instance_id, index, gpu_name)
            pts += _series_points("CWAgent", "nvidia_smi_utilization_gpu", dims, stamps, [v * share for v in busiest])
            memory = [min(100.0, 30.0 + v * 0.5) for v in busiest]
            pts += _series_points("CWAgent", "nvidia_smi_utilization_memory", dims, stamps, memory)
    if res.neuron is not None and res.eks_cluster:
        dims = {"ClusterName": res.eks_cluster, "InstanceId": instance_id, "NodeName": f"ip-10-20-1-{len(pts) % 250}"}
        util = res.neuron.utilization(stamps, rng)
        pts += _series_points("ContainerInsights", "node_neuroncore_utilization", dims, stamps, util)
    return pts


def _container_insights_gpu_points(
    res: DemoResource, instance_id: str, stamps: list[datetime], rng: random.Random
) -> list[Point]:
    """What Container Insights with enhanced observability publishes for an EKS GPU node: node_gpu_* per GpuDevice
    ([ClusterName, InstanceId, InstanceType, NodeName, GpuDevice]) and the node's GPUs held by pods and GPUs it has
    ([ClusterName, InstanceId, NodeName])."""
    assert res.gpu is not None and res.eks_cluster is not None
    node = {"ClusterName": res.eks_cluster, "InstanceId": instance_id, "NodeName": f"ip-10-20-2-{len(res.name)}"}
    pts: list[Point] = []
    util = res.gpu(stamps, rng)
    memory = (res.gpu_memory_used or Flat(0.0))(stamps, rng)
    for index in range(_accelerators(res)):
        device = {**node, "InstanceType": res.instance_type, "GpuDevice": f"nvidia{index}"}
        pts += _series_points("ContainerInsights", "node_gpu_utilization", device, stamps, util, "Percent")
        pts += _series_points("ContainerInsights", "node_gpu_memory_utilization", device, stamps, memory, "Percent")
        power = [22.0 + u * 0.5 for u in util]
        pts += _series_points("ContainerInsights", "node_gpu_power_draw", device, stamps, power)
    requested = (res.gpus_requested or Flat(0.0))(stamps, rng)
    pts += _series_points("ContainerInsights", "node_gpu_usage_total", node, stamps, requested, "Count")
    limit = [float(_accelerators(res))] * len(stamps)
    pts += _series_points("ContainerInsights", "node_gpu_limit", node, stamps, limit, "Count")
    return pts


def _training_points(res: DemoResource, stamps: list[datetime]) -> list[Point]:
    rng = _rng(res.name)
    pts: list[Point] = []
    for host in range(1, res.count + 1):
        dims = {"Host": f"{res.name}/algo-{host}"}
        cpu = Window(Steady(70.0, cap=None), res.training_hours, res.ended_hours_ago)(stamps, rng)
        pts += _series_points("/aws/sagemaker/TrainingJobs", "CPUUtilization", dims, stamps, cpu)
        if res.gpu is not None:
            gpu = Window(res.gpu, res.training_hours, res.ended_hours_ago)(stamps, rng)
            scaled = [v * _accelerators(res) for v in gpu]  # 0-100 × GPUs, as SageMaker publishes it
            pts += _series_points("/aws/sagemaker/TrainingJobs", "GPUUtilization", dims, stamps, scaled)
    return pts


# --- neuron-monitor reports ------------------------------------------------------------------------------------


def neuron_report(
    facts: InstanceType,
    instance_id: str,
    tag: str,
    at: datetime,
    utilization: float,
    memory_bytes: int,
    executions: int,
    rng: random.Random,
) -> dict[str, Any]:
    """One neuron-monitor JSON document (the schema of aws.md §1.2) for one running application."""
    cores = max(1, facts.neuron_cores)
    in_use = {
        str(core): {
            "neuroncore_utilization": round(utilization * (1.0 if core == 0 else rng.uniform(0.55, 1.0)), 3),
            "flops": int(utilization * 1e10),
        }
        for core in range(cores)
    }
    latency = {p: round(0.004 * (1 + i / 3), 5) for i, p in enumerate(("p0", "p1", "p25", "p50", "p75", "p99", "p100"))}
    period = float(NEURON_REPORT_PERIOD_S)
    return {
        "neuron_runtime_data": [
            {
                "pid": 4100 + zlib.crc32(tag.encode()) % 900,
                "neuron_runtime_tag": tag,
                "error": "",
                "report": {
                    "neuroncore_counters": {"period": period, "error": "", "neuroncores_in_use": in_use},
                    "execution_stats": {
                        "period": period,
                        "error": "",
                        "error_summary": dict.fromkeys(
                            ("generic", "numerical", "transient", "model", "runtime", "hardware"), 0
                        ),
                        "execution_summary": {
                            "completed": executions,
                            "completed_with_err": 0,
                            "completed_with_num_err": 0,
                            "timed_out": 0,
                            "incorrect_input": 0,
                            "failed_to_queue": 0,
                        },
                        "latency_stats": {
                            "total_latency": latency if executions else None,
                            "device_latency": latency if executions else None,
                        },
                    },
                    "memory_used": {
                        "period": period,
                        "error": "",
                        "neuron_runtime_used_bytes": {"host": 2 * GIB, "neuron_device": memory_bytes},
                        "loaded_models": [],
                    },
                },
            }
        ],
        "system_data": {
            "memory_info": {
                "period": period,
                "error": "",
                "memory_total_bytes": int(facts.memory_gib * GIB),
                "memory_used_bytes": 8 * GIB,
                "swap_total_bytes": 0,
                "swap_used_bytes": 0,
            },
        },
        "instance_info": {
            "instance_name": "",
            "instance_id": instance_id,
            "instance_type": facts.name,
            "instance_availability_zone": "us-east-1a",
            "instance_availability_zone_id": "use1-az2",
            "instance_region": "us-east-1",
            "ami_id": AMI,
            "subnet_id": "subnet-0demo",
            "error": "",
            "report_time": at.isoformat(),
        },
        "neuron_hardware_info": {
            "neuron_device_type": (facts.accelerator or "").lower(),
            "neuron_device_version": "v2",
            "neuroncore_version": "v2",
            "neuron_device_count": facts.neuron_devices,
            "neuron_device_memory_size": int(facts.accelerator_memory_gib * GIB) // max(1, facts.neuron_devices),
            "neuroncore_per_device_count": cores // max(1, facts.neuron_devices),
            "logical_neuroncore_config": 1,
            "error": "",
        },
    }


def _upload_neuron_reports(aws: AwsContext, seeded: SeededAccount) -> None:
    """Daily JSON-lines objects per instance under ``neuron/``, as the shipper writes them."""
    bucket = get_settings().artifacts_bucket
    s3 = aws.client("s3")
    s3.create_bucket(Bucket=bucket)
    per_hour = 3600 // NEURON_REPORT_PERIOD_S
    for res in demo_resources():
        if res.kind != "ec2_instance" or res.neuron is None or res.eks_cluster:
            continue
        facts = get_catalog().require(res.instance_type)
        instance_id = seeded.instance_ids[res.name]
        rng = _rng(res.name + "/neuron")
        stamps = hours_ending(seeded.now, HISTORY_HOURS)
        util = res.neuron.utilization(stamps, rng)
        execs = res.neuron.executions_per_second(stamps, rng)
        days: dict[date, list[str]] = defaultdict(list)
        for ts, u, e in zip(stamps, util, execs, strict=True):
            for slot in range(per_hour):
                at = ts + timedelta(seconds=slot * NEURON_REPORT_PERIOD_S)
                doc = neuron_report(
                    facts,
                    instance_id,
                    res.name,
                    at,
                    min(100.0, u * rng.uniform(0.9, 1.1)) if u else 0.0,  # neuron-monitor reports 0-100 %
                    int(res.neuron.device_memory_gib * GIB),
                    int(e * NEURON_REPORT_PERIOD_S),
                    rng,
                )
                days[at.date()].append(json.dumps(doc, separators=(",", ":")))
        if res.name == "inf2-batch-embedder":  # a shipper cut off mid-line: reported, the rest is kept
            first = min(days)
            days[first].insert(3, '{"neuron_runtime_data": [{"pid": 4121, "neuron_runt')
        for day, lines in sorted(days.items()):
            body = gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
            s3.put_object(Bucket=bucket, Key=f"neuron/{instance_id}/{day.isoformat()}.jsonl.gz", Body=body)
            seeded.neuron_objects += 1
            seeded.neuron_reports += len(lines)


# --- Cost Explorer ---------------------------------------------------------------------------------------------


def _usage_type(res: DemoResource) -> tuple[str, str]:
    if res.kind == "ec2_instance":
        return EC2_SERVICE, f"BoxUsage:{res.instance_type}"
    if res.kind == "sagemaker_endpoint":
        return SAGEMAKER_SERVICE, f"USE1-Host:{res.instance_type}"
    return SAGEMAKER_SERVICE, f"USE1-Train:{res.instance_type}"


def _hours_per_day(res: DemoResource, now: datetime, days: list[date]) -> dict[date, int]:
    if res.kind != "sagemaker_training_job" and res.retired_hours_ago:
        deleted = now - timedelta(hours=res.retired_hours_ago)
        billed: dict[date, int] = {}
        for day in days:
            start = datetime.combine(day, datetime.min.time(), tzinfo=now.tzinfo)
            billed_hours = (min(deleted, start + timedelta(days=1)) - start) // timedelta(hours=1)
            billed[day] = max(0, int(billed_hours)) * res.count
        return billed
    if res.kind != "sagemaker_training_job":
        return dict.fromkeys(days, 24 * res.count)
    end = now - timedelta(hours=res.ended_hours_ago)
    hours: dict[date, int] = defaultdict(int)
    for h in range(res.training_hours):
        hours[(end - timedelta(hours=h + 1)).date()] += res.count
    return {d: hours.get(d, 0) for d in days}


# What the demo account is billed per hour for SageMaker types without a public price (ml.p4d, ml.p4de, ...): the
# account's own bill, as Cost Explorer would show it, not a catalog figure (EC2 on-demand x this premium).
DEMO_SAGEMAKER_BILL_PREMIUM = Decimal("1.25")


def billed_rate(instance_type: str | None, catalog: Catalog) -> Decimal:
    """The demo account's hourly bill for one instance: the public on-demand price where there is one, else (a
    SageMaker type without a public price) the EC2 price x the demo's premium."""
    if not instance_type:
        return Decimal(0)
    price = catalog.price(instance_type)
    if price is None and instance_type.startswith("ml."):
        ec2 = catalog.price(instance_type.removeprefix("ml."))
        price = ec2 * DEMO_SAGEMAKER_BILL_PREMIUM if ec2 is not None else None
    return price or Decimal(0)


def cost_and_usage_pages(seeded: SeededAccount) -> list[dict[str, Any]]:
    """GetCostAndUsage responses (DAILY, grouped by SERVICE and USAGE_TYPE) in two pages."""
    catalog = get_catalog()
    today = seeded.now.date()
    days = [today - timedelta(days=COST_DAYS - i) for i in range(COST_DAYS)]
    groups: dict[date, dict[tuple[str, str], list[Decimal]]] = {d: {} for d in days}
    for res in demo_resources():
        if res.kind not in ("ec2_instance", "sagemaker_endpoint", "sagemaker_training_job"):
            continue  # held capacity, notebooks and clusters: priced at the rate of their type (catalog)
        key = _usage_type(res)
        price = billed_rate(res.instance_type, catalog)
        for day, hours in _hours_per_day(res, seeded.now, days).items():
            if not hours:
                continue
            unblended = price * hours
            amortized = unblended * amortized_share(res)
            cell = groups[day].setdefault(key, [Decimal(0), Decimal(0), Decimal(0)])
            cell[0] += unblended
            cell[1] += amortized
            cell[2] += hours
    for day in days:  # storage on the endpoints' ML volumes: not instance usage
        groups[day][(SAGEMAKER_SERVICE, "USE1-Host:VolumeUsage.gp2")] = [
            Decimal("0.52"),
            Decimal("0.52"),
            Decimal("3.7"),
        ]
    results = []
    for day in days:
        rows = []
        for (service, usage_type), (unblended, amortized, quantity) in sorted(groups[day].items()):
            unblended, amortized = unblended.quantize(Decimal("0.0000001")), amortized.quantize(Decimal("0.0000001"))
            seeded.cost_by_usage_type[usage_type] = seeded.cost_by_usage_type.get(usage_type, Decimal(0)) + unblended
            unit = "Hrs" if ":" in usage_type and "Volume" not in usage_type else "GB-Mo"
            rows.append(
                {
                    "Keys": [service, usage_type],
                    "Metrics": {
                        "UnblendedCost": {"Amount": str(unblended), "Unit": "USD"},
                        "AmortizedCost": {"Amount": str(amortized), "Unit": "USD"},
                        "UsageQuantity": {"Amount": str(quantity), "Unit": unit},
                    },
                }
            )
        results.append(
            {
                "TimePeriod": {"Start": day.isoformat(), "End": (day + timedelta(days=1)).isoformat()},
                "Total": {},
                "Groups": rows,
                "Estimated": day >= today - timedelta(days=1),
            }
        )
    definitions = [{"Type": "DIMENSION", "Key": "SERVICE"}, {"Type": "DIMENSION", "Key": "USAGE_TYPE"}]
    half = len(results) // 2
    return [
        {
            "ResultsByTime": results[:half],
            "GroupDefinitions": definitions,
            "DimensionValueAttributes": [],
            "NextPageToken": "demo-page-2",
        },
        {"ResultsByTime": results[half:], "GroupDefinitions": definitions, "DimensionValueAttributes": []},
    ]
