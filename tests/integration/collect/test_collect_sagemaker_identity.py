"""Issue 13 on the emulator: an A/B endpoint is two resources judged on their own (the idle GPU canary gets the
finding, with its own cost); a JumpStart endpoint and an HF-estimator fine-tune are recognised from where SageMaker
keeps their model; a default CloudWatch agent (no InstanceId dimension) is matched by host.

Hand-computed figures: ml.g5.xlarge bills 33.8592 USD for 24 hours a day -> 1.4108 USD/h; one instance always on
for 730 h a month -> 1029.884 USD/month (the canary's cost and saving). ml.inf2.xlarge: 47.52 USD for 48 hours a day
(two instances) -> 0.99 USD/h.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from scan_account_fixture import ACCOUNT, REGION, ROLE, cost_pages_for
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.analyse.profile_builder import build_profiles
from chipwise.analyse.profiles import ResourceProfile
from chipwise.aws import aws_context
from chipwise.catalog import get_catalog
from chipwise.models.resources import parse_details, parse_hints
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.store.repositories.profile_inputs import ProfileInputRepository
from chipwise.store.tables import Resource, Scan
from chipwise_devkit.emulator import Emulator, MetricPoint

NOW = datetime(2026, 11, 20, 12, 17, tzinfo=UTC)
LOOKBACK_DAYS = 8
WINDOW_END = datetime(2026, 11, 20, 12, tzinfo=UTC)
HOURS = [WINDOW_END - timedelta(days=LOOKBACK_DAYS) + timedelta(hours=h) for h in range(LOOKBACK_DAYS * 24)]
DAYS = [(WINDOW_END - timedelta(days=LOOKBACK_DAYS - d)).date().isoformat() for d in range(LOOKBACK_DAYS)]
TGI_NEURONX = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.1.2-neuronx-py310"
TGI_GPU = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:"
    "2.1.1-tgi2.0.0-gpu-py310-cu121-ubuntu22.04"
)
JUMPSTART_S3 = (
    "s3://jumpstart-private-cache-prod-us-east-1/meta-textgeneration/meta-textgeneration-llama-3-8b/"
    "artifacts/inference-prepack/v1.0.0/"
)
HF_TRAINING = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-training:"
    "2.1.0-transformers4.36.0-gpu-py310-cu121-ubuntu20.04"
)
SAGEMAKER = "Amazon SageMaker"
EC2 = "Amazon Elastic Compute Cloud - Compute"
COSTS = [
    (SAGEMAKER, "USE1-Host:ml.inf2.xlarge", "47.52", "47.52", "48"),
    (SAGEMAKER, "USE1-Host:ml.g5.xlarge", "33.8592", "33.8592", "24"),
    (EC2, "BoxUsage:g5.xlarge", "24.144", "24.144", "24"),
]
AB_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/chat-ab"


def _sm() -> Any:
    return boto3.client("sagemaker", region_name=REGION)


def _model(name: str, container: dict[str, Any]) -> None:
    _sm().create_model(ModelName=name, PrimaryContainer=container, ExecutionRoleArn=ROLE)


@pytest.fixture
def seeded(aws: Emulator) -> dict[str, str]:
    sm = _sm()
    # An A/B endpoint: the inf2 variant serves, the ml.g5 canary takes no traffic and keeps its GPU idle
    _model("llama-inf2", {"Image": TGI_NEURONX, "Environment": {"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct"}})
    _model("llama-g5", {"Image": TGI_GPU, "Environment": {"HF_MODEL_ID": "meta-llama/Meta-Llama-3-8B-Instruct"}})
    sm.create_endpoint_config(
        EndpointConfigName="chat-ab-config",
        ProductionVariants=[
            {
                "VariantName": "inf2-main",
                "ModelName": "llama-inf2",
                "InstanceType": "ml.inf2.xlarge",
                "InitialInstanceCount": 2,
                "InitialVariantWeight": 0.9,
            },
            {
                "VariantName": "g5-canary",
                "ModelName": "llama-g5",
                "InstanceType": "ml.g5.xlarge",
                "InitialInstanceCount": 1,
                "InitialVariantWeight": 0.1,
            },
        ],
    )
    sm.create_endpoint(EndpointName="chat-ab", EndpointConfigName="chat-ab-config")
    # A JumpStart endpoint: the model sits in S3 and HF_MODEL_ID is the path it is copied to in the container
    _model(
        "js-llama",
        {
            "Image": TGI_GPU,
            "Environment": {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1", "ENDPOINT_SERVER_TIMEOUT": "3600"},
            "ModelDataSource": {
                "S3DataSource": {"S3Uri": JUMPSTART_S3, "S3DataType": "S3Prefix", "CompressionType": "None"}
            },
        },
    )
    sm.create_endpoint_config(
        EndpointConfigName="js-config",
        ProductionVariants=[
            {
                "VariantName": "AllTraffic",
                "ModelName": "js-llama",
                "InstanceType": "ml.g5.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
    )
    sm.create_endpoint(
        EndpointName="js-llama-3-8b",
        EndpointConfigName="js-config",
        Tags=[
            {"Key": "sagemaker-sdk:jumpstart-model-id", "Value": "meta-textgeneration-llama-3-8b"},
            {"Key": "sagemaker-sdk:jumpstart-model-version", "Value": "2.2.0"},
        ],
    )
    # A fine-tune from the HF estimator: the SDK JSON-encodes hyperparameters; the job name says nothing
    sm.create_training_job(
        TrainingJobName="job-0001",
        AlgorithmSpecification={"TrainingImage": HF_TRAINING, "TrainingInputMode": "File"},
        RoleArn=ROLE,
        HyperParameters={
            "model_name_or_path": '"mistralai/Mistral-7B-v0.1"',
            "epochs": "3",
            "sagemaker_program": '"run_clm.py"',
            "sagemaker_submit_directory": '"s3://bucket/job-0001/source/sourcedir.tar.gz"',
            "sagemaker_job_name": '"job-0001"',
        },
        OutputDataConfig={"S3OutputPath": "s3://bucket/job-0001/"},
        ResourceConfig={"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 100},
        StoppingCondition={"MaxRuntimeInSeconds": 86400},
    )
    # An EC2 GPU box whose CloudWatch agent publishes its default dimensions only (index, name, host)
    ec2 = boto3.client("ec2", region_name=REGION)
    instance = ec2.run_instances(
        ImageId="ami-12345678",
        InstanceType="g5.xlarge",
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "Name", "Value": "agent-box"}]}],
    )["Instances"][0]
    host = str(instance["PrivateDnsName"])
    points: list[MetricPoint] = []
    main = {"EndpointName": "chat-ab", "VariantName": "inf2-main"}
    canary = {"EndpointName": "chat-ab", "VariantName": "g5-canary"}
    agent = {"index": "0", "name": "NVIDIA A10G", "host": host}
    for hour in HOURS:
        points += [
            MetricPoint("AWS/SageMaker", "Invocations", main, hour, 1200.0),
            MetricPoint("Chipwise/Neuron", "NeuronCoreUtilization", main, hour, 62.0, "Percent"),
            MetricPoint("/aws/sagemaker/Endpoints", "CPUUtilization", main, hour, 40.0, "Percent"),
            MetricPoint("/aws/sagemaker/Endpoints", "GPUUtilization", canary, hour, 0.5, "Percent"),
            MetricPoint("/aws/sagemaker/Endpoints", "CPUUtilization", canary, hour, 2.0, "Percent"),
            MetricPoint("CWAgent", "nvidia_smi_utilization_gpu", agent, hour, 37.0),
        ]
    aws.seed_metrics(points)
    aws.inject_cost_and_usage(cost_pages_for(DAYS, COSTS))
    return {"host": host, "instance_id": str(instance["InstanceId"])}


def _profiles(session_factory: sessionmaker[Session]) -> list[ResourceProfile]:
    with session_factory() as session:
        source = ProfileInputRepository(session, account_id=ACCOUNT, region=REGION)
        start = WINDOW_END - timedelta(days=LOOKBACK_DAYS)
        return build_profiles(source, start=start, end=WINDOW_END, catalog=get_catalog())


def _scan(session_factory: sessionmaker[Session]) -> ScanDocument:
    return run_scan(aws_context(REGION), session_factory, region=REGION, now=NOW, lookback_days=LOOKBACK_DAYS)


def test_an_ab_endpoint_is_two_resources_and_the_idle_canary_gets_the_finding(
    seeded: dict[str, str], session_factory: sessionmaker[Session]
) -> None:
    # Given an A/B endpoint: inf2 variant busy, ml.g5 canary idle for 8 days
    # When the account is scanned
    document = _scan(session_factory)
    # Then each variant is its own resource with its own type and count (the endpoint itself is not one)
    found = {r.name: (r.instance_type, r.instance_count, r.platform) for r in document.resources}
    assert found["chat-ab/inf2-main"] == ("ml.inf2.xlarge", 2, "inferentia")
    assert found["chat-ab/g5-canary"] == ("ml.g5.xlarge", 1, "nvidia")
    assert "chat-ab" not in found
    with session_factory() as session:
        canary = session.scalars(select(Resource).where(Resource.arn == AB_ARN, Resource.variant == "g5-canary")).one()
        details = parse_details(canary.kind, canary.details)
        # (stored under the endpoint's ARN, which AWS accepts, with the variant in its own column and in its id)
        assert canary.key == f"{AB_ARN}#variant/g5-canary" and canary.parent_arn == AB_ARN
        assert found_ids(document) >= {f"{AB_ARN}#variant/g5-canary", f"{AB_ARN}#variant/inf2-main"}
    assert [v.variant_name for v in details.variants] == ["g5-canary"]  # type: ignore[union-attr]
    # And the idle GPU canary has a gpu_idle finding naming the variant, priced at the variant's own cost
    idle = [f for f in document.findings if f.rule_id == "gpu_idle"]
    assert [f.resource_name for f in idle] == ["chat-ab/g5-canary"]
    finding = idle[0]
    assert finding.monthly_cost_usd == Decimal("1029.88")  # 1.4108 USD/h x 1 x 730 h
    assert finding.estimated_monthly_savings_usd == Decimal("1029.88")
    assert "remove variant g5-canary from endpoint chat-ab" in finding.summary
    assert (finding.resource_id, finding.resource_arn, finding.variant) == (
        f"{AB_ARN}#variant/g5-canary",
        AB_ARN,
        "g5-canary",
    )
    evidence = finding.evidence
    assert evidence["variant_name"] == "g5-canary"
    assert evidence["endpoint_name"] == "chat-ab"
    assert evidence["hourly_rate_usd"] == 1.4108 and evidence["rate_source"] == "cost_explorer"
    assert "1 x ml.g5.xlarge" in str(evidence["cost_basis"])
    assert "gpu_util=/aws/sagemaker/Endpoints" in str(evidence["signal_sources"])
    # And no finding on the busy inf2 variant calls it idle
    assert not [f for f in document.findings if f.resource_name == "chat-ab/inf2-main" and "idle" in f.rule_id]
    # And each variant was read on its own series and priced at its own type: inf2 at 0.99 USD/h x 2 instances
    by_name = {p.name: p for p in _profiles(session_factory)}
    main, canary_profile = by_name["chat-ab/inf2-main"], by_name["chat-ab/g5-canary"]
    assert main.signals.neuron_util is not None and main.signals.neuron_util.maximum == 62.0
    assert main.signals.gpu_util is None
    assert canary_profile.signals.gpu_util is not None and canary_profile.signals.gpu_util.maximum == 0.5
    assert canary_profile.signals.neuron_util is None
    assert (main.cost.hourly_rate, main.instance_count, main.monthly_cost) == (
        Decimal("0.99"),
        2,
        Decimal("1445.40"),  # 0.99 x 2 x 730
    )


def test_jumpstart_endpoint_and_hf_estimator_fine_tune_are_recognised(
    seeded: dict[str, str], session_factory: sessionmaker[Session]
) -> None:
    # Given a JumpStart endpoint (HF_MODEL_ID=/opt/ml/model, model in S3, JumpStart tag) and job-0001
    _scan(session_factory)
    with session_factory() as session:
        rows = {r.name: r for r in session.scalars(select(Resource))}
    # Then the JumpStart endpoint's family comes from its JumpStart id; the path is never a model id
    js = parse_hints(rows["js-llama-3-8b"].hints)
    assert js.model_family == "llama"
    assert js.hf_model_id is None
    assert js.jumpstart_model_id == "meta-textgeneration-llama-3-8b"
    assert js.sources["jumpstart_model_id"] == "jumpstart_tag"
    assert js.rejected_model_ids == {"env:HF_MODEL_ID": "/opt/ml/model"}
    assert js.model_artifact == JUMPSTART_S3
    # And the fine-tune named job-0001 is recognised as Mistral from its hyperparameters
    job = parse_hints(rows["job-0001"].hints)
    assert (job.model_family, job.hf_model_id, job.sources["model_id"]) == (
        "mistral",
        "mistralai/Mistral-7B-v0.1",
        "hyperparameter:model_name_or_path",
    )


def test_a_default_cloudwatch_agent_is_matched_by_host(
    seeded: dict[str, str], session_factory: sessionmaker[Session]
) -> None:
    # Given a GPU box whose agent publishes nvidia_smi_utilization_gpu with index, name and host only
    document = _scan(session_factory)
    with session_factory() as session:
        scan = session.get(Scan, document.scan_id)
        assert scan is not None
        assert scan.timings["counts"]["gpu_agent_matched_by"] == {"host": 1}
    # Then its GPU utilisation is read (37 % every hour), not "no telemetry"
    box = next(p for p in _profiles(session_factory) if p.name == "agent-box")
    assert box.signals.gpu_util is not None
    assert box.signals.gpu_util.maximum == 37.0
    assert box.signals.gpu_source == "CWAgent"
    assert box.signals.sources["gpu_util"] == "CWAgent"


def found_ids(document: ScanDocument) -> set[str]:
    """The ids of a scan's resources, each variant's arn the endpoint's (an ARN AWS accepts)."""
    assert all(r.arn is not None and "#" not in r.arn and "/variant/" not in r.arn for r in document.resources)
    return {r.id for r in document.resources}
