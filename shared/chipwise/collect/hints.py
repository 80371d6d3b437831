"""Workload hints: what runs on a resource, read from its tags, container image and environment.

Pure functions (no I/O). Tags win over guesses: a ``chipwise:*`` tag is the owner's word; images and
environment variables (TGI, vLLM, DJL, neuronx images, ``HF_MODEL_ID``) fill the gaps. ``sources`` says where
each hint came from, so a rule can weigh a tag above a guess.

Model identity is read from every place AWS keeps it, first answer wins: the container environment of TGI, LMI/DJL,
vLLM and Hugging Face containers (``HF_MODEL_ID``, ``OPTION_MODEL_ID``, ``MODEL_ID`` ...), inference components'
containers, training ``HyperParameters`` (``model_id``, ``model_name_or_path`` ...; the SageMaker SDK stores them
JSON-encoded), the JumpStart model id (the ``sagemaker-sdk:jumpstart-model-id`` tag, or the JumpStart S3 layout),
and the S3 model path (``ModelDataUrl`` / ``ModelDataSource``). A filesystem path (``/opt/ml/model``: the model
was copied from S3 into the container) or an S3 URI is never taken as a model id; it is kept in
``rejected_model_ids`` with the variable that held it. ``sources["model_id"]`` names the field that answered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from chipwise.catalog import get_model_families
from chipwise.models.common import SERVING_KINDS
from chipwise.models.resources import WorkloadHints

Workload = Literal["training", "inference"]

TAG_MODEL_FAMILY = "chipwise:model-family"
TAG_WORKLOAD = "chipwise:workload"
TAG_CUSTOM_CUDA = "chipwise:custom-cuda"
TAG_OWNER = "chipwise:owner"

_OWNER_TAGS = (TAG_OWNER, "owner", "Owner", "OWNER")
TAG_JUMPSTART_MODEL_ID = "sagemaker-sdk:jumpstart-model-id"
# Container variables that name the model: TGI / HF inference (HF_MODEL_ID), LMI/DJL (OPTION_MODEL_ID, older
# OPTION_S3URL), vLLM containers (SM_VLLM_MODEL), others (MODEL_ID, HF_MODEL, MODEL_NAME); most specific first.
_MODEL_ID_VARIABLES = (
    "HF_MODEL_ID",
    "OPTION_MODEL_ID",
    "SM_VLLM_MODEL",
    "MODEL_ID",
    "HF_MODEL",
    "OPTION_S3URL",
    "MODEL_NAME",
)
# Training hyperparameters that name the base model of a fine-tune.
_MODEL_ID_HYPERPARAMETERS = (
    "model_id",
    "model_name_or_path",
    "model-name-or-path",
    "pretrained_model_name_or_path",
    "model_name",
    "base_model",
)
# A Hugging Face id: ``name`` or ``org/name`` (letters, digits, ``-``, ``_``, ``.``; at most 96 each).
_HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_FILESYSTEM_PATH = re.compile(r"^(?:/|\.{1,2}/|~|file:|[A-Za-z]:[\\/])")
_URI = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_LMI_VLLM_ENTRYPOINT = re.compile(r"vllm", re.IGNORECASE)
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


@dataclass(frozen=True)
class ModelPlace:
    """One container's worth of places a model may be named (a variant's model, an inference component)."""

    environment: Mapping[str, str] = field(default_factory=dict)
    model_data_url: str | None = None
    label: str | None = None  # ``inference_component:<name>``: prefixes the basis


@dataclass
class ModelIdentity:
    """What the resource's configuration says about its model, and which field said it."""

    hf_model_id: str | None = None
    basis: str | None = None
    jumpstart_model_id: str | None = None
    jumpstart_basis: str | None = None
    artifact: str | None = None
    rejected: dict[str, str] = field(default_factory=dict)


def workload_hints(
    *,
    tags: Mapping[str, str],
    kind: str,
    image: str | None = None,
    environment: Mapping[str, str] | None = None,
    model_data_url: str | None = None,
    hyperparameters: Mapping[str, str] | None = None,
    components: Sequence[ModelPlace] = (),
) -> WorkloadHints:
    """What runs on a resource, with where each hint came from."""
    environment = environment or {}
    sources: dict[str, str] = {}
    places = [ModelPlace(environment, model_data_url), *components]
    identity = model_identity(places, hyperparameters or {}, tags)
    if identity.basis:
        sources["model_id"] = identity.basis
    if identity.jumpstart_basis:
        sources["jumpstart_model_id"] = identity.jumpstart_basis
    image_lower = (image or "").lower()
    stack = _serving_stack(image_lower)
    return WorkloadHints(
        model_family=_model_family(tags, identity, image_lower, sources),
        workload=_workload(tags, kind, image_lower, sources),
        custom_cuda=_custom_cuda(tags, image_lower, sources),
        owner=_owner(tags),
        image=image,
        hf_model_id=identity.hf_model_id,
        serving_stack=stack,
        neuron_image=bool(_NEURON_IMAGE.search(image_lower)),
        sources=sources,
        jumpstart_model_id=identity.jumpstart_model_id,
        model_artifact=identity.artifact,
        rejected_model_ids=identity.rejected,
        serving_engine=next((e for e in (serving_engine(stack, p.environment) for p in places) if e is not None), None),
    )


def serving_engine(stack: str | None, environment: Mapping[str, str]) -> str | None:
    """The engine a DJL/LMI container runs when it says so: ``OPTION_ROLLING_BATCH=vllm`` or a vLLM entry point
    (``OPTION_ENTRYPOINT=djl_python.lmi_vllm...``) -> ``vllm``; None when the image name already tells."""
    if stack != "djl":
        return None
    rolling = str(environment.get("OPTION_ROLLING_BATCH", "")).strip().lower()
    entrypoint = str(environment.get("OPTION_ENTRYPOINT", ""))
    if rolling == "vllm" or _LMI_VLLM_ENTRYPOINT.search(entrypoint):
        return "vllm"
    return None


