"""The public intake: API Gateway HTTP API requests answered by the Powertools resolver in
:mod:`chipwise.intake.api` (form, submissions, plans, signed links; ``chipwise serve`` mounts the same resolver),
and the daily retention job (the advisory digest queued, what is past retention deleted: the intake's own
tables, then the store's history through :func:`chipwise.pipeline.retention.prune_store`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

from chipwise.intake.api import app
from chipwise.intake.service import run_retention
from chipwise.models.events import IntakeEvent
from chipwise.pipeline.retention import prune_store


def resolve_request(request: APIGatewayProxyEventV2Model, context: Any) -> dict[str, Any]:
    """One HTTP API (payload 2.0) request, routed by the resolver; the response API Gateway expects."""
    event = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(app.resolve(event, context))


def answer_intake(event: IntakeEvent, context: Any) -> dict[str, Any]:
    """The ``intake`` Lambda: the retention schedule's job, or an HTTP request."""
    if isinstance(event.root, APIGatewayProxyEventV2Model):
        return resolve_request(event.root, context)
    return {**asdict(run_retention()), "store_rows_deleted": prune_store()}
