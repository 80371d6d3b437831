"""Roll back a finding's apply in force: the one door `chipwise findings rollback` uses. It holds the finding as an
apply does (:func:`chipwise.pipeline.apply.run_held`): a rollback never runs beside an apply of the same finding."""

from __future__ import annotations

from typing import Unpack

from chipwise.pipeline.apply import Acting, acting_on, resolve, run_held
from chipwise.remediate.runner import RemediationOutcome, rollback_held


def rollback_finding(finding_ref: str, *, actor: str, source: str, **acting: Unpack[Acting]) -> RemediationOutcome:
    """Undo the apply in force of ``finding_ref`` (id or prefix) as ``actor``. Raises NotFound/InvalidInput."""
    url, when, aws_for = acting_on(acting)
    finding_id = resolve(finding_ref, url)
    return run_held(
        url,
        finding_id,
        "rollback",
        actor,
        source,
        when,
        lambda session: rollback_held(session, aws_for, finding_id, actor=actor, source=source, now=when),
    )
