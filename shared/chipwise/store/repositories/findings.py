"""Findings and their recommendation history: the lifecycle the rules' drafts go through.

- A finding is identified by (rule_id, resource_arn, resource_variant): evaluating again updates it
  (``last_seen``, figures, evidence) and keeps its id and ``first_seen``.
- A finding the rules no longer produce is ``resolved`` (``resolved_at`` set); if the condition comes back it
  is reopened under the same id. A rule the policy does not enable keeps its findings as they are, except on a
  resource judged on another one (an instance an AWS Batch compute environment launched): every finding there is
  resolved, whatever its rule, so its dollars are counted once, on the resource that carries them; and except on a
  resource the inventory marked gone (state ``gone``: a scan read the listing of its kind in its account and region
  completely and did not find it; a failed listing marks nothing gone): every finding there is resolved, whatever
  its rule, so the ledger counts only what exists.
- ``suppress`` hides a finding until a moment, with a reason; while suppressed it is still updated, and once the
  moment passes the next evaluation reopens it if the condition still holds.
- Each new or re-priced estimate adds a ``recommendations`` row (source ``estimate``), so the history of what was
  recommended and for how much is kept; benchmark measurements add their own rows.
- A benchmark's measurement on a finding (``measured_monthly_savings_usd``, ``evidence["benchmark"]`` and the
  confidence it earned) survives re-evaluation while the recommended target stays the same.

Writes are bulk statements (one read of the unresolved findings and of the resolved ones the drafts reopen, one
INSERT, one UPDATE, one history INSERT), so the statement count does not grow with the number of findings, and the
resolved findings that accumulate with the history are not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Row, Table, Text, and_, bindparam, cast, column, func, insert, select, union_all, update
from sqlalchemy.dialects.postgresql import JSONB

from chipwise.errors import InvalidInput, NotFound
from chipwise.models.findings import FindingDocument, FindingDraft
from chipwise.models.resources import resource_key, split_key
from chipwise.store.repositories.finding_rows import (
    COMPARED,
    OPEN,
    RESOLVED,
    SUPPRESSED,
    Existing,
    draft_key,
    history_row,
    new_row,
    repriced,
    unchanged,
    updated_row,
)
from chipwise.store.repositories.inventory import GONE
from chipwise.store.repositories.records import Repository, record_of
from chipwise.store.tables import Finding, Recommendation, Resource

MIN_ID_PREFIX = 6


@dataclass(frozen=True)
class LifecycleResult:
    new: int
    updated: int
    reopened: int
    resolved: int


@dataclass(frozen=True, slots=True)
class FindingRecord:
    """A stored finding (:mod:`chipwise.store.tables.findings` says what each column holds)."""

    id: str
    account_id: str
    region: str
    rule_id: str
    resource_arn: str
    resource_variant: str
    resource_kind: str
    resource_name: str
    instance_type: str | None
    instance_count: int
    monthly_cost_usd: Decimal
    estimated_monthly_savings_usd: Decimal
    measured_monthly_savings_usd: Decimal | None
    recommendation: dict[str, Any]
    confidence: str
    signals_used: list[Any]
    signals_missing: list[Any]
    effort: str
    break_even_months: float | None
    summary: str
    evidence: dict[str, Any]
    status: str
    first_seen: datetime
    last_seen: datetime
    resolved_at: datetime | None
    suppressed_until: datetime | None
    suppress_reason: str | None
    last_scan_id: str | None

    @property
    def resource_key(self) -> str:
        """Chipwise's id of the finding's resource (:func:`chipwise.models.resources.resource_key`)."""
        return resource_key(self.resource_arn, self.resource_variant)


@dataclass(frozen=True, slots=True)
class NewRecommendation:
    """One pricing of a finding's recommendation, to be stored (its id comes from the store)."""

    finding_id: str
    source: str  # estimate|benchmark
    action: str
    target_platform: str | None
    target_instance_type: str | None
    target_count: int | None
    monthly_cost_usd: Decimal | None
    monthly_savings_usd: Decimal | None
    confidence: str
    withdrawn: bool
    reason: str | None
    benchmark_run_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class RecommendationRecord(NewRecommendation):
    """One pricing of a finding's recommendation as stored: the estimate, then measurements."""

    id: int


