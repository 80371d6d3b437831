"""SageMaker inference components on the emulator (chipwise_devkit.emulator.inference_components): shapes as
botocore's model says, list filters, sorting and paging, the errors Chipwise's collector relies on ("Could not
find" is gone), runtime-config updates, per-region state emptied by reset, and injected faults.

Every test uses the ``aws`` fixture (conftest): one session emulator, reset before each test, env applied.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from chipwise.aws import AwsContext
from chipwise.collect.inventory.sources.sagemaker_endpoints import collect_sagemaker_endpoints
from chipwise_devkit.emulator import Emulator

ACCOUNT = "123456789012"
REGION = "us-east-1"
ENDPOINT = "llm-ep"
VARIANT = "AllTraffic"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124"
ARTIFACTS = "s3://models-bucket/mistral-7b/model.tar.gz"
NO_RETRY = Config(retries={"mode": "standard", "total_max_attempts": 1})


def _sm(region: str = REGION) -> Any:
    """A plain boto3 SageMaker client (typed loosely: these tests build requests as plain dicts)."""
    return boto3.client("sagemaker", region_name=region, config=NO_RETRY)


def _endpoint(sm: Any, name: str = ENDPOINT, variants: tuple[str, ...] = (VARIANT,)) -> None:
    """An endpoint for inference components: a model (the components name it) and a config whose ml.g5.12xlarge
    variants name no model."""
    if not sm.list_models(NameContains="mistral")["Models"]:
        sm.create_model(
            ModelName="mistral",
            ExecutionRoleArn=f"arn:aws:iam::{ACCOUNT}:role/sagemaker",
            PrimaryContainer={"Image": IMAGE},
        )
    sm.create_endpoint_config(
        EndpointConfigName=f"{name}-cfg",
        ProductionVariants=[
            {
                "VariantName": variant,
                "InstanceType": "ml.g5.12xlarge",
                "InitialInstanceCount": 1,
                "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 2},
                "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
            }
            for variant in variants
        ],
    )
    sm.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-cfg")


def _component(
    sm: Any,
    name: str,
    *,
    endpoint: str = ENDPOINT,
    variant: str | None = VARIANT,
    copies: int = 1,
    accelerators: float = 1,
) -> str:
    request: dict[str, Any] = {
        "InferenceComponentName": name,
        "EndpointName": endpoint,
        "Specification": {
            "ModelName": "mistral",
            "Container": {"Image": IMAGE, "ArtifactUrl": ARTIFACTS, "Environment": {"OPTION_MODEL_ID": name}},
            "ComputeResourceRequirements": {
                "NumberOfAcceleratorDevicesRequired": accelerators,
                "NumberOfCpuCoresRequired": 2,
                "MinMemoryRequiredInMb": 8192,
            },
            "StartupParameters": {
                "ModelDataDownloadTimeoutInSeconds": 900,
                "ContainerStartupHealthCheckTimeoutInSeconds": 600,
            },
        },
        "RuntimeConfig": {"CopyCount": copies},
    }
    if variant is not None:
        request["VariantName"] = variant
    arn: str = sm.create_inference_component(**request)["InferenceComponentArn"]
    return arn


@pytest.fixture
def sm(aws: Emulator) -> Any:
    """An endpoint with three components, created in this order: ic-alpha, ic-beta (2 copies x 2 GPUs), ic-gamma."""
    client = _sm()
    _endpoint(client)
    _component(client, "ic-alpha")
    _component(client, "ic-beta", copies=2, accelerators=2)
    _component(client, "ic-gamma")
    return client


def _names(page: dict[str, Any]) -> list[str]:
    return [c["InferenceComponentName"] for c in page["InferenceComponents"]]


def _error(err: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    error = err.value.response["Error"]
    return str(error["Code"]), str(error["Message"])


# --- create and describe -------------------------------------------------------------------------------------------


def test_describe_has_every_field_of_the_model(sm: Any) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    arn = _component(sm, "ic-delta", copies=2, accelerators=2)
    assert arn == f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/ic-delta"

    described = sm.describe_inference_component(InferenceComponentName="ic-delta")
    described.pop("ResponseMetadata")
    created, modified = described.pop("CreationTime"), described.pop("LastModifiedTime")
    assert described == {
        "InferenceComponentName": "ic-delta",
        "InferenceComponentArn": arn,
        "EndpointName": ENDPOINT,
        "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{ENDPOINT}",
        "VariantName": VARIANT,
        "Specification": {
            "ModelName": "mistral",
            "Container": {
                "DeployedImage": {"SpecifiedImage": IMAGE},  # the summary shape has no Image
                "ArtifactUrl": ARTIFACTS,
                "Environment": {"OPTION_MODEL_ID": "ic-delta"},
            },
            "ComputeResourceRequirements": {
                "NumberOfAcceleratorDevicesRequired": 2.0,
                "NumberOfCpuCoresRequired": 2.0,
                "MinMemoryRequiredInMb": 8192,
            },
            "StartupParameters": {
                "ModelDataDownloadTimeoutInSeconds": 900,
                "ContainerStartupHealthCheckTimeoutInSeconds": 600,
            },
        },
        "RuntimeConfig": {"DesiredCopyCount": 2, "CurrentCopyCount": 2},
        "InferenceComponentStatus": "InService",
    }
    assert isinstance(created, datetime) and created.tzinfo is not None  # a timestamp, parsed by botocore
    assert before <= created <= datetime.now(UTC) + timedelta(seconds=5)
    assert modified == created


def test_a_component_without_variant_name_goes_on_the_only_variant(aws: Emulator) -> None:
    sm = _sm()
    _endpoint(sm)
    _component(sm, "ic-solo", variant=None)
    assert sm.describe_inference_component(InferenceComponentName="ic-solo")["VariantName"] == VARIANT


def test_the_endpoint_config_of_an_inference_component_endpoint_names_no_model(sm: Any) -> None:
    (variant,) = sm.describe_endpoint_config(EndpointConfigName=f"{ENDPOINT}-cfg")["ProductionVariants"]
    assert variant["InstanceType"] == "ml.g5.12xlarge" and "ModelName" not in variant
    with pytest.raises(ClientError) as err:  # a variant that names a model still needs it to exist
        sm.create_endpoint_config(
            EndpointConfigName="bad",
            ProductionVariants=[
                {"VariantName": "v", "ModelName": "missing", "InstanceType": "ml.g5.xlarge", "InitialInstanceCount": 1}
            ],
        )
    assert _error(err)[0] == "ValidationException" and "Could not find model" in _error(err)[1]


# --- errors ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("operation", ["describe_inference_component", "delete_inference_component"])
def test_an_unknown_component_could_not_be_found(sm: Any, operation: str) -> None:
    with pytest.raises(ClientError) as err:
        getattr(sm, operation)(InferenceComponentName="ic-nope")
    assert _error(err) == ("ValidationException", 'Could not find inference component "ic-nope".')
    assert "could not find" in _error(err)[1].lower()  # what the collector takes as gone


def test_update_of_an_unknown_component_could_not_be_found(sm: Any) -> None:
    with pytest.raises(ClientError) as err:
        sm.update_inference_component_runtime_config(
            InferenceComponentName="ic-nope", DesiredRuntimeConfig={"CopyCount": 1}
        )
    assert _error(err) == ("ValidationException", 'Could not find inference component "ic-nope".')


def test_a_duplicate_name_is_refused(sm: Any) -> None:
    with pytest.raises(ClientError) as err:
        _component(sm, "ic-alpha", copies=3)
    code, message = _error(err)
    assert code == "ValidationException"
    assert f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/ic-alpha" in message
    runtime = sm.describe_inference_component(InferenceComponentName="ic-alpha")["RuntimeConfig"]
    assert runtime["DesiredCopyCount"] == 1  # the first one is untouched


def test_an_unknown_endpoint_is_refused(sm: Any) -> None:
    with pytest.raises(ClientError) as err:
        _component(sm, "ic-lost", endpoint="no-such-endpoint")
    code, message = _error(err)
    assert code == "ValidationException"
    assert message.startswith("Could not find endpoint") and "endpoint/no-such-endpoint" in message
    assert _names(sm.list_inference_components()) == ["ic-gamma", "ic-beta", "ic-alpha"]


def test_an_unknown_variant_is_refused(sm: Any) -> None:
    with pytest.raises(ClientError) as err:
        _component(sm, "ic-lost", variant="Canary")
    code, message = _error(err)
    assert code == "ValidationException" and "Canary" in message


def test_variant_name_is_needed_on_an_endpoint_with_several_variants(aws: Emulator) -> None:
    sm = _sm()
    _endpoint(sm, "ab-ep", variants=("A", "B"))
    with pytest.raises(ClientError) as err:
        _component(sm, "ic-where", endpoint="ab-ep", variant=None)
    assert _error(err)[0] == "ValidationException"
    _component(sm, "ic-b", endpoint="ab-ep", variant="B")
    assert sm.describe_inference_component(InferenceComponentName="ic-b")["VariantName"] == "B"


# --- list --------------------------------------------------------------------------------------------------------


def test_list_is_newest_first_and_filters(sm: Any) -> None:
    _endpoint(sm, "other-ep", variants=("Blue",))
    _component(sm, "ic-other", endpoint="other-ep", variant="Blue")

    everything = sm.list_inference_components()
    assert _names(everything) == ["ic-other", "ic-gamma", "ic-beta", "ic-alpha"]  # CreationTime, Descending
    assert "NextToken" not in everything
    summary = everything["InferenceComponents"][1]
    assert set(summary) == {
        "CreationTime",
        "InferenceComponentArn",
        "InferenceComponentName",
        "EndpointArn",
        "EndpointName",
        "VariantName",
        "InferenceComponentStatus",
        "LastModifiedTime",
    }
    assert summary["InferenceComponentArn"] == f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/ic-gamma"
    assert summary["EndpointArn"] == f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{ENDPOINT}"
    assert (summary["VariantName"], summary["InferenceComponentStatus"]) == (VARIANT, "InService")

    assert _names(sm.list_inference_components(EndpointNameEquals=ENDPOINT)) == ["ic-gamma", "ic-beta", "ic-alpha"]
    assert _names(sm.list_inference_components(EndpointNameEquals="other-ep")) == ["ic-other"]
    assert _names(sm.list_inference_components(EndpointNameEquals="no-such-endpoint")) == []
    assert _names(sm.list_inference_components(VariantNameEquals="Blue")) == ["ic-other"]
    assert _names(sm.list_inference_components(NameContains="-be")) == ["ic-beta"]
    assert len(_names(sm.list_inference_components(StatusEquals="InService"))) == 4
    assert _names(sm.list_inference_components(StatusEquals="Failed")) == []
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert _names(sm.list_inference_components(CreationTimeAfter=later)) == []
    assert len(_names(sm.list_inference_components(CreationTimeBefore=later))) == 4


def test_list_sorts_by_name_and_creation_time(sm: Any) -> None:
    by_name = sm.list_inference_components(SortBy="Name", SortOrder="Ascending")
    assert _names(by_name) == ["ic-alpha", "ic-beta", "ic-gamma"]
    assert _names(sm.list_inference_components(SortBy="Name")) == ["ic-gamma", "ic-beta", "ic-alpha"]
    oldest_first = sm.list_inference_components(SortBy="CreationTime", SortOrder="Ascending")
    assert _names(oldest_first) == ["ic-alpha", "ic-beta", "ic-gamma"]
    with pytest.raises(ClientError) as err:
        sm.list_inference_components(SortBy="Size")
    assert _error(err)[0] == "ValidationException"


def test_the_paginator_walks_every_page(sm: Any) -> None:
    pages = list(
        sm.get_paginator("list_inference_components").paginate(
            EndpointNameEquals=ENDPOINT, PaginationConfig={"PageSize": 2}
        )
    )
    assert [_names(page) for page in pages] == [["ic-gamma", "ic-beta"], ["ic-alpha"]]
    assert "NextToken" in pages[0] and "NextToken" not in pages[1]

    first = sm.list_inference_components(MaxResults=2, SortBy="Name", SortOrder="Ascending")
    assert _names(first) == ["ic-alpha", "ic-beta"]
    sm.delete_inference_component(InferenceComponentName="ic-beta")  # the token does not depend on it
    rest = sm.list_inference_components(
        MaxResults=2, SortBy="Name", SortOrder="Ascending", NextToken=first["NextToken"]
    )
    assert _names(rest) == ["ic-gamma"] and "NextToken" not in rest


def test_max_results_defaults_to_10_and_is_at_most_100(aws: Emulator) -> None:
    sm = _sm()
    _endpoint(sm)
    for i in range(12):
        _component(sm, f"ic-{i:02d}")
    first = sm.list_inference_components()
    assert len(first["InferenceComponents"]) == 10 and "NextToken" in first
    assert len(sm.list_inference_components(NextToken=first["NextToken"])["InferenceComponents"]) == 2
    assert len(sm.list_inference_components(MaxResults=100)["InferenceComponents"]) == 12
    with pytest.raises(ClientError) as err:
        sm.list_inference_components(MaxResults=101)
    assert _error(err)[0] == "ValidationException" and "maxResults" in _error(err)[1]


def test_a_token_is_for_the_request_that_made_it(sm: Any) -> None:
    token = sm.list_inference_components(MaxResults=1)["NextToken"]
    for bad in ({"NextToken": token, "EndpointNameEquals": "other"}, {"NextToken": "not-a-token"}):
        with pytest.raises(ClientError) as err:
            sm.list_inference_components(MaxResults=1, **bad)
        assert _error(err)[0] == "ValidationException"


# --- delete, update, reset ---------------------------------------------------------------------------------------


def test_delete_then_list(sm: Any) -> None:
    sm.delete_inference_component(InferenceComponentName="ic-beta")
    assert _names(sm.list_inference_components(EndpointNameEquals=ENDPOINT)) == ["ic-gamma", "ic-alpha"]
    with pytest.raises(ClientError) as err:
        sm.describe_inference_component(InferenceComponentName="ic-beta")
    assert _error(err) == ("ValidationException", 'Could not find inference component "ic-beta".')
    _component(sm, "ic-beta", copies=4)  # the name is free again
    assert sm.describe_inference_component(InferenceComponentName="ic-beta")["RuntimeConfig"]["DesiredCopyCount"] == 4


def test_update_runtime_config_sets_both_copy_counts(sm: Any) -> None:
    before = sm.describe_inference_component(InferenceComponentName="ic-beta")
    answer = sm.update_inference_component_runtime_config(
        InferenceComponentName="ic-beta", DesiredRuntimeConfig={"CopyCount": 5}
    )
    assert answer["InferenceComponentArn"] == before["InferenceComponentArn"]
    after = sm.describe_inference_component(InferenceComponentName="ic-beta")
    assert after["RuntimeConfig"] == {"DesiredCopyCount": 5, "CurrentCopyCount": 5}
    assert after["CreationTime"] == before["CreationTime"]
    assert after["LastModifiedTime"] >= before["LastModifiedTime"]
    assert after["Specification"] == before["Specification"]
    sm.update_inference_component_runtime_config(
        InferenceComponentName="ic-beta", DesiredRuntimeConfig={"CopyCount": 0}
    )
    zero = sm.describe_inference_component(InferenceComponentName="ic-beta")["RuntimeConfig"]
    assert zero == {"DesiredCopyCount": 0, "CurrentCopyCount": 0}  # scaled to zero


def test_state_is_per_region_and_reset_empties_it(sm: Any, aws: Emulator) -> None:
    assert _names(_sm("eu-west-1").list_inference_components()) == []
    with pytest.raises(ClientError):
        _sm("eu-west-1").describe_inference_component(InferenceComponentName="ic-alpha")
    aws.reset()
    assert _names(sm.list_inference_components()) == []
    with pytest.raises(ClientError) as err:
        sm.describe_inference_component(InferenceComponentName="ic-alpha")
    assert _error(err)[0] == "ValidationException"


# --- faults and the collector ------------------------------------------------------------------------------------


def test_an_injected_access_denied_on_list(sm: Any, aws: Emulator) -> None:
    aws.inject_fault("sagemaker", "ListInferenceComponents", "AccessDeniedException", "not allowed")
    with pytest.raises(ClientError) as err:
        sm.list_inference_components(EndpointNameEquals=ENDPOINT)
    assert _error(err) == ("AccessDeniedException", "not allowed")
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert aws.fault_hits() == {"sagemaker.ListInferenceComponents": 1}
    assert len(_names(sm.list_inference_components(EndpointNameEquals=ENDPOINT))) == 3  # only once


def test_the_collector_reads_the_components(sm: Any) -> None:
    inventory = collect_sagemaker_endpoints(
        AwsContext(session=boto3.Session(), region=REGION), ACCOUNT, datetime.now(UTC)
    )
    assert inventory.problems == []
    resource, *placed = inventory.resources  # the endpoint, then each component as a resource of its own
    assert sorted(r.name for r in placed) == [f"{ENDPOINT}/ic-alpha", f"{ENDPOINT}/ic-beta", f"{ENDPOINT}/ic-gamma"]
    components = {c.name: c for c in resource.details.inference_components}  # type: ignore[union-attr]
    assert sorted(components) == ["ic-alpha", "ic-beta", "ic-gamma"]
    beta = components["ic-beta"]
    assert (beta.copies, beta.accelerators_required, beta.image, beta.artifact_url) == (2, 2, IMAGE, ARTIFACTS)
    assert beta.variant_name == VARIANT and beta.model_name == "mistral"
