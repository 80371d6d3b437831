"""SageMaker inference components for moto, which has none (5.2.5): Create, Describe, List, Delete and
UpdateInferenceComponentRuntimeConfig, shaped as botocore's service model says.

``install()`` adds one method per action to ``moto.sagemaker.responses.SageMakerResponse`` (moto dispatches a
JSON-protocol action to the snake_case method of the response class) and lets an endpoint config's provisioned
variant name no model, as an endpoint for inference components does (moto 5.2.5 fails such a config with a
``KeyError``). The components live on moto's SageMaker backend of the calling account and region, so
``/moto-api/reset``, which re-initialises every backend, empties them. Responses are serialized by moto from the
operation's output shape, datetimes included (naive UTC, as moto's own SageMaker models keep them).

What the emulator does not do: a component is ``InService`` from the start (no Creating/Updating), the current
copy count is always the desired one, tags are kept but not served by ListTags, and a component's model is not
checked. Without ``VariantName`` a component goes on the endpoint's variant when it has exactly one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import utcnow
from moto.sagemaker.exceptions import ValidationError
from moto.sagemaker.models import SageMakerModelBackend, sagemaker_backends
from moto.sagemaker.responses import SageMakerResponse

_STATE_ATTRIBUTE = "chipwise_inference_components"  # on the moto backend: reset re-initialises it away
_SORT_KEYS = ("Name", "CreationTime", "Status")
_SORT_ORDERS = ("Ascending", "Descending")
_STATUSES = ("InService", "Creating", "Updating", "Failed", "Deleting")
_MAX_RESULTS_DEFAULT = 10
_MAX_RESULTS_LIMIT = 100

_lock = threading.Lock()  # the server is threaded: create's check-then-insert, update and delete under one lock
_installed = False
_original_validate_production_variants: Callable[[SageMakerModelBackend, list[dict[str, Any]]], None] | None = None


@dataclass
class InferenceComponent:
    """One inference component as the emulator keeps it (the request's specification, as given)."""

    name: str
    arn: str
    endpoint_name: str
    endpoint_arn: str
    variant_name: str
    specification: dict[str, Any] | None
    specifications: list[dict[str, Any]] | None
    desired_copy_count: int | None
    current_copy_count: int | None
    creation_time: datetime
    last_modified_time: datetime
    status: str = "InService"
    tags: list[dict[str, str]] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """DescribeInferenceComponentOutput."""
        out: dict[str, Any] = {
            "InferenceComponentName": self.name,
            "InferenceComponentArn": self.arn,
            "EndpointName": self.endpoint_name,
            "EndpointArn": self.endpoint_arn,
            "VariantName": self.variant_name,
        }
        if self.specification is not None:
            out["Specification"] = _specification_summary(self.specification)
        if self.specifications is not None:
            out["Specifications"] = [_specification_summary(s) for s in self.specifications]
        if self.desired_copy_count is not None:
            out["RuntimeConfig"] = {
                "DesiredCopyCount": self.desired_copy_count,
                "CurrentCopyCount": self.current_copy_count,
            }
        out.update(
            CreationTime=self.creation_time,
            LastModifiedTime=self.last_modified_time,
            InferenceComponentStatus=self.status,
        )
        return out

    def summary(self) -> dict[str, Any]:
        """InferenceComponentSummary (ListInferenceComponents)."""
        return {
            "CreationTime": self.creation_time,
            "InferenceComponentArn": self.arn,
            "InferenceComponentName": self.name,
            "EndpointArn": self.endpoint_arn,
            "EndpointName": self.endpoint_name,
            "VariantName": self.variant_name,
            "InferenceComponentStatus": self.status,
            "LastModifiedTime": self.last_modified_time,
        }


def _specification_summary(spec: dict[str, Any]) -> dict[str, Any]:
    """InferenceComponentSpecification -> InferenceComponentSpecificationSummary: the container's ``Image``
    becomes ``DeployedImage.SpecifiedImage`` (the summary has no ``Image``); everything else is as given."""
    out = {key: value for key, value in spec.items() if key != "Container"}
    container = spec.get("Container")
    if isinstance(container, dict):
        summary = {key: value for key, value in container.items() if key != "Image"}
        if container.get("Image") is not None:
            summary["DeployedImage"] = {"SpecifiedImage": container["Image"]}
        out["Container"] = summary
    return out


def components_of(backend: SageMakerModelBackend) -> dict[str, InferenceComponent]:
    """The inference components of one moto SageMaker backend (account and region), by name."""
    state: dict[str, InferenceComponent] | None = getattr(backend, _STATE_ATTRIBUTE, None)
    if state is None:
        state = {}
        setattr(backend, _STATE_ATTRIBUTE, state)
    return state


def _backend(response: SageMakerResponse) -> SageMakerModelBackend:
    backend: SageMakerModelBackend = sagemaker_backends[response.current_account][response.region]
    return backend


def _arn(response: SageMakerResponse, name: str) -> str:
    return f"arn:aws:sagemaker:{response.region}:{response.current_account}:inference-component/{name}"


def _not_found(name: str) -> ValidationError:
    return ValidationError(message=f'Could not find inference component "{name}".')


def _get(response: SageMakerResponse, name: str) -> InferenceComponent:
    component = components_of(_backend(response)).get(name)
    if component is None:
        raise _not_found(name)
    return component


# --- the actions (methods of SageMakerResponse) ------------------------------------------------------------------


def create_inference_component(self: SageMakerResponse) -> ActionResult:
    name = str(self._get_param("InferenceComponentName"))
    endpoint_name = str(self._get_param("EndpointName"))
    variant_name: str | None = self._get_param("VariantName")
    specification: dict[str, Any] | None = self._get_param("Specification")
    specifications: list[dict[str, Any]] | None = self._get_param("Specifications")
    runtime_config: dict[str, Any] | None = self._get_param("RuntimeConfig")
    tags: list[dict[str, str]] = self._get_param("Tags") or []

    backend = _backend(self)
    endpoint = backend.endpoints.get(endpoint_name)
    if endpoint is None:
        endpoint_arn = f"arn:aws:sagemaker:{self.region}:{self.current_account}:endpoint/{endpoint_name}"
        raise ValidationError(message=f"Could not find endpoint '{endpoint_arn}'.")
    variants = [str(v["VariantName"]) for v in endpoint.production_variants]
    if variant_name is None:
        if len(variants) != 1:
            raise ValidationError(
                message=f"VariantName is required: endpoint '{endpoint.arn}' has {len(variants)} variants."
            )
        variant_name = variants[0]
    elif variant_name not in variants:
        raise ValidationError(message=f"Could not find variant '{variant_name}' on endpoint '{endpoint.arn}'.")
    if specification is None and not specifications:
        raise ValidationError(message="Specification is required.")
    if runtime_config is not None and runtime_config.get("CopyCount") is None:
        raise ValidationError(message="RuntimeConfig.CopyCount is required.")
    copies = None if runtime_config is None else int(runtime_config["CopyCount"])

    arn = _arn(self, name)
    now = utcnow()
    with _lock:
        components = components_of(backend)
        if name in components:
            raise ValidationError(message=f'Cannot create already existing inference component "{arn}".')
        components[name] = InferenceComponent(
            name=name,
            arn=arn,
            endpoint_name=endpoint_name,
            endpoint_arn=str(endpoint.arn),
            variant_name=variant_name,
            specification=specification,
            specifications=specifications,
            desired_copy_count=copies,
            current_copy_count=copies,
            creation_time=now,
            last_modified_time=now,
            tags=list(tags),
        )
    return ActionResult({"InferenceComponentArn": arn})


def describe_inference_component(self: SageMakerResponse) -> ActionResult:
    return ActionResult(_get(self, str(self._get_param("InferenceComponentName"))).describe())


def delete_inference_component(self: SageMakerResponse) -> ActionResult:
    name = str(self._get_param("InferenceComponentName"))
    with _lock:
        if components_of(_backend(self)).pop(name, None) is None:
            raise _not_found(name)
    return EmptyResult()


def update_inference_component_runtime_config(self: SageMakerResponse) -> ActionResult:
    name = str(self._get_param("InferenceComponentName"))
    desired: dict[str, Any] = self._get_param("DesiredRuntimeConfig") or {}
    if desired.get("CopyCount") is None:
        raise ValidationError(message="DesiredRuntimeConfig.CopyCount is required.")
    copies = int(desired["CopyCount"])
    with _lock:
        component = _get(self, name)
        component.desired_copy_count = component.current_copy_count = copies
        component.last_modified_time = utcnow()
    return ActionResult({"InferenceComponentArn": component.arn})


def list_inference_components(self: SageMakerResponse) -> ActionResult:
    sort_by = str(self._get_param("SortBy") or "CreationTime")
    sort_order = str(self._get_param("SortOrder") or "Descending")
    status = self._get_param("StatusEquals")
    _check_enum(sort_by, "sortBy", _SORT_KEYS)
    _check_enum(sort_order, "sortOrder", _SORT_ORDERS)
    if status is not None:
        _check_enum(str(status), "statusEquals", _STATUSES)
    max_results = self._get_param("MaxResults")
    limit = _MAX_RESULTS_DEFAULT if max_results is None else int(max_results)
    if not 1 <= limit <= _MAX_RESULTS_LIMIT:
        bound = f"less than or equal to {_MAX_RESULTS_LIMIT}" if limit > 1 else "greater than or equal to 1"
        raise ValidationError(
            message=f"1 validation error detected: Value '{limit}' at 'maxResults' failed to satisfy constraint: "
            f"Member must have value {bound}"
        )
    filters: dict[str, Any] = {
        "EndpointNameEquals": self._get_param("EndpointNameEquals"),
        "VariantNameEquals": self._get_param("VariantNameEquals"),
        "StatusEquals": status,
        "NameContains": self._get_param("NameContains"),
        "CreationTimeBefore": _naive_utc(self._get_param("CreationTimeBefore")),
        "CreationTimeAfter": _naive_utc(self._get_param("CreationTimeAfter")),
        "LastModifiedTimeBefore": _naive_utc(self._get_param("LastModifiedTimeBefore")),
        "LastModifiedTimeAfter": _naive_utc(self._get_param("LastModifiedTimeAfter")),
        "SortBy": sort_by,
        "SortOrder": sort_order,
    }
    fingerprint = hashlib.sha256(json.dumps(filters, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def sort_key(component: InferenceComponent) -> tuple[str, ...]:
        if sort_by == "Name":
            return (component.name,)
        if sort_by == "Status":
            return (component.status, component.name)
        return (component.creation_time.strftime("%Y-%m-%dT%H:%M:%S.%f"), component.name)

    descending = sort_order == "Descending"
    with _lock:
        matching = [c for c in components_of(_backend(self)).values() if _matches(c, filters)]
    ordered = sorted(matching, key=sort_key, reverse=descending)
    token = self._get_param("NextToken")
    if token:
        after = _decode_token(str(token), fingerprint)
        ordered = [c for c in ordered if (sort_key(c) < after if descending else sort_key(c) > after)]
    page = ordered[:limit]
    result: dict[str, Any] = {"InferenceComponents": [c.summary() for c in page]}
    if len(ordered) > limit:
        result["NextToken"] = _encode_token(sort_key(page[-1]), fingerprint)
    return ActionResult(result)


def _check_enum(value: str, attribute: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValidationError(
            message=f"1 validation error detected: Value '{value}' at '{attribute}' failed to satisfy constraint: "
            f"Member must satisfy enum value set: [{', '.join(allowed)}]"
        )


def _naive_utc(value: Any) -> datetime | None:
    """A timestamp parameter as naive UTC (moto's clock); None when absent."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, int | float):
        moment = datetime.fromtimestamp(value, UTC)
    else:
        moment = datetime.fromisoformat(str(value))
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _matches(component: InferenceComponent, filters: dict[str, Any]) -> bool:
    if filters["EndpointNameEquals"] is not None and component.endpoint_name != filters["EndpointNameEquals"]:
        return False
    if filters["VariantNameEquals"] is not None and component.variant_name != filters["VariantNameEquals"]:
        return False
    if filters["StatusEquals"] is not None and component.status != filters["StatusEquals"]:
        return False
    if filters["NameContains"] and str(filters["NameContains"]) not in component.name:
        return False
    created, modified = component.creation_time, component.last_modified_time
    if filters["CreationTimeBefore"] is not None and not created < filters["CreationTimeBefore"]:
        return False
    if filters["CreationTimeAfter"] is not None and not created > filters["CreationTimeAfter"]:
        return False
    if filters["LastModifiedTimeBefore"] is not None and not modified < filters["LastModifiedTimeBefore"]:
        return False
    return filters["LastModifiedTimeAfter"] is None or modified > filters["LastModifiedTimeAfter"]


def _encode_token(after: tuple[str, ...], fingerprint: str) -> str:
    """The page token: the sort key of the last component served (so a deletion between pages skips nothing)
    and the request's filters, which the next request must repeat."""
    payload = json.dumps({"after": list(after), "filters": fingerprint}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode()


def _decode_token(token: str, fingerprint: str) -> tuple[str, ...]:
    try:
        payload = json.loads(base64.urlsafe_b64decode(token.encode()))
        after = tuple(str(part) for part in payload["after"])
        same_request = payload["filters"] == fingerprint
    except (ValueError, TypeError, KeyError, binascii.Error):
        raise ValidationError(message="Invalid pagination token.") from None
    if not same_request:
        raise ValidationError(message="The pagination token does not match the request's parameters.")
    return after


# --- installing ----------------------------------------------------------------------------------------------------


def _validate_production_variants(self: SageMakerModelBackend, production_variants: list[dict[str, Any]]) -> None:
    """moto's check that each variant's model exists, for the variants that name one (an endpoint for inference
    components names none: its components do)."""
    assert _original_validate_production_variants is not None
    _original_validate_production_variants(self, [v for v in production_variants if v.get("ModelName")])


_ACTIONS: dict[str, Callable[[SageMakerResponse], ActionResult]] = {
    "create_inference_component": create_inference_component,
    "describe_inference_component": describe_inference_component,
    "list_inference_components": list_inference_components,
    "delete_inference_component": delete_inference_component,
    "update_inference_component_runtime_config": update_inference_component_runtime_config,
}


def install() -> None:
    """Add the actions to ``SageMakerResponse`` and allow model-less variants (idempotent, process-wide)."""
    global _installed, _original_validate_production_variants
    with _lock:
        if _installed:
            return
        for action, method in _ACTIONS.items():
            setattr(SageMakerResponse, action, method)
        _original_validate_production_variants = SageMakerModelBackend.validate_production_variants
        SageMakerModelBackend.validate_production_variants = _validate_production_variants  # type: ignore[method-assign]
        _installed = True
