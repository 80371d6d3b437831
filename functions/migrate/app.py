"""Lambda handler for the ``SchemaMigration`` custom resource: on a deploy that changes the layer or the database,
bring the schema to this code's head (under the migration lock) and answer CloudFormation."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from chipwise.observability import logger
from chipwise.store.migrate import handle_schema_migration


@logger().inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle_schema_migration(event, context.get_remaining_time_in_millis() / 1000)