def usable_model_id(value: str | None) -> str | None:
    """``value`` as a Hugging Face model id, or None: a filesystem path (``/opt/ml/model``), a URI (``s3://``) or
    anything that is not ``name`` / ``org/name`` is not a model id."""
    if value is None:
        return None
    text = _unquote(value)
    if not text or _FILESYSTEM_PATH.match(text) or _URI.match(text) or not _HF_ID.match(text):
        return None
    if text in (".", "..") or text.endswith((".tar.gz", ".tar", ".zip")):
        return None
    return text


def _unquote(value: str) -> str:
    """Hyperparameters as the SageMaker SDK stores them are JSON-encoded (``"\"mistralai/Mistral-7B-v0.1\""``)."""
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            decoded = json.loads(text)
        except ValueError:
            return text.strip('"').strip()
        return decoded.strip() if isinstance(decoded, str) else text
    return text


def model_identity(
    places: Sequence[ModelPlace], hyperparameters: Mapping[str, str], tags: Mapping[str, str]
) -> ModelIdentity:
    """The model id, JumpStart id and artifact of a resource, first answer wins (see the module docstring)."""
    found = ModelIdentity()
    for basis, raw in _model_id_candidates(places, hyperparameters):
        usable = usable_model_id(raw) if not basis.endswith("s3_model_path") else None
        if usable is not None:
            if found.hf_model_id is None:
                found.hf_model_id, found.basis = usable, basis
            continue
        text = _unquote(raw)
        if _URI.match(text) and found.artifact is None:
            found.artifact = text
        if not basis.endswith("s3_model_path"):
            found.rejected[basis] = text[:200]
        jumpstart = jumpstart_id_from_path(text)
        if jumpstart and found.jumpstart_model_id is None:
            found.jumpstart_model_id, found.jumpstart_basis = jumpstart, basis
    tagged = _tag(tags, TAG_JUMPSTART_MODEL_ID)
    if tagged:
        found.jumpstart_model_id, found.jumpstart_basis = tagged, "jumpstart_tag"
    return found


def _model_id_candidates(places: Sequence[ModelPlace], hyperparameters: Mapping[str, str]) -> list[tuple[str, str]]:
    """(basis, value) of every place a model id may be written, in the order of precedence: each place's
    environment variables then its model data URL, then the hyperparameters."""
    candidates: list[tuple[str, str]] = []
    for place in places:
        prefix = f"{place.label}:" if place.label else ""
        for name in _MODEL_ID_VARIABLES:
            value = place.environment.get(name)
            if value and value.strip():
                candidates.append((f"{prefix}env:{name}", value))
        if place.model_data_url:
            candidates.append((f"{prefix}s3_model_path", place.model_data_url))
    for name in _MODEL_ID_HYPERPARAMETERS:
        value = hyperparameters.get(name)
        if value and value.strip():
            candidates.append((f"hyperparameter:{name}", value))
    return candidates


def jumpstart_id_from_path(uri: str) -> str | None:
    """The JumpStart model id in a JumpStart S3 path: ``s3://jumpstart-cache-prod-us-east-1/meta-textgeneration/
    meta-textgeneration-llama-3-8b/artifacts/...`` -> ``meta-textgeneration-llama-3-8b`` (the folder named after
    its parent folder). None for any other bucket or layout."""
    match = re.match(r"^s3://(?P<bucket>[^/]+)/(?P<key>.*)$", uri.strip())
    if match is None or not match["bucket"].startswith("jumpstart-"):
        return None
    parts = [p for p in match["key"].split("/") if p]
    for parent, child in pairwise(parts):
        if child.startswith(parent + "-"):
            return child
    return None


def _tag(tags: Mapping[str, str], key: str) -> str | None:
    value = tags.get(key)
    return value.strip() if value and value.strip() else None


def _model_family(tags: Mapping[str, str], identity: ModelIdentity, image: str, sources: dict[str, str]) -> str | None:
    families = get_model_families()
    tagged = _tag(tags, TAG_MODEL_FAMILY)
    if tagged:
        sources["model_family"] = "tag"
        known = families.get(tagged) or families.match(tagged)
        return known.id if known else tagged.lower()
    texts = (
        ("hf_model_id", identity.hf_model_id),
        ("jumpstart_model_id", identity.jumpstart_model_id),
        ("model_artifact", _artifact_key(identity.artifact)),
        ("image", image),
    )
    for source, text in texts:
        if text:
            found = families.match(text)
            if found is not None:
                sources["model_family"] = source
                return found.id
    return None


def _artifact_key(uri: str | None) -> str | None:
    """An S3 URI without its scheme and bucket (a bucket name is no statement about the model)."""
    if not uri:
        return None
    match = re.match(r"^[a-z][a-z0-9+.-]*://[^/]+/(?P<key>.*)$", uri, re.IGNORECASE)
    return match["key"] if match else None


def _workload(tags: Mapping[str, str], kind: str, image: str, sources: dict[str, str]) -> Workload | None:
    tagged = _tag(tags, TAG_WORKLOAD)
    if tagged and tagged.lower() in _WORKLOAD_WORDS:
        sources["workload"] = "tag"
        return _WORKLOAD_WORDS[tagged.lower()]
    if kind == "sagemaker_training_job":
        sources["workload"] = "kind"
        return "training"
    if kind in SERVING_KINDS:
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
