"""Issue 13, item 6: platforms come from EC2's own DescribeInstanceTypes facts, never from a name prefix. The
``InstanceTypes[]`` entries below follow the EC2 API reference shapes (GpuInfo, NeuronInfo,
InferenceAcceleratorInfo, MemoryInfo, VCpuInfo)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import get_catalog
from chipwise.catalog.ec2_facts import facts_from_ec2, platform_from_ec2
from chipwise.collect.inventory.instance_types import type_facts


def _gpu(maker: str, name: str, count: int, mib: int) -> dict[str, Any]:
    return {"Gpus": [{"Name": name, "Manufacturer": maker, "Count": count, "MemoryInfo": {"SizeInMiB": mib}}]}


DL1 = {
    "InstanceType": "dl1.24xlarge",
    "VCpuInfo": {"DefaultVCpus": 96},
    "MemoryInfo": {"SizeInMiB": 786432},
    "GpuInfo": {**_gpu("Habana", "Gaudi HL-205", 8, 32768), "TotalGpuMemoryInMiB": 262144},
}
G4AD = {
    "InstanceType": "g4ad.xlarge",
    "VCpuInfo": {"DefaultVCpus": 4},
    "MemoryInfo": {"SizeInMiB": 16384},
    "GpuInfo": {**_gpu("AMD", "Radeon Pro V520", 1, 8192), "TotalGpuMemoryInMiB": 8192},
}
DL2Q = {
    "InstanceType": "dl2q.24xlarge",
    "VCpuInfo": {"DefaultVCpus": 96},
    "MemoryInfo": {"SizeInMiB": 786432},
    "InferenceAcceleratorInfo": {
        "Accelerators": [
            {"Count": 8, "Name": "Qualcomm AI100", "Manufacturer": "Qualcomm", "MemoryInfo": {"SizeInMiB": 16000}}
        ],
        "TotalInferenceMemoryInMiB": 128000,
    },
}
G4DN = {
    "InstanceType": "g4dn.12xlarge",
    "VCpuInfo": {"DefaultVCpus": 48},
    "MemoryInfo": {"SizeInMiB": 196608},
    "GpuInfo": {**_gpu("NVIDIA", "T4", 4, 16384), "TotalGpuMemoryInMiB": 65536},
}
P3DN = {
    "InstanceType": "p3dn.24xlarge",
    "VCpuInfo": {"DefaultVCpus": 96},
    "MemoryInfo": {"SizeInMiB": 786432},
    "GpuInfo": {**_gpu("NVIDIA", "V100", 8, 32768), "TotalGpuMemoryInMiB": 262144},
}
INF1 = {
    "InstanceType": "inf1.6xlarge",
    "VCpuInfo": {"DefaultVCpus": 24},
    "MemoryInfo": {"SizeInMiB": 49152},
    "InferenceAcceleratorInfo": {"Accelerators": [{"Count": 4, "Name": "Inferentia", "Manufacturer": "AWS"}]},
}
TRN2 = {
    "InstanceType": "trn2.48xlarge",
    "VCpuInfo": {"DefaultVCpus": 192},
    "MemoryInfo": {"SizeInMiB": 2097152},
    "NeuronInfo": {
        "NeuronDevices": [
            {
                "Count": 16,
                "Name": "Trainium2",
                "CoreInfo": {"Count": 8, "Version": 3},
                "MemoryInfo": {"SizeInMiB": 98304},
            }
        ],
        "TotalNeuronDeviceMemoryInMiB": 1572864,
    },
}
M7I = {"InstanceType": "m7i.large", "VCpuInfo": {"DefaultVCpus": 2}, "MemoryInfo": {"SizeInMiB": 8192}}


@pytest.mark.parametrize(
    ("info", "platform"),
    [
        (DL1, "gaudi"),
        (G4AD, "amd"),
        (DL2Q, "other"),
        (G4DN, "nvidia"),
        (P3DN, "nvidia"),
        (INF1, "inferentia"),
        (TRN2, "trainium"),
        (M7I, "cpu"),
    ],
)
def test_platform_from_describe_instance_types(info: dict[str, Any], platform: str) -> None:
    assert platform_from_ec2(info) == platform


def test_facts_fill_in_a_type_the_catalog_lacks_and_stay_unpriced() -> None:
    # Given a type the shipped catalog has no row for (a future g9 size), which EC2 describes as a g4dn.12xlarge
    assert get_catalog().get("g9.12xlarge") is None
    typ = type_facts("ml.g9.12xlarge", {"g9.12xlarge": {**G4DN, "InstanceType": "g9.12xlarge"}})
    # Then EC2's facts answer: 4 x T4, 64 GiB of GPU memory, 48 vCPU, 192 GiB, and no price (quote needed)
    assert (typ.platform, typ.unknown) == ("nvidia", True)
    facts = typ.facts
    assert (facts["accelerator"], facts["accelerator_count"], facts["accelerator_memory_gib"]) == ("T4", 4, "64")
    assert (facts["vcpu"], facts["memory_gib"], facts["price_usd_per_hour"]) == (48, "192", None)
    assert "quote needed" in facts["price_note"]
    assert facts["facts_source"] == "ec2:DescribeInstanceTypes"


def test_trainium2_neuron_cores_and_memory_come_from_neuron_info() -> None:
    facts = facts_from_ec2(TRN2)
    # 16 devices x 8 cores; 16 x 96 GiB
    assert (facts["neuron_devices"], facts["neuron_cores"], facts["accelerator_memory_gib"]) == (16, 128, "1536")


@pytest.mark.parametrize(
    ("instance_type", "platform"),
    [("dl1.2xlarge", "gaudi"), ("g4ad.32xlarge", "amd"), ("dl2q.2xlarge", "other"), ("inf9.xlarge", "other")],
)
def test_without_ec2_facts_no_prefix_guess(instance_type: str, platform: str) -> None:
    # Given sizes the catalog has no row for and no DescribeInstanceTypes answer: the platform of the family's rows
    # (dl1, g4ad, dl2q) or "other" -- never a guess from "dl" or "inf" (dl1 is Habana Gaudi, dl2q Qualcomm, g4ad AMD)
    typ = type_facts(instance_type)
    assert (typ.platform, typ.unknown) == (platform, True)
