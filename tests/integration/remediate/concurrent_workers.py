"""What each of two processes does in the one-at-a-time tests: an apply through the pipeline (the CLI's door), or a
Slack press through the approvals function's resolver. Run in a spawned process (its own imports, engines and AWS
clients); the result goes back on a queue."""

from __future__ import annotations

import os
from typing import Any


def apply_in_process(env: dict[str, str], url: str, finding_id: str, actor: str, barrier: Any, results: Any) -> None:
    os.environ.update(env)
    from chipwise.errors import ChipwiseError
    from chipwise.pipeline.apply import apply_finding

    barrier.wait(timeout=60)
    try:
        outcome = apply_finding(finding_id, actor=actor, source="cli", database_url=url, approved=True)
    except ChipwiseError as exc:
        results.put((actor, type(exc).__name__, str(exc)))
    else:
        results.put((actor, outcome.status, outcome.message))


def press_in_process(env: dict[str, str], event: dict[str, Any], actor: str, barrier: Any, results: Any) -> None:
    os.environ.update(env)
    import json

    from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

    from chipwise.pipeline import slack_actions

    request = APIGatewayProxyEventV2Model.model_validate(event)
    barrier.wait(timeout=60)
    answer = slack_actions.handle(request, None)
    results.put((actor, str(answer["statusCode"]), json.loads(answer["body"])["text"]))
