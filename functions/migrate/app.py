"""Lambda handler for the ``SchemaMigration`` custom resource (parsed with
:class:`chipwise.models.events.SchemaMigrationRequest`): on a deploy that changes the layer or the database, bring
the schema to this code's head (under the migration lock) and answer CloudFormation. An event that is no custom
resource request cannot be answered: it fails the invocation with its reason (then the dead-letter queue)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.edges import parsed_event
from chipwise.models.events import SchemaMigrationRequest
from chipwise.observability import logger
from chipwise.pipeline.migrate import answer_schema_migration


@logger().inject_lambda_context(clear_state=True)
@parsed_event(SchemaMigrationRequest, "a CloudFormation custom resource request", reject=False)
def handler(request: SchemaMigrationRequest, context: LambdaContext) -> dict[str, Any]:
    return answer_schema_migration(request, context.get_remaining_time_in_millis() / 1000)
