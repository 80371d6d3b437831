"""Instance facts from EC2 itself: one ``InstanceTypes[]`` entry of DescribeInstanceTypes read into the catalog's
shape (platform, accelerator, counts, memory), never guessed from the type's name, and never priced."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from chipwise.models.common import Platform

__all__ = ["facts_from_ec2", "platform_from_ec2"]

# GPU manufacturers as DescribeInstanceTypes names them (GpuInfo.Gpus[].Manufacturer).
_GPU_MAKERS: dict[str, Platform] = {"nvidia": "nvidia", "amd": "amd", "habana": "gaudi", "intel habana": "gaudi"}
MIB_PER_GIB = Decimal(1024)


def _accelerator_names(info: Mapping[str, Any]) -> list[tuple[str, str, int, Decimal]]:
    """(kind, manufacturer+name, count, memory GiB per device) of every accelerator EC2 lists for the type."""
    found: list[tuple[str, str, int, Decimal]] = []
    for device in (info.get("NeuronInfo") or {}).get("NeuronDevices") or []:
        memory = Decimal((device.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB
        found.append(("neuron", str(device.get("Name") or ""), int(device.get("Count") or 0), memory))
    for gpu in (info.get("GpuInfo") or {}).get("Gpus") or []:
        memory = Decimal((gpu.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB
        label = f"{gpu.get('Manufacturer') or ''}|{gpu.get('Name') or ''}"
        found.append(("gpu", label, int(gpu.get("Count") or 0), memory))
    for accelerator in (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []:
        memory = Decimal((accelerator.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB
        label = f"{accelerator.get('Manufacturer') or ''}|{accelerator.get('Name') or ''}"
        found.append(("inference", label, int(accelerator.get("Count") or 0), memory))
    return found


def platform_from_ec2(info: Mapping[str, Any]) -> Platform:
    """The platform of an instance type from one ``InstanceTypes[]`` entry of DescribeInstanceTypes: Neuron devices
    named Inferentia/Trainium; GPUs by manufacturer (NVIDIA, AMD, Habana -> gaudi); other accelerators (Qualcomm
    AI100 on dl2q, ...) -> ``other``; none -> ``cpu``. Never from the type's name."""
    accelerators = _accelerator_names(info)
    for kind, label, _, _ in accelerators:
        lowered = label.lower()
        if kind == "neuron" or "inferentia" in lowered or "trainium" in lowered:
            if "trainium" in lowered:
                return "trainium"
            if "inferentia" in lowered:
                return "inferentia"
    for kind, label, _, _ in accelerators:
        if kind == "gpu":
            maker, _, name = label.lower().partition("|")
            if "gaudi" in name:
                return "gaudi"
            return _GPU_MAKERS.get(maker.strip(), "other")
    return "other" if accelerators else "cpu"


def facts_from_ec2(info: Mapping[str, Any]) -> dict[str, Any]:
    """Catalog-shaped facts (``accelerator``, counts, memory) of a type from DescribeInstanceTypes, with no price:
    the price of a type the shipped catalog lacks is unknown until a quote or a catalog refresh."""
    platform = platform_from_ec2(info)
    accelerators = _accelerator_names(info)
    neuron = [a for a in accelerators if a[0] == "neuron"]
    chosen = neuron or [a for a in accelerators if a[0] == "gpu"] or accelerators
    count = sum(a[2] for a in chosen)
    memory = sum((a[3] * a[2] for a in chosen), Decimal(0))
    cores = sum(
        int((d.get("CoreInfo") or {}).get("Count") or 0) * int(d.get("Count") or 0)
        for d in (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    )
    name = chosen[0][1].split("|")[-1] if chosen else None
    return {
        "platform": platform,
        "accelerator": name or None,
        "accelerator_count": count,
        "neuron_cores": cores,
        "neuron_devices": sum(a[2] for a in neuron),
        "accelerator_memory_gib": str(memory.normalize()) if memory else "0",
        "vcpu": (info.get("VCpuInfo") or {}).get("DefaultVCpus"),
        "memory_gib": str((Decimal((info.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / MIB_PER_GIB).normalize()),
        "price_usd_per_hour": None,
        "price_source": None,
        "price_note": "not in the shipped catalog: no public price on file, quote needed",
        "facts_source": "ec2:DescribeInstanceTypes",
    }
