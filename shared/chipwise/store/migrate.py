"""The deploy-time migration: the ``SchemaMigration`` custom resource of iac/template.yaml, handled by the
``migrate`` function.

CloudFormation sends Create on the first deploy and Update whenever the layer (so the code and its migrations) or
the database changes. Either brings the schema to this code's head under the migration lock and answers SUCCESS
with the revision; any error answers FAILED with the reason, which fails the deploy (CloudFormation then rolls
the stack back). Delete changes nothing: the schema and its data stay with the database. CloudFormation waits
for the answer, a PUT of the documented JSON body to the request's presigned ``ResponseURL``.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Annotated, Any, Literal

from aws_lambda_powertools.utilities.parser.models import (
    CloudFormationCustomResourceCreateModel,
    CloudFormationCustomResourceDeleteModel,
    CloudFormationCustomResourceUpdateModel,
)
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from chipwise.errors import UpstreamError
from chipwise.observability import logger
from chipwise.settings import get_settings
from chipwise.store.schema import schema_status
from chipwise.store.session import upgrade

PHYSICAL_RESOURCE_ID = "chipwise-schema"
REASON_MAX_CHARS = 1000  # the whole answer must stay under CloudFormation's 4 KB
LOCK_MARGIN_SECONDS = 60.0  # left to answer after waiting for another migration's lock
SEND_ATTEMPTS = 3

CustomResourceRequest = Annotated[
    CloudFormationCustomResourceCreateModel
    | CloudFormationCustomResourceUpdateModel
    | CloudFormationCustomResourceDeleteModel,
    Field(discriminator="request_type"),
]
_REQUEST: TypeAdapter[CustomResourceRequest] = TypeAdapter(CustomResourceRequest)


class CustomResourceResponse(BaseModel):
    """The body CloudFormation reads from the response URL."""

    model_config = ConfigDict(populate_by_name=True)

    status: Literal["SUCCESS", "FAILED"] = Field(alias="Status")
    reason: str = Field(alias="Reason")
    physical_resource_id: str = Field(alias="PhysicalResourceId")
    stack_id: str = Field(alias="StackId")
    request_id: str = Field(alias="RequestId")
    logical_resource_id: str = Field(alias="LogicalResourceId")
    no_echo: bool = Field(False, alias="NoEcho")
    data: dict[str, str] = Field(default_factory=dict, alias="Data")


def send_response(url: str, response: CustomResourceResponse, timeout: float = 30.0) -> None:
    """PUT the answer to the presigned URL (no Content-Type: the URL is signed without one), retried twice."""
    body = response.model_dump_json(by_alias=True).encode()
    request = urllib.request.Request(
        url, data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    for attempt in range(1, SEND_ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                answer.read()
            return
        except (urllib.error.URLError, TimeoutError) as exc:
            logger().warning("custom resource answer not delivered", extra={"attempt": attempt, "error": str(exc)})
            if attempt == SEND_ATTEMPTS:
                raise UpstreamError(f"cannot answer CloudFormation at its response URL: {exc}") from exc
            time.sleep(attempt)


def _migrate(remaining_seconds: float) -> tuple[str, dict[str, str]]:
    """Upgrade to this code's head unless the schema is there (or newer: a rollback); the reason and data."""
    url = get_settings().database_url
    before = schema_status(url)
    if before.state in ("empty", "behind"):
        upgrade(url, lock_timeout=max(remaining_seconds - LOCK_MARGIN_SECONDS, 1.0))
    after = schema_status(url)
    data = {"Revision": after.database or "", "Previous": before.database or ""}
    if after.state == "ahead":
        return f"{after.describe()}: left as it is (migrations only add)", data
    moved = f"from {before.database or 'empty'} to {after.database}" if before.database != after.database else ""
    return f"schema {after.database} {moved}".strip(), data


def handle_schema_migration(event: dict[str, Any], remaining_seconds: float) -> dict[str, Any]:
    """The custom resource's request in, the answer sent to CloudFormation and returned.

    An event that is not a custom resource request raises ValidationError (nothing can be answered; the
    invocation ends in the dead-letter queue). Everything else is answered, a failure as FAILED with its reason.
    """
    request = _REQUEST.validate_python(event)
    physical_id = getattr(request, "physical_resource_id", None) or PHYSICAL_RESOURCE_ID
    status: Literal["SUCCESS", "FAILED"] = "SUCCESS"
    data: dict[str, str] = {}
    if request.request_type == "Delete":
        reason = "nothing to do: the schema and its data stay with the database"
    else:
        try:
            reason, data = _migrate(remaining_seconds)
        except Exception as exc:  # every failure must reach CloudFormation, or the deploy waits for an hour
            logger().exception("schema migration failed")
            status, reason = "FAILED", f"{type(exc).__name__}: {exc}"
    response = CustomResourceResponse(
        status=status,
        reason=reason[:REASON_MAX_CHARS],
        physical_resource_id=physical_id,
        stack_id=request.stack_id,
        request_id=request.request_id,
        logical_resource_id=request.logical_resource_id,
        data=data,
    )
    logger().info("schema migration answered", extra={"status": status, "reason": response.reason, "data": data})
    send_response(str(request.response_url), response)
    answer: dict[str, Any] = json.loads(response.model_dump_json(by_alias=True))
    return answer
