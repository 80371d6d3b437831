"""Apply a finding's mechanical step: the one door `chipwise findings apply` and Slack's Apply button both use.

One apply (or rollback) of a finding at a time: the apply first takes the finding (its row locked, ``FOR UPDATE
NOWAIT`` on PostgreSQL, and an in-flight record committed: :meth:`RemediationRepository.claim`), then re-checks,
acts and writes the audit row in a second transaction that holds the row lock and removes the in-flight record with
the audit row. A second caller meanwhile is told "being applied by X since T". A holder that died half-way (its
record older than :data:`HOLD_MINUTES`) is taken over.

A dry run reads the store only (no AWS call, no credentials): the calls as the scan saw the resource.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypedDict, TypeVar, Unpack

from chipwise.aws import aws_context
from chipwise.clock import utcnow
from chipwise.remediate.runner import (
    AwsFactory,
    RemediationOutcome,
    apply_held,
    check_appliable,
    preview_finding,
    remediation_context,
)
from chipwise.settings import get_settings
from chipwise.store import Session, session_scope
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.repositories.remediations import RemediationRepository

__all__ = ["Acting", "RemediationOutcome", "acting_on", "apply_finding", "cli_operator", "resolve", "run_held"]

HOLD_MINUTES = 15  # an in-flight record older than this is a caller that died: taken over
T = TypeVar("T")


class Acting(TypedDict, total=False):
    """Where and when an apply or rollback acts: the store (the configured one when None), the moment (now when
    None) and how AWS is reached for the finding's account (its member role)."""

    database_url: str | None
    now: datetime | None
    aws_for: AwsFactory


def acting_on(acting: Acting) -> tuple[str, datetime, AwsFactory]:
    """The store's URL, the moment and the AWS factory ``acting`` gives, with their defaults."""
    url = acting.get("database_url") or get_settings().database_url
    return url, acting.get("now") or utcnow(), acting.get("aws_for", remediation_context)


def apply_finding(
    finding_ref: str,
    *,
    actor: str,
    source: str,
    dry_run: bool = False,
    approved: bool = False,
    **acting: Unpack[Acting],
) -> RemediationOutcome:
    """Apply the finding ``finding_ref`` (its id, or six or more of its first characters) as ``actor`` from
    ``source`` (cli|slack): a dry run (the store only), an unapproved run (the live re-check, nothing changed) or,
    ``approved``, the change. Raises NotFound/InvalidInput (FindingBusy when another caller holds it)."""
    url, when, aws_for = acting_on(acting)
    if dry_run:
        with session_scope(url) as session:
            return preview_finding(session, finding_ref)
    with session_scope(url) as session:
        finding_id = check_appliable(session, finding_ref).id
    return run_held(
        url,
        finding_id,
        "apply",
        actor,
        source,
        when,
        lambda session: apply_held(
            session, aws_for, finding_id, actor=actor, source=source, now=when, approved=approved
        ),
    )


def run_held(
    url: str,
    finding_id: str,
    operation: str,
    actor: str,
    source: str,
    now: datetime,
    work: Callable[[Session], T],
) -> T:
    """Take the finding (committed), do ``work`` in a transaction that releases it with what it records, and
    release it on its own if ``work`` raises."""
    with session_scope(url) as session:
        stale = now - timedelta(minutes=HOLD_MINUTES)
        RemediationRepository(session).claim(finding_id, operation, actor, source, now, stale_before=stale)
    try:
        with session_scope(url) as session:
            result = work(session)
            RemediationRepository(session).release(finding_id)
            return result
    except BaseException:
        with session_scope(url) as session:
            RemediationRepository(session).release(finding_id)
        raise


def resolve(finding_ref: str, database_url: str | None = None) -> str:
    """The full id of a finding given by id or prefix."""
    with session_scope(database_url or get_settings().database_url) as session:
        return FindingRepository(session).get(finding_ref).id


def cli_operator(region: str | None = None) -> str:
    """Who acts from the CLI: the AWS caller identity's ARN (STS GetCallerIdentity, the credentials in use)."""
    identity = aws_context(region or get_settings().region).client("sts").get_caller_identity()
    return str(identity["Arn"])
