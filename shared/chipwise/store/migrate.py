"""The deploy-time migration: the ``SchemaMigration`` custom resource of iac/template.yaml, handled by the
``migrate`` function through :func:`chipwise.pipeline.migrate.answer_schema_migration`.

CloudFormation sends Create on the first deploy and Update whenever the layer (so the code and its migrations) or
the database changes. Either brings the schema to this code's head under the migration lock and answers SUCCESS
with the revision; any error answers FAILED with the reason, which fails the deploy (CloudFormation then rolls
the stack back). Delete changes nothing: the schema and its data stay with the database. CloudFormation waits
for the answer, a PUT of the documented JSON body to the request's presigned ``ResponseURL``.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chipwise.errors import UpstreamError
from chipwise.observability import logger
from chipwise.settings import get_settings
from chipwise.store.schema import schema_status
from chipwise.store.session import upgrade

PHYSICAL_RESOURCE_ID = "chipwise-schema"
REASON_MAX_CHARS = 1000  # the whole answer must stay under CloudFormation's 4 KB
LOCK_MARGIN_SECONDS = 60.0  # left to answer after waiting for another migration's lock
SEND_ATTEMPTS = 3


class CustomResourceResponse(BaseModel):
    """The body CloudFormation reads from the response URL."""

    model_config = ConfigDict(defer_build=True, populate_by_name=True)

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


def migrate_to_head(remaining_seconds: float) -> tuple[str, dict[str, str]]:
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
