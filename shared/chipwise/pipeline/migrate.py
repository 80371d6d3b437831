"""The deploy-time migration: the ``SchemaMigration`` custom resource's request in, the schema brought to this
code's head (``chipwise db upgrade`` does the same with :func:`chipwise.store.session.upgrade`), the answer sent to
CloudFormation and returned."""

from __future__ import annotations

import json
from typing import Any, Literal

from chipwise.models.events import SchemaMigrationRequest
from chipwise.observability import logger
from chipwise.store.migrate import (
    PHYSICAL_RESOURCE_ID,
    REASON_MAX_CHARS,
    CustomResourceResponse,
    migrate_to_head,
    send_response,
)


def answer_schema_migration(event: SchemaMigrationRequest, remaining_seconds: float) -> dict[str, Any]:
    """Create and Update migrate, Delete changes nothing; every outcome is answered, a failure as FAILED with its
    reason (an unanswered custom resource keeps the deploy waiting for an hour)."""
    request = event.root
    physical_id = getattr(request, "physical_resource_id", None) or PHYSICAL_RESOURCE_ID
    status: Literal["SUCCESS", "FAILED"] = "SUCCESS"
    data: dict[str, str] = {}
    if request.request_type == "Delete":
        reason = "nothing to do: the schema and its data stay with the database"
    else:
        try:
            reason, data = migrate_to_head(remaining_seconds)
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