def finding_record(row: Finding) -> FindingRecord:
    return record_of(FindingRecord, row)


def recommendation_record(row: Recommendation) -> RecommendationRecord:
    return record_of(RecommendationRecord, row)


@dataclass(frozen=True)
class Prediction:
    """One rule's estimate beside what was measured (a benchmark) or realised (the bill after the fix)."""

    rule_id: str
    at: datetime
    estimated_usd: Decimal
    actual_usd: Decimal
    kind: str  # "measured" | "realised"


class FindingRepository(Repository):
    # --- lifecycle ----------------------------------------------------------------------------------------

    def apply(
        self,
        *,
        account_id: str,
        region: str,
        drafts: Sequence[FindingDraft],
        rule_ids: Iterable[str],
        now: datetime,
        scan_id: str | None = None,
        judged_elsewhere: Iterable[str] = (),
    ) -> LifecycleResult:
        """Upsert ``drafts`` and resolve the account's findings of ``rule_ids`` in ``region`` they no longer
        contain (rules not evaluated keep their findings as they are), and every finding, whatever its rule, on the
        resources of ``judged_elsewhere`` (resource keys no rule runs on because another resource is judged for them:
        an EC2 instance an AWS Batch compute environment launched) that the drafts do not contain: a disabled rule's
        finding there would count its dollars beside the environment's, on a resource whose verdict says it is not
        judged on its own. A finding of a rule not evaluated is resolved too when its resource is gone from the
        inventory (:meth:`_on_gone_resources`): its dollars are no longer spent, and no verdict names it."""
        strays = {(d.account_id, d.region) for d in drafts} - {(account_id, region)}
        if strays:
            raise ValueError(f"drafts for {sorted(strays)} applied to {account_id} {region}")
        existing = self._existing(account_id, region, {draft_key(d) for d in drafts})
        inserts: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        seen_only: list[str] = []  # the same figures, status and evidence: last_seen and last_scan_id only
        history: list[dict[str, Any]] = []
        reopened = 0
        seen: set[tuple[str, str]] = set()
        for draft in drafts:
            key = (draft.rule_id, draft.resource_key)
            seen.add(key)
            before = existing.get(key)
            if before is None:
                row = new_row(draft, now, scan_id)
                inserts.append(row)
                history.append(history_row(row["id"], draft, now))
                continue
            row = updated_row(before, draft, now, scan_id)
            reopened += before.status == RESOLVED
            if unchanged(before, row):
                seen_only.append(before.id)
            else:
                updates.append(row)
            if repriced(before, draft):
                history.append(history_row(before.id, draft, now))
        evaluated = set(rule_ids)
        elsewhere = set(judged_elsewhere)
        stale = [(key, item) for key, item in existing.items() if key not in seen and item.status != RESOLVED]
        # a rule not evaluated keeps its findings, except on a resource judged elsewhere or gone from the inventory
        kept = {item.id for key, item in stale if key[0] not in evaluated and key[1] not in elsewhere}
        gone = self._on_gone_resources(account_id, region) if kept else set()
        resolved = [
            {"id": item.id, "status": RESOLVED, "resolved_at": now}
            for _key, item in stale
            if item.id not in kept or item.id in gone
        ]
        self._write(inserts, updates, resolved, history)
        self._mark_seen(seen_only, now, scan_id)
        return LifecycleResult(
            new=len(inserts), updated=len(updates) + len(seen_only), reopened=reopened, resolved=len(resolved)
        )

    def _existing(
        self, account_id: str, region: str, keys: set[tuple[str, str, str]]
    ) -> dict[tuple[str, str], Existing]:
        """The findings the lifecycle compares with, in one statement whatever the number of drafts: every
        unresolved finding of the account and region (it may be updated or resolved now) and the resolved ones of
        the drafts' (rule, resource, variant) keys (they reopen). The other resolved findings, which accumulate
        with the history, are not read: the keys are one bound parameter (a JSON list the database unpacks), joined
        on the findings' unique (rule_id, resource_arn, resource_variant) index."""
        columns = [getattr(Finding, c) for c in ("rule_id", "resource_arn", "resource_variant", "id", *COMPARED)]
        where = (Finding.account_id == account_id, Finding.region == region)
        stmt: Any = select(*columns).where(*where, Finding.status != RESOLVED)
        if keys:
            sqlite = self.session.get_bind().dialect.name == "sqlite"
            wanted = self._keys(sorted(keys), sqlite)
            # SQLite plans without statistics: the account and status compared as expressions (`|| ''`) leave the
            # unique index as the only one it can use, so it walks the keys and looks each one up (not every
            # resolved finding of the account against every key)
            account = Finding.account_id + "" if sqlite else Finding.account_id
            status = Finding.status + "" if sqlite else Finding.status
            reopenable = (
                select(*columns)
                .join(
                    wanted,
                    and_(
                        Finding.rule_id == wanted.c.r,
                        Finding.resource_arn == wanted.c.a,
                        Finding.resource_variant == wanted.c.v,
                    ),
                )
                .where(account == account_id, Finding.region == region, status == RESOLVED)
            )
            stmt = union_all(stmt, reopenable)
        found: dict[tuple[str, str], Existing] = {}
        for row in self.session.execute(stmt):
            m = row._mapping
            found[(m["rule_id"], resource_key(m["resource_arn"], m["resource_variant"]))] = Existing(
                id=m["id"],
                status=m["status"],
                suppressed_until=m["suppressed_until"],
                suppress_reason=m["suppress_reason"],
                recommendation=m["recommendation"],
                estimated_monthly_savings_usd=m["estimated_monthly_savings_usd"],
                measured_monthly_savings_usd=m["measured_monthly_savings_usd"],
                confidence=m["confidence"],
                evidence=m["evidence"],
                summary=m["summary"],
                stored={c: m[c] for c in COMPARED},
            )
        return found

    def _on_gone_resources(self, account_id: str, region: str) -> set[str]:
        """The ids of the account's unresolved findings in ``region`` whose resource the inventory marked gone, in one
        statement (the findings by account and status, each resource by its unique ``(arn, variant)``). Only a scan
        that read the listing of a kind completely marks its resources gone
        (:meth:`~chipwise.store.repositories.inventory.ResourceRepository.mark_gone`): a listing that failed
        (AccessDenied, throttling past the retries) or a resource listed but not described leaves them as they
        were, so their findings stay as they are."""
        stmt = (
            select(Finding.id)
            .join(Resource, and_(Resource.arn == Finding.resource_arn, Resource.variant == Finding.resource_variant))
            .where(
                Finding.account_id == account_id,
                Finding.region == region,
                Finding.status != RESOLVED,
                Resource.state == GONE,
            )
        )
        return set(self.session.scalars(stmt))

    def _keys(self, keys: Sequence[tuple[str, str, str]], sqlite: bool) -> Any:
        """``keys`` as a table of columns ``r``, ``a``, ``v`` from one bound JSON parameter (SQLite's ``json_each``,
        PostgreSQL's ``jsonb_to_recordset``), so the statement is the same whatever their number."""
        document = json.dumps([{"r": r, "a": a, "v": v} for r, a, v in keys])
        if not sqlite:
            return (
                func.jsonb_to_recordset(cast(bindparam("lifecycle_keys", document, type_=Text), JSONB))
                .table_valued(column("r", Text), column("a", Text), column("v", Text))
                .render_derived(name="wanted", with_types=True)
            )
        each = func.json_each(bindparam("lifecycle_keys", document, type_=Text)).table_valued("value").alias("each")
        return select(
            func.json_extract(each.c.value, "$.r").label("r"),
            func.json_extract(each.c.value, "$.a").label("a"),
            func.json_extract(each.c.value, "$.v").label("v"),
        ).subquery("wanted")

    def _mark_seen(self, ids: list[str], now: datetime, scan_id: str | None) -> None:
        """``last_seen`` (and ``last_scan_id`` when given) of findings the evaluation left as they were."""
        findings: Table = Finding.__table__  # type: ignore[assignment]
        if not ids:
            return
        values: dict[str, Any] = {"last_seen": now} | ({"last_scan_id": scan_id} if scan_id is not None else {})
        # one executemany whatever the number of findings (an IN list would need chunks, one statement each)
        stmt = update(findings).where(findings.c.id == bindparam("seen_id")).values(values)
        self.session.execute(stmt, [{"seen_id": finding_id} for finding_id in ids])

    def _write(
        self,
        inserts: list[dict[str, Any]],
        updates: list[dict[str, Any]],
        resolved: list[dict[str, Any]],
        history: list[dict[str, Any]],
    ) -> None:
        """Core executemany statements on the tables (one per kind of write; the ORM's bulk paths split a batch
        by which values are None, which makes the statement count grow with the rows)."""
        findings: Table = Finding.__table__  # type: ignore[assignment]
        recommendations: Table = Recommendation.__table__  # type: ignore[assignment]
        if inserts:
            self.session.execute(insert(findings), inserts)
        for rows in (updates, resolved):
            if rows:
                columns = [c for c in rows[0] if c != "id"]
                stmt = (
                    update(findings)
                    .where(findings.c.id == bindparam("finding_id"))
                    .values({c: bindparam(c) for c in columns})
                )
                self.session.execute(stmt, [{"finding_id": r["id"], **{c: r[c] for c in columns}} for r in rows])
        if history:
            self.session.execute(insert(recommendations), history)

    # --- reading ------------------------------------------------------------------------------------------

    def find(
        self,
        *,
        account_id: str | None = None,
        region: str | None = None,
        statuses: Iterable[str] = (OPEN,),
        min_savings: Decimal | None = None,
        rule_ids: Iterable[str] | None = None,
    ) -> list[FindingRecord]:
        """Findings, largest estimated saving first (then rule and resource, for a stable order)."""
        stmt = select(Finding).where(Finding.status.in_(list(statuses)))
        if account_id is not None:
            stmt = stmt.where(Finding.account_id == account_id)
        if region is not None:
            stmt = stmt.where(Finding.region == region)
        if min_savings is not None:
            stmt = stmt.where(Finding.estimated_monthly_savings_usd >= min_savings)
        if rule_ids is not None:
            stmt = stmt.where(Finding.rule_id.in_(list(rule_ids)))
        stmt = stmt.order_by(
            Finding.estimated_monthly_savings_usd.desc(), Finding.rule_id, Finding.resource_name, Finding.id
        ).execution_options(populate_existing=True)
        return [finding_record(row) for row in self.session.scalars(stmt)]

    def documents(self, *, account_id: str, region: str, statuses: Iterable[str] = (OPEN,)) -> list[FindingDocument]:
        """The documents of an account's findings in a region, in :meth:`find`'s order, read as columns (a scan's
        thousand findings without mapping each to an object first)."""
        stmt = (
            select(*document_columns())
            .where(Finding.status.in_(list(statuses)), Finding.account_id == account_id, Finding.region == region)
            .order_by(Finding.estimated_monthly_savings_usd.desc(), Finding.rule_id, Finding.resource_name, Finding.id)
        )
        return [finding_document(row) for row in self.session.execute(stmt)]

    def documents_of_resources(
        self, keys: Iterable[str], *, account_ids: Iterable[str], statuses: Iterable[str]
    ) -> list[FindingDocument]:
        """Every finding (of ``statuses``) of the resources ``keys`` (Chipwise resource ids) in ``account_ids``, in
        :meth:`find`'s order: what a resource's verdict is settled from, for a batch of resources in one statement
        (the account and status narrow it through ``ix_findings_account_status``)."""
        wanted = set(keys)
        arns = sorted({split_key(key)[0] for key in wanted})
        if not arns:
            return []
        stmt = (
            select(*document_columns())
            .where(
                Finding.account_id.in_(sorted(set(account_ids))),
                Finding.status.in_(list(statuses)),
                Finding.resource_arn.in_(arns),
            )
            .order_by(Finding.estimated_monthly_savings_usd.desc(), Finding.rule_id, Finding.resource_name, Finding.id)
        )
        documents = (finding_document(row) for row in self.session.execute(stmt))
        return [d for d in documents if d.resource_id in wanted]

    def count(self) -> int:
        """How many findings the store holds, whatever their status."""
        return int(self.session.scalar(select(func.count()).select_from(Finding)) or 0)

    def get(self, finding_id: str) -> FindingRecord:
        """A finding by id or by an unambiguous prefix of it (at least six characters)."""
        return finding_record(self._row(finding_id))

    def by_id(self, finding_id: str) -> FindingRecord | None:
        """The finding with exactly this id, None when there is none."""
        row = self.session.get(Finding, finding_id, populate_existing=True)
        return None if row is None else finding_record(row)

    def _row(self, finding_id: str) -> Finding:
        found = self.session.get(Finding, finding_id, populate_existing=True)
        if found is not None:
            return found
        if len(finding_id) < MIN_ID_PREFIX:
            raise NotFound(f"no finding {finding_id!r} (give the id or at least {MIN_ID_PREFIX} of its characters)")
        matches = list(self.session.scalars(select(Finding).where(Finding.id.startswith(finding_id)).limit(2)))
        if not matches:
            raise NotFound(f"no finding {finding_id!r}: `chipwise findings` lists them")
        if len(matches) > 1:
            raise InvalidInput(f"{finding_id!r} matches several findings: give more of the id")
        return matches[0]

    def benchmark_outcomes(
        self, finding_ids: Iterable[str], before: datetime | None = None
    ) -> dict[str, RecommendationRecord]:
        """The latest benchmark recommendation of each finding, recorded before ``before`` (any time when None)."""
        wanted = sorted(set(finding_ids))
        latest: dict[str, RecommendationRecord] = {}
        for start in range(0, len(wanted), 500):
            stmt = select(Recommendation).where(
                Recommendation.source == "benchmark", Recommendation.finding_id.in_(wanted[start : start + 500])
            )
            if before is not None:
                stmt = stmt.where(Recommendation.created_at < before)
            for rec in self.session.scalars(stmt.order_by(Recommendation.created_at, Recommendation.id)):
                latest[rec.finding_id] = recommendation_record(rec)
        return latest

    def measured_predictions(self, account_id: str, region: str) -> list[Prediction]:
        """Every benchmark measurement of the account's findings in ``region`` with a saving (a result that needs
        review has none), beside the rule's estimate: (rule, when, estimated, measured)."""
        stmt = (
            select(
                Finding.rule_id,
                Recommendation.created_at,
                Finding.estimated_monthly_savings_usd,
                Recommendation.monthly_savings_usd,
            )
            .join(Finding, Finding.id == Recommendation.finding_id)
            .where(
                Finding.account_id == account_id,
                Finding.region == region,
                Recommendation.source == "benchmark",
                Recommendation.monthly_savings_usd.is_not(None),
            )
            .order_by(Recommendation.created_at)
        )
        found: list[Prediction] = []
        for rule, at, estimated, actual in self.session.execute(stmt):
            if actual is not None:
                found.append(Prediction(rule, at, estimated, actual, "measured"))
        return found

    def history(self, finding_id: str) -> list[RecommendationRecord]:
        stmt = (
            select(Recommendation)
            .where(Recommendation.finding_id == finding_id)
            .order_by(Recommendation.created_at, Recommendation.id)
        )
        return [recommendation_record(row) for row in self.session.scalars(stmt)]

    # --- suppression --------------------------------------------------------------------------------------

    def suppress(self, finding_id: str, *, until: datetime, reason: str, now: datetime) -> FindingRecord:
        """Hide a finding until ``until`` (exclusive) for ``reason``; the next evaluation after that reopens it
        if the condition still holds."""
        reason = reason.strip()
        if not reason:
            raise InvalidInput("a suppression needs a reason")
        if until.tzinfo is None:
            raise InvalidInput("the suppression end must be a timezone-aware time")
        if until <= now:
            raise InvalidInput(f"the suppression end {until.isoformat()} is not in the future")
        finding = self._row(finding_id)
        if finding.status == RESOLVED:
            raise InvalidInput(f"finding {finding.id} is resolved: there is nothing to suppress")
        finding.status = SUPPRESSED
        finding.suppressed_until = until
        finding.suppress_reason = reason
        self.session.flush()
        return finding_record(finding)


