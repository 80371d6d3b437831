"""Job definitions: Neuron devices from the catalog, GPUs for the baseline, a content hash for idempotency."""

from __future__ import annotations

import pytest
from benchmark_factories import parameters

from chipwise.benchmarks.jobs import JobLabels, job_definition_spec, job_name
from chipwise.catalog import get_catalog
from chipwise.models.benchmark import BenchmarkParameters
from chipwise.settings import Settings


@pytest.mark.parametrize(
    ("instance_type", "devices"),
    [("inf2.xlarge", 1), ("inf2.24xlarge", 6), ("inf2.48xlarge", 12), ("trn1.2xlarge", 1), ("trn1.32xlarge", 16)],
)
def test_every_neuron_device_of_the_type_is_mapped(instance_type: str, devices: int) -> None:
    # Given a Neuron instance type from the catalog
    instance = get_catalog().require(instance_type)
    # When its job definition is built
    spec = job_definition_spec(instance, "target", Settings())
    # Then /dev/neuron0..N-1 are host devices, read-write, and memlock is unlimited
    mapped = spec.body["containerProperties"]["linuxParameters"]["devices"]
    assert [d["hostPath"] for d in mapped] == [f"/dev/neuron{i}" for i in range(devices)]
    assert all(d["containerPath"] == d["hostPath"] and "WRITE" in d["permissions"] for d in mapped)
    assert spec.body["containerProperties"]["ulimits"] == [{"name": "memlock", "softLimit": -1, "hardLimit": -1}]
    assert spec.name == f"chipwise-bench-{instance_type.replace('.', '-')}"


def test_the_container_is_sized_to_the_instance_and_runs_the_entrypoint() -> None:
    # Given inf2.48xlarge (192 vCPU, 768 GiB) and a configured image, role and timeout
    role = "arn:aws:iam::123456789012:role/bench"
    settings = Settings(benchmark_image="img:1", benchmark_job_role_arn=role, benchmark_timeout_minutes=90)
    spec = job_definition_spec(get_catalog().require("inf2.48xlarge"), "target", settings)
    container = spec.body["containerProperties"]
    # Then
    assert {r["type"]: r["value"] for r in container["resourceRequirements"]} == {"VCPU": "192", "MEMORY": "668467"}
    assert container["image"] == "img:1"
    assert container["jobRoleArn"] == role
    assert container["command"] == BenchmarkParameters.command_arguments()
    assert spec.body["timeout"] == {"attemptDurationSeconds": 5400}
    assert spec.body["retryStrategy"] == {"attempts": 1}
    assert set(spec.body["parameters"]) == set(BenchmarkParameters.model_fields)


def test_a_gpu_baseline_asks_for_every_gpu_and_maps_no_neuron_device() -> None:
    # When the baseline job definition for a 4-GPU g5.12xlarge is built
    spec = job_definition_spec(
        get_catalog().require("g5.12xlarge"), "gpu_baseline", Settings(benchmark_gpu_image="gpu:1")
    )
    # Then Batch is asked for the 4 GPUs, the GPU image runs and no Neuron device is mapped
    container = spec.body["containerProperties"]
    assert {"type": "GPU", "value": "4"} in container["resourceRequirements"]
    assert "linuxParameters" not in container
    assert container["image"] == "gpu:1"
    assert spec.name == "chipwise-baseline-g5-12xlarge"


def test_sagemaker_types_are_not_batch_hosts() -> None:
    # When a job definition is asked for an ml. type, Then it is refused (Batch runs on EC2 hosts)
    with pytest.raises(ValueError, match="EC2 types"):
        job_definition_spec(get_catalog().require("ml.inf2.xlarge"), "target", Settings())


def test_the_digest_changes_only_with_the_content() -> None:
    # Given the same instance type and settings twice, then another image
    instance = get_catalog().require("inf2.xlarge")
    first = job_definition_spec(instance, "target", Settings())
    # Then the digest (the tag compared before registering) only changes with the content
    assert job_definition_spec(instance, "target", Settings()).digest == first.digest
    assert job_definition_spec(instance, "target", Settings(benchmark_image="other:2")).digest != first.digest


def test_tags_link_the_job_to_its_run_and_finding() -> None:
    # Given a second attempt for finding f-42
    params = parameters(finding_id="f-42")
    # When its tags are built
    tags = JobLabels(rule_id="gpu_inference_portable", account_id="123456789012", attempt=2).tags(params)
    # Then they name the run, finding, rule, account, role, attempt and target
    assert tags == {
        "chipwise:run-id": params.run_id,
        "chipwise:finding-id": "f-42",
        "chipwise:rule-id": "gpu_inference_portable",
        "chipwise:account-id": "123456789012",
        "chipwise:role": "target",
        "chipwise:attempt": "2",
        "chipwise:target": "ml.inf2.xlarge",
    }
    assert job_name(params) == f"chipwise-inf2-xlarge-{params.run_id[:8]}"
