"""Amazon Bedrock Provisioned Throughput for moto, which has none (5.2.5): CreateProvisionedModelThroughput,
GetProvisionedModelThroughput and ListProvisionedModelThroughputs, shaped as botocore's Bedrock service model says
(REST-JSON; moto's catch-all Bedrock route finds the action from the method and path).

A provisioned model is ``InService`` from the start; with a ``commitmentDuration`` (``OneMonth`` or ``SixMonths``)
its ``commitmentExpirationTime`` is its creation plus 31 or 183 days (the emulator's reading of a month). The
``modelId`` is kept as the model ARN (a foundation model id becomes its foundation-model ARN). State lives on
moto's Bedrock backend of the account and region, so ``/moto-api/reset`` empties it. List filters: ``statusEquals``,
``nameContains``, ``modelArnEquals``; no paging beyond ``maxResults``.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from moto.bedrock.models import bedrock_backends
from moto.bedrock.responses import BedrockResponse
from moto.core.utils import utcnow

_STATE_ATTRIBUTE = "chipwise_provisioned_models"
_lock = threading.Lock()
_installed = False
_TERM_DAYS = {"OneMonth": 31, "SixMonths": 183}


@dataclass
class ProvisionedModel:
    name: str
    arn: str
    model_arn: str
    foundation_model_arn: str
    model_units: int
    commitment: str | None
    created: datetime

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "provisionedModelName": self.name,
            "provisionedModelArn": self.arn,
            "modelArn": self.model_arn,
            "desiredModelArn": self.model_arn,
            "foundationModelArn": self.foundation_model_arn,
            "modelUnits": self.model_units,
            "desiredModelUnits": self.model_units,
            "status": "InService",
            "creationTime": _iso(self.created),
            "lastModifiedTime": _iso(self.created),
        }
        if self.commitment:
            out["commitmentDuration"] = self.commitment
            out["commitmentExpirationTime"] = _iso(self.created + timedelta(days=_TERM_DAYS[self.commitment]))
        return out


def _iso(moment: datetime) -> str:
    return moment.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")


def models_of(backend: Any) -> dict[str, ProvisionedModel]:
    state: dict[str, ProvisionedModel] | None = getattr(backend, _STATE_ATTRIBUTE, None)
    if state is None:
        state = {}
        setattr(backend, _STATE_ATTRIBUTE, state)
    return state


def _backend(response: BedrockResponse) -> Any:
    return bedrock_backends[response.current_account][response.region]


def create_provisioned_model_throughput(self: BedrockResponse) -> tuple[int, dict[str, str], str]:
    params = json.loads(self.body or "{}")
    name, model_id, units = params.get("provisionedModelName"), params.get("modelId"), params.get("modelUnits")
    if not name or not model_id or not isinstance(units, int) or units < 1:
        body = {"message": "provisionedModelName, modelId and a positive modelUnits are required"}
        return 400, {"x-amzn-errortype": "ValidationException"}, json.dumps(body)
    commitment = params.get("commitmentDuration")
    if commitment is not None and commitment not in _TERM_DAYS:
        body = {"message": f"commitmentDuration must be one of {sorted(_TERM_DAYS)}"}
        return 400, {"x-amzn-errortype": "ValidationException"}, json.dumps(body)
    prefix = f"arn:aws:bedrock:{self.region}"
    model_arn = model_id if str(model_id).startswith("arn:") else f"{prefix}::foundation-model/{model_id}"
    model = ProvisionedModel(
        name=str(name),
        arn=f"{prefix}:{self.current_account}:provisioned-model/{uuid.uuid4().hex[:12]}",
        model_arn=str(model_arn),
        foundation_model_arn=str(model_arn),
        model_units=units,
        commitment=commitment,
        created=utcnow(),
    )
    with _lock:
        models = models_of(_backend(self))
        if any(m.name == model.name for m in models.values()):
            body = {"message": f"Provisioned model {name} already exists"}
            return 409, {"x-amzn-errortype": "ResourceInUseException"}, json.dumps(body)
        models[model.arn] = model
    return 201, {}, json.dumps({"provisionedModelArn": model.arn})


def get_provisioned_model_throughput(self: BedrockResponse) -> tuple[int, dict[str, str], str]:
    wanted = unquote(self.path.split("/provisioned-model-throughput/", 1)[-1])
    with _lock:
        found = [m for m in models_of(_backend(self)).values() if wanted in (m.arn, m.name)]
    if not found:
        body = {"message": f"Provisioned model {wanted} not found"}
        return 404, {"x-amzn-errortype": "ResourceNotFoundException"}, json.dumps(body)
    return 200, {}, json.dumps(found[0].summary())


def list_provisioned_model_throughputs(self: BedrockResponse) -> tuple[int, dict[str, str], str]:
    params = self._get_params()
    with _lock:
        found = sorted(models_of(_backend(self)).values(), key=lambda m: m.created, reverse=True)
    if params.get("statusEquals") and params["statusEquals"] != "InService":
        found = []
    if params.get("nameContains"):
        found = [m for m in found if str(params["nameContains"]) in m.name]
    if params.get("modelArnEquals"):
        found = [m for m in found if m.model_arn == params["modelArnEquals"]]
    limit = int(params.get("maxResults") or 1000)
    return 200, {}, json.dumps({"provisionedModelSummaries": [m.summary() for m in found[:limit]]})


_ACTIONS = {
    "create_provisioned_model_throughput": create_provisioned_model_throughput,
    "get_provisioned_model_throughput": get_provisioned_model_throughput,
    "list_provisioned_model_throughputs": list_provisioned_model_throughputs,
}


def install() -> None:
    """Add the actions to moto's ``BedrockResponse`` (idempotent, process-wide)."""
    global _installed
    with _lock:
        if _installed:
            return
        for action, method in _ACTIONS.items():
            setattr(BedrockResponse, action, method)
        _installed = True
