"""Issue 13 item 4 on the emulator: an endpoint shared by inference components is scanned through
ListInferenceComponents/DescribeInferenceComponent; each component is a resource with its reserved share of the
variant as its cost and its own series (by InferenceComponentName), and the idle one gets the finding.

Hand-computed figures: ml.g5.12xlarge (4 GPUs) bills 340.32 USD for 48 instance-hours a day -> 7.09 USD/h.
``mistral-chat`` reserves 2 copies x 2 GPUs / 4 = 1 instance; ``summarise-old`` 1 copy x 2 GPUs / 4 = 0.5; the
variant keeps 2 - 1.5 = 0.5. The idle component costs 0.5 x 7.09 x 730 = 2,587.85 USD a month.
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
from chipwise.models.resources import EndpointDetails, InferenceComponentDetails, parse_details
from chipwise.models.scan import ScanDocument
from chipwise.pipeline.scan import run_scan
from chipwise.store.repositories.profile_inputs import ProfileInputRepository
from chipwise.store.tables import Resource
from chipwise_devkit.emulator import Emulator, MetricPoint

NOW = datetime(2026, 11, 20, 12, 17, tzinfo=UTC)
LOOKBACK_DAYS = 8
WINDOW_END = datetime(2026, 11, 20, 12, tzinfo=UTC)
HOURS = [WINDOW_END - timedelta(days=LOOKBACK_DAYS) + timedelta(hours=h) for h in range(LOOKBACK_DAYS * 24)]
DAYS = [(WINDOW_END - timedelta(days=LOOKBACK_DAYS - d)).date().isoformat() for d in range(LOOKBACK_DAYS)]
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"
COSTS = [("Amazon SageMaker", "USE1-Host:ml.g5.12xlarge", "340.32", "340.32", "48")]
ENDPOINT = "shared-llm"
ENDPOINT_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{ENDPOINT}"


def _sm() -> Any:
    return boto3.client("sagemaker", region_name=REGION)


def _component(name: str, model_id: str, copies: int, gpus: int) -> None:
    _sm().create_inference_component(
        InferenceComponentName=name,
        EndpointName=ENDPOINT,
        VariantName="AllTraffic",
        Specification={
            "Container": {"Image": LMI, "Environment": {"OPTION_MODEL_ID": model_id, "OPTION_ROLLING_BATCH": "vllm"}},
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": gpus, "MinMemoryRequiredInMb": 1024},
        },
        RuntimeConfig={"CopyCount": copies},
    )


@pytest.fixture
def seeded(aws: Emulator) -> None:
    sm = _sm()
    # An endpoint for inference components: its variant names no model, the components place them
    sm.create_endpoint_config(
        EndpointConfigName="shared-llm-config",
        ExecutionRoleArn=ROLE,
        ProductionVariants=[
            {
                "VariantName": "AllTraffic",
                "InstanceType": "ml.g5.12xlarge",
                "InitialInstanceCount": 2,
                "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 2},
                "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
            }
        ],
    )
    sm.create_endpoint(EndpointName=ENDPOINT, EndpointConfigName="shared-llm-config")
    _component("mistral-chat", "mistralai/Mistral-7B-Instruct-v0.3", copies=2, gpus=2)
    _component("summarise-old", "meta-llama/Meta-Llama-3-8B-Instruct", copies=1, gpus=2)
    variant = {"EndpointName": ENDPOINT, "VariantName": "AllTraffic"}
    chat = {"InferenceComponentName": "mistral-chat"}
    old = {"InferenceComponentName": "summarise-old"}
    points: list[MetricPoint] = []
    for hour in HOURS:
        points += [
            # The variant: GPUUtilization sums its 4 GPUs (the chat copies keep two busy); invocations of all
            MetricPoint("/aws/sagemaker/Endpoints", "GPUUtilization", variant, hour, 110.0, "Percent"),
            MetricPoint("/aws/sagemaker/Endpoints", "CPUUtilization", variant, hour, 60.0, "Percent"),
            MetricPoint("AWS/SageMaker", "Invocations", variant, hour, 900.0),
            # The busy component and the idle one, each by InferenceComponentName (0-100 % of what it reserved)
            MetricPoint("AWS/SageMaker", "Invocations", chat, hour, 900.0),
            MetricPoint("AWS/SageMaker", "ModelLatency", chat, hour, 420_000.0, "Microseconds"),
            MetricPoint("/aws/sagemaker/InferenceComponents", "GPUUtilizationNormalized", chat, hour, 55.0, "Percent"),
            MetricPoint("/aws/sagemaker/InferenceComponents", "GPUUtilizationNormalized", old, hour, 0.3, "Percent"),
            MetricPoint("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", old, hour, 1.0, "Percent"),
        ]
    aws.seed_metrics(points)
    aws.inject_cost_and_usage(cost_pages_for(DAYS, COSTS))


def _scan(session_factory: sessionmaker[Session]) -> ScanDocument:
    return run_scan(aws_context(REGION), session_factory, region=REGION, now=NOW, lookback_days=LOOKBACK_DAYS)


def _profiles(session_factory: sessionmaker[Session]) -> dict[str, ResourceProfile]:
    with session_factory() as session:
        source = ProfileInputRepository(session, account_id=ACCOUNT, region=REGION)
        start = WINDOW_END - timedelta(days=LOOKBACK_DAYS)
        return {p.name: p for p in build_profiles(source, start=start, end=WINDOW_END, catalog=get_catalog())}


def test_each_inference_component_is_judged_on_its_own_share_and_series(
    seeded: None, session_factory: sessionmaker[Session]
) -> None:
    # Given an endpoint of 2 x ml.g5.12xlarge shared by a busy and an idle inference component
    # When the account is scanned
    document = _scan(session_factory)
    assert document.status == "succeeded", document.errors
    # Then the variant and both components are resources, each with what it pays for
    found = {r.name: r for r in document.resources}
    assert set(found) == {ENDPOINT, f"{ENDPOINT}/mistral-chat", f"{ENDPOINT}/summarise-old"}
    assert [found[n].billed_instances for n in (ENDPOINT, f"{ENDPOINT}/mistral-chat", f"{ENDPOINT}/summarise-old")] == [
        Decimal("0.5"),
        Decimal("1"),
        Decimal("0.5"),
    ]
    chat = found[f"{ENDPOINT}/mistral-chat"]
    assert (chat.kind, chat.instance_type, chat.instance_count) == (
        "sagemaker_inference_component",
        "ml.g5.12xlarge",
        2,
    )
    # under its own ARN (as DescribeInferenceComponent gives it), a child of its endpoint
    assert chat.id == chat.arn == f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/mistral-chat"
    assert chat.hints["hf_model_id"] == "mistralai/Mistral-7B-Instruct-v0.3"
    assert "2 copies x 2 GPUs / 4 GPUs per ml.g5.12xlarge = 1 instance reserved" in (chat.cost_basis or "")
    with session_factory() as session:
        row = session.scalars(select(Resource).where(Resource.name == f"{ENDPOINT}/summarise-old")).one()
        details = parse_details(row.kind, row.details)
    assert isinstance(details, InferenceComponentDetails)
    assert details.component.arn == f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/summarise-old"
    # And only the idle component gets a finding: gpu_idle at its share, 0.5 x 7.09 x 730 = 2,587.85 USD a month
    assert [(f.rule_id, f.resource_name) for f in document.findings] == [("gpu_idle", f"{ENDPOINT}/summarise-old")]
    (finding,) = document.findings
    assert finding.monthly_cost_usd == finding.estimated_monthly_savings_usd == Decimal("2587.85")
    assert "delete inference component summarise-old" in finding.summary
    evidence = finding.evidence
    assert (evidence["inference_component"], evidence["endpoint_name"]) == ("summarise-old", ENDPOINT)
    assert evidence["hourly_rate_usd"] == 7.09 and evidence["rate_source"] == "cost_explorer"
    assert evidence["billed_instances"] == 0.5
    assert evidence["gpu_source"] == "/aws/sagemaker/InferenceComponents"
    assert evidence["invocations_in_window"] == 0
    # And each was read on its own series: the chat component's 55 % of its reserved GPUs, not the variant's sum
    profiles = _profiles(session_factory)
    chat_profile = profiles[f"{ENDPOINT}/mistral-chat"]
    assert chat_profile.signals.gpu_util is not None and chat_profile.signals.gpu_util.maximum == 55.0
    assert chat_profile.signals.invocations is not None and chat_profile.signals.invocations.total == 900.0 * len(HOURS)
    assert profiles[ENDPOINT].signals.gpu_util is not None and profiles[ENDPOINT].signals.gpu_util.maximum == 110.0
    # And the three figures add up to the endpoint's bill: 2 x 7.09 x 730 = 10,351.40 USD a month
    monthly = [p.monthly_cost for p in profiles.values()]
    assert sum((m for m in monthly if m is not None), Decimal(0)) == Decimal("10351.40")


def test_components_that_cannot_be_listed_are_kept_and_the_variant_has_no_figure(
    seeded: None, aws: Emulator, session_factory: sessionmaker[Session]
) -> None:
    # Given a first scan that read the components
    _scan(session_factory)
    # When the next scan is refused ListInferenceComponents
    aws.inject_fault("sagemaker", "ListInferenceComponents", "AccessDeniedException", "not authorized", times=5)
    document = _scan(session_factory)
    # Then the scan is partial with the reason, the stored components are kept (never marked gone, so no false
    # "realised saving"), and the variant, whose own share is unknown, has no figure
    assert document.status == "partial"
    assert any("inference components" in e.message and e.code == "AccessDeniedException" for e in document.errors)
    with session_factory() as session:
        rows = {r.name: r for r in session.scalars(select(Resource))}
    assert rows[f"{ENDPOINT}/summarise-old"].state == "InService"
    assert rows[f"{ENDPOINT}/mistral-chat"].state == "InService"
    variant = parse_details(rows[ENDPOINT].kind, rows[ENDPOINT].details)
    assert isinstance(variant, EndpointDetails) and variant.billed_unknown
    assert _profiles(session_factory)[ENDPOINT].monthly_cost is None