# --- rows -----------------------------------------------------------------------------------------------------


def finding_document(row: Finding | FindingRecord | Row[Any]) -> FindingDocument:
    """The finding document of a stored finding (a mapped row, or its columns as :meth:`FindingRepository.documents`
    selects them). A row's columns are taken in one pass (``zip`` over its fields: reading 25 columns by attribute
    from a ``Row`` cost as much as validating them) and validated in one call, the recommendation nested."""
    return document_of_columns(dict(zip(row._fields, row, strict=True)) if isinstance(row, Row) else _columns_of(row))


def document_of_columns(c: Mapping[str, Any]) -> FindingDocument:
    """The finding document of a stored finding's columns by name (a row read as a dict: extra columns ignored)."""
    return FindingDocument.model_validate(
        {
            "finding_id": c["id"],
            "rule_id": c["rule_id"],
            "account_id": c["account_id"],
            "region": c["region"],
            "resource_id": resource_key(c["resource_arn"], c["resource_variant"]),
            "resource_arn": c["resource_arn"],
            "variant": c["resource_variant"] or None,
            "resource_kind": c["resource_kind"],
            "resource_name": c["resource_name"],
            "instance_type": c["instance_type"],
            "instance_count": c["instance_count"],
            "monthly_cost_usd": c["monthly_cost_usd"],
            "estimated_monthly_savings_usd": c["estimated_monthly_savings_usd"],
            "measured_monthly_savings_usd": c["measured_monthly_savings_usd"],
            "recommendation": c["recommendation"],
            "confidence": c["confidence"],
            "signals_used": c["signals_used"],
            "signals_missing": c["signals_missing"],
            "effort": c["effort"],
            "break_even_months": c["break_even_months"],
            "summary": c["summary"],
            "evidence": c["evidence"],
            "status": c["status"],
            "first_seen": c["first_seen"],
            "last_seen": c["last_seen"],
        }
    )


# The columns a finding's document is made of (the lifecycle's bookkeeping, such as the suppression's reason or the
# last scan, is not in it): what a read of documents selects.
DOCUMENT_COLUMNS = (
    "id",
    "rule_id",
    "account_id",
    "region",
    "resource_arn",
    "resource_variant",
    "resource_kind",
    "resource_name",
    "instance_type",
    "instance_count",
    "monthly_cost_usd",
    "estimated_monthly_savings_usd",
    "measured_monthly_savings_usd",
    "recommendation",
    "confidence",
    "signals_used",
    "signals_missing",
    "effort",
    "break_even_months",
    "summary",
    "evidence",
    "status",
    "first_seen",
    "last_seen",
)


def document_columns() -> list[Any]:
    """The findings table's :data:`DOCUMENT_COLUMNS` (a ``select`` of them reads documents)."""
    return [Finding.__table__.c[name] for name in DOCUMENT_COLUMNS]


def _columns_of(row: Finding | FindingRecord) -> dict[str, Any]:
    return {name: getattr(row, name) for name in DOCUMENT_COLUMNS}
