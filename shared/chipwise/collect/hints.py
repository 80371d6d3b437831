"""Workload hints: what runs on a resource, read from its tags, container image and environment.

Pure functions (no I/O). Tags win over guesses: a ``chipwise:*`` tag is the owner's word; images and
environment variables (TGI, vLLM, DJL, neuronx images, ``HF_MODEL_ID``) fill the gaps. ``sources`` says where
each hint came from, so a rule can weigh a tag above a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from chipwise.catalog import get_model_families
from chipwise.models.resources import WorkloadHints

Workload = Literal["training", "inference"]

TAG_MODEL_FAMILY = "chipwise:model-family"
TAG_WORKLOAD = "chipwise:workload"
TAG_CUSTOM_CUDA = "chipwise:custom-cuda"
TAG_OWNER = "chipwise:owner"

_OWNER_TAGS = (TAG_OWNER, "owner", "Owner", "OWNER")
_MODEL_ID_VARIABLES = ("HF_MODEL_ID", "HF_MODEL", "MODEL_ID", "OPTION_MODEL_ID", "MODEL_NAME")
_TRUE = frozenset({"true", "yes", "1", "y", "on"})
_WORKLOAD_WORDS: dict[str, Workload] = {
    "training": "training",
    "train": "training",
    "fine-tuning": "training",
    "finetuning": "training",
    "inference": "inference",
    "serving": "inference",
    "serve": "inference",
}
# Serving stacks recognisable in an image name, most specific first.
_SERVING_STACKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tgi", re.compile(r"(?<![a-z])tgi(?![a-z])|text-generation-inference")),
    ("vllm", re.compile(r"vllm")),
    ("djl", re.compile(r"(?<![a-z])(djl|lmi)(?![a-z])")),
    ("triton", re.compile(r"triton")),
    ("hf-inference", re.compile(r"huggingface-pytorch-inference")),
)
_TRAINING_IMAGE = re.compile(r"(?<![a-z])training(?![a-z])|-train(?![a-z])|trainer")
_INFERENCE_IMAGE = re.compile(r"(?<![a-z])inference(?![a-z])")
_NEURON_IMAGE = re.compile(r"neuron")
# Image names that say "hand-written kernels": flash-attention builds, custom CUDA / Triton kernels.
_CUSTOM_KERNEL_IMAGE = re.compile(r"flash-?attn|custom-?cuda|cuda-?kernels?|custom-?kernels?")


def workload_hints(
    *,
    tags: Mapping[str, str],
    kind: str,
    image: str | None = None,
    environment: Mapping[str, str] | None = None,
) -> WorkloadHints:
    """What runs on a resource, with where each hint came from."""
    environment = environment or {}
    sources: dict[str, str] = {}
    hf_model_id = _model_id(environment)
    image_lower = (image or "").lower()
    return WorkloadHints(
        model_family=_model_family(tags, hf_model_id, image_lower, sources),
        workload=_workload(tags, kind, image_lower, sources),
        custom_cuda=_custom_cuda(tags, image_lower, sources),
        owner=_owner(tags),
        image=image,
        hf_model_id=hf_model_id,
        serving_stack=_serving_stack(image_lower),
        neuron_image=bool(_NEURON_IMAGE.search(image_lower)),
        sources=sources,
    )


def _tag(tags: Mapping[str, str], key: str) -> str | None:
    value = tags.get(key)
    return value.strip() if value and value.strip() else None


def _model_id(environment: Mapping[str, str]) -> str | None:
    for name in _MODEL_ID_VARIABLES:
        value = environment.get(name)
        if value and value.strip():
            return value.strip()
    return None


def _model_family(tags: Mapping[str, str], hf_model_id: str | None, image: str, sources: dict[str, str]) -> str | None:
    families = get_model_families()
    tagged = _tag(tags, TAG_MODEL_FAMILY)
    if tagged:
        sources["model_family"] = "tag"
        known = families.get(tagged) or families.match(tagged)
        return known.id if known else tagged.lower()
    for source, text in (("hf_model_id", hf_model_id), ("image", image)):
        if text:
            found = families.match(text)
            if found is not None:
                sources["model_family"] = source
                return found.id
    return None


def _workload(tags: Mapping[str, str], kind: str, image: str, sources: dict[str, str]) -> Workload | None:
    tagged = _tag(tags, TAG_WORKLOAD)
    if tagged and tagged.lower() in _WORKLOAD_WORDS:
        sources["workload"] = "tag"
        return _WORKLOAD_WORDS[tagged.lower()]
    if kind == "sagemaker_training_job":
        sources["workload"] = "kind"
        return "training"
    if kind == "sagemaker_endpoint":
        sources["workload"] = "kind"
        return "inference"
    if image:
        if _TRAINING_IMAGE.search(image):
            sources["workload"] = "image"
            return "training"
        if _INFERENCE_IMAGE.search(image) or _serving_stack(image):
            sources["workload"] = "image"
            return "inference"
    return None


def _custom_cuda(tags: Mapping[str, str], image: str, sources: dict[str, str]) -> bool:
    tagged = _tag(tags, TAG_CUSTOM_CUDA)
    if tagged is not None:
        sources["custom_cuda"] = "tag"
        return tagged.lower() in _TRUE
    if image and _CUSTOM_KERNEL_IMAGE.search(image):
        sources["custom_cuda"] = "image"
        return True
    return False


def _owner(tags: Mapping[str, str]) -> str | None:
    for key in _OWNER_TAGS:
        value = _tag(tags, key)
        if value:
            return value
    return None


def _serving_stack(image: str) -> str | None:
    for name, pattern in _SERVING_STACKS:
        if pattern.search(image):
            return name
    return None
