"""What the rules read off a profile to size a target: how big the model is and how much accelerator it keeps busy.
Which instance (and how many) then holds it most cheaply is the one sizing engine's
(:mod:`chipwise.analyse.sizing`, shared with the planner; :class:`~chipwise.rules.migration.MigrationRule` calls it).

Pure functions of a profile, the catalog and the economics figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from chipwise.analyse.profiles import ResourceProfile
from chipwise.analyse.sizing import GIB, replica_memory_gib
from chipwise.catalog import Catalog, ModelFamilies, ModelFamily
from chipwise.models.common import Confidence

HUNDRED = Decimal(100)
# "8b", "70B", "1.5b" and mixture-of-experts "8x7b" in a model id (not "v0.3" or "bge-base").
_PARAMS = re.compile(r"(?<![a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)b(?![a-z0-9])")


@dataclass(frozen=True)
class ModelSize:
    """The memory the model needs on the accelerator, and where the figure comes from."""

    memory_gib: Decimal
    basis: str  # neuron_device_memory | gpu_memory | model_id | model_family
    params_billion: Decimal | None = None


def params_from_model_id(model_id: str) -> Decimal | None:
    """Parameters (billions) written in a model id: ``meta-llama/Llama-3.1-8B-Instruct`` -> 8."""
    name = model_id.strip().lower().rsplit("/", 1)[-1]
    match = _PARAMS.search(name)
    if match is None:
        return None
    experts = Decimal(match.group(1)) if match.group(1) else Decimal(1)
    return experts * Decimal(match.group(2))


def model_family(profile: ResourceProfile, families: ModelFamilies) -> ModelFamily | None:
    """The family the collector recognised (tag, model id, image); failing that, one named in the resource's own
    name (``llama3-8b-finetune``), a weaker sign (see :func:`family_guessed`)."""
    if profile.hints.model_family:
        return families.get(profile.hints.model_family)
    return families.match(profile.name)


def family_guessed(profile: ResourceProfile) -> bool:
    """Whether the family rests on a guess (the image or the resource name) rather than a tag or a model id."""
    return not profile.hints.model_family or profile.hints.sources.get("model_family") == "image"


# Tags that name the model a resource serves or trains (their values are read like a model id).
MODEL_TAGS = ("chipwise:model", "model", "model_id", "model-id", "Model", "ModelId")


def stated_params(profile: ResourceProfile, families: ModelFamilies) -> tuple[Decimal | None, str | None]:
    """Parameters in billions that something about the resource states: the model id ("...-70B-..." or a
    well-known id such as ``bert-base-uncased``), the JumpStart model id (``meta-textgeneration-llama-3-8b``), the
    model artifact's path (``.../llama-3-8b/...``), a model tag, else the resource's own name ("llama3-8b-...")."""
    for text, basis in _statements(profile):
        found = params_from_model_id(text) or families.known_params(text)
        if found is not None:
            return found, basis
        if basis == "model_id":
            return None, None  # a model id that states no size: a tag or the name is not a better source
    return None, None


def _statements(profile: ResourceProfile) -> list[tuple[str, str]]:
    """Every text that may state the model's size, most specific first, with its basis."""
    hints = profile.hints
    texts = [(hints.hf_model_id, "model_id"), (hints.jumpstart_model_id, "jumpstart_model_id")]
    paths = [hints.model_artifact, *hints.rejected_model_ids.values()]
    texts += [(segment, "model_artifact") for path in paths for segment in path_segments(path)]
    texts += [(profile.tags.get(key), "tag") for key in MODEL_TAGS]
    texts.append((profile.name, "resource_name"))
    return [(text, basis) for text, basis in texts if text]


def path_segments(path: str | None) -> list[str]:
    """The folders and file name of an S3 URI or a path, deepest first, without the bucket or a file extension:
    ``s3://b/meta-textgeneration/meta-textgeneration-llama-3-8b/artifacts/`` -> the model's folder among them."""
    if not path:
        return []
    key = path.split("://", 1)[1].split("/", 1)[-1] if "://" in path else path
    parts = [p.split(".tar")[0] for p in key.split("/") if p]
    return list(reversed(parts))


def model_params(profile: ResourceProfile, families: ModelFamilies) -> tuple[Decimal | None, str | None]:
    """Parameters in billions as stated (:func:`stated_params`), else the family's typical size (basis
    ``model_family``: good enough to describe a workload, never to size a target)."""
    stated = stated_params(profile, families)
    if stated[0] is not None:
        return stated
    family = model_family(profile, families)
    if family is not None and family.typical_params_billion is not None:
        return family.typical_params_billion, "model_family"
    return None, None


def observed_neuron_memory_gib(profile: ResourceProfile) -> Decimal | None:
    """Peak Neuron device memory used by one instance (GiB)."""
    memory = profile.signals.neuron_memory_bytes
    if memory is None or memory.maximum <= 0:
        return None
    return Decimal(str(memory.maximum)) / GIB


def model_size(
    profile: ResourceProfile,
    families: ModelFamilies,
    catalog: Catalog,
    bytes_per_parameter: Decimal,
) -> ModelSize | None:
    """Accelerator memory the model needs on one instance, only from evidence: the Neuron device memory as
    observed (what the compiled model really takes), else the parameters the model id, a model tag or the
    resource's name states x bytes per parameter. None otherwise: a family's typical size or the GPU memory a
    server reserved up front (vLLM takes most of it) never sizes a target, so no saving is claimed on a guess.
    """
    observed = observed_neuron_memory_gib(profile)
    params, source = stated_params(profile, families)
    if observed is not None:
        return ModelSize(observed, "neuron_device_memory", params)
    if params is not None and source is not None:
        return ModelSize(replica_memory_gib(params, bytes_per_parameter, Decimal(1)), source, params)
    return None


def busy_neuron_cores(profile: ResourceProfile, catalog: Catalog) -> tuple[Decimal, str] | None:
    """NeuronCores kept busy at the 95th percentile across all instances: cores in use x p95 utilisation.

    The mean over the cores in use is used when published; otherwise the busiest core stands for all of them
    (an overestimate, so a smaller target is never proposed on a guess)."""
    signals = profile.signals
    util = signals.neuron_util_avg or signals.neuron_util
    facts = catalog.get(profile.instance_type) if profile.instance_type else None
    if util is None or facts is None:
        return None
    cores = signals.neuron_cores_in_use or facts.neuron_cores
    basis = "mean_of_cores_in_use" if signals.neuron_util_avg is not None else "busiest_core"
    busy = Decimal(cores) * Decimal(max(1, profile.instance_count)) * Decimal(str(util.p95)) / HUNDRED
    return busy, basis


def rate_confidence(profile: ResourceProfile, confidence: Confidence) -> Confidence:
    """A catalog price (no Cost Explorer figure for the type) costs a level of confidence."""
    if profile.cost.rate_source == "cost_explorer" or confidence == "low":
        return confidence
    return "medium" if confidence == "high" else "low"
