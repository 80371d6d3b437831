"""Issue 37: ``chipwise resources`` counts the verdicts in SQL (``scan_verdicts``) and settles only the resources
with a finding; its page must be exactly what reading every latest scan document gives (the path it replaced, kept
here as the reference: :func:`reference_page` folds :func:`stream_verdicts`, which still reads every document).

The store: three accounts, two regions, two scans of one place (the older one's verdicts must not count), two teams
and a resource with no team, a variant of an endpoint, and findings of every kind that settles a verdict: open and
counted, open but set apart (a price quote, committed hours, a measurement to review, not worth it, cannot judge),
suppressed, resolved (no longer speaks), withdrawn, and an open finding a benchmark withdrew; verdicts stored as
waste with no finding left, efficient, cannot judge and out of scope."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from itertools import product
from typing import Any

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.cli import main
from chipwise.models.scan import ScanCosts, ScanDocument, ScanResource, ScanWindow
from chipwise.models.verdicts import ResourceVerdict, VerdictKind
from chipwise.pipeline.resources import VerdictPage, stream_verdicts, verdict_page
from chipwise.pipeline.scan_document import held_verdicts
from chipwise.store.repositories.accounts import AccountRepository, ScanRepository
from chipwise.store.repositories.scan_verdicts import rows_of, verdict_rows
from chipwise.store.tables import Finding, Scan, ScanVerdict

ACCOUNTS = ("111111111111", "222222222222", "333333333333")
REGIONS = ("us-east-1", "us-west-2")
AT = datetime(2026, 11, 27, tzinfo=UTC)
RULES = ("gpu_idle", "inferentia_idle", "capacity_held_idle")
TEAMS = (None, "nlp", "vision", "nobody")

# (stored verdict, findings: (status, recommendation, evidence, effort, estimated, measured)) per resource
OPEN = ("open", {"action": "stop"}, {}, "none", "800", None)
CASES: list[tuple[VerdictKind, list[tuple[str, dict[str, Any], dict[str, Any], str, str, str | None]]]] = [
    ("waste", [OPEN]),  # counted: waste
    ("waste", []),  # the finding resolved since: not counted
    ("waste", [("resolved", {"action": "stop"}, {}, "none", "800", None)]),  # resolved no longer speaks
    ("waste", [("suppressed", {"action": "stop"}, {}, "none", "800", None)]),
    ("efficient", [("withdrawn", {"action": "migrate"}, {}, "weeks", "900", "0")]),
    (
        "waste",
        [
            (
                "open",
                {"action": "migrate"},
                {"benchmark": {"status": "withdrawn", "reason": "slower"}},
                "weeks",
                "900",
                None,
            )
        ],
    ),
    ("waste", [("open", {"action": "migrate"}, {"benchmark": {"status": "needs_review"}}, "weeks", "900", "850")]),
    ("waste", [("open", {"action": "rightsize", "excluded_from_totals": "quote_needed"}, {}, "none", "300", None)]),
    ("waste", [("open", {"action": "stop", "excluded_from_totals": "committed"}, {}, "none", "300", None)]),
    (
        "cannot_judge",
        [("open", {"action": "enable_telemetry"}, {"reason": "no metrics", "fix": "install"}, "none", "0", None)],
    ),
    ("waste", [("open", {"action": "stop"}, {"verdict": "cannot_judge"}, "none", "10", None)]),
    ("waste", [("open", {"action": "migrate"}, {}, "months", "1", None)]),  # not worth it within 12 months
    ("efficient", [OPEN, ("suppressed", {"action": "stop"}, {}, "none", "50", None)]),  # counted wins
    (
        "efficient",
        [
            ("withdrawn", {"action": "migrate"}, {}, "weeks", "900", "0"),
            ("suppressed", {"action": "stop"}, {}, "none", "5", None),
        ],
    ),
    ("efficient", []),
    ("cannot_judge", []),
    ("out_of_scope", []),
    ("not_counted", []),
]


def _resource(account: str, region: str, i: int) -> tuple[str, str, str]:
    """(resource id, ARN, variant) of the i-th resource of a place: every fifth a variant of an endpoint."""
    if i % 5 == 4:
        arn = f"arn:aws:sagemaker:{region}:{account}:endpoint/shared-{i}"
        return f"{arn}#variant/v{i}", arn, f"v{i}"
    arn = f"arn:aws:ec2:{region}:{account}:instance/i-{i:017x}"
    return arn, arn, ""


def _team(account: str, i: int) -> str | None:
    return None if i % 7 == 6 else ("nlp" if (int(account[0]) + i) % 3 == 0 else "vision")


def _document(scan_id: str, account: str, region: str, day: int, kinds: list[VerdictKind]) -> str:
    resources, verdicts = [], []
    for i, kind in enumerate(kinds):
        key, arn, variant = _resource(account, region, i)
        name = f"r{i:02d}-{account[:3]}"
        resources.append(
            ScanResource(
                id=key,
                arn=arn,
                variant=variant or None,
                kind="ec2_instance",
                name=name,
                instance_type="g5.xlarge",
                instance_count=1,
                platform="nvidia",
                team=_team(account, i),
            )
        )
        verdicts.append(
            ResourceVerdict(
                resource_id=key,
                name=name,
                kind="ec2_instance",
                platform="nvidia",
                instance_type="g5.xlarge",
                verdict=kind,
                reason=f"stored {kind} on day {day}",
            )
        )
    document = ScanDocument(
        scan_id=scan_id,
        account_id=account,
        region=region,
        status="succeeded",
        started_at=AT + timedelta(days=day),
        finished_at=AT + timedelta(days=day),
        window=ScanWindow(start=date(2026, 11, 1), end=date(2026, 11, 20 + day)),
        costs=ScanCosts(total_usd=Decimal(0)),
        resources=resources,
        verdicts=verdicts,
    )
    return document.model_dump_json()


def _scan(session: Session, account: str, region: str, day: int, kinds: list[VerdictKind]) -> str:
    scan_id = str(uuid.uuid4())
    scans = ScanRepository(session)
    end = date(2026, 11, 20 + day)
    scans.open(
        scan_id, account, region, started_at=AT + timedelta(days=day), window_start=date(2026, 11, 1), window_end=end
    )
    scans.finish(
        scan_id,
        status="succeeded",
        finished_at=AT + timedelta(days=day),
        resource_count=len(kinds),
        api_calls={},
        timings={},
        errors=[],
        document_json=_document(scan_id, account, region, day, kinds),
    )
    return scan_id


@pytest.fixture
def organisation(use_db: str, session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        for a, account in enumerate(ACCOUNTS):
            AccountRepository(session).ensure(account)
            for r, region in enumerate(REGIONS):
                if (a, r) == (2, 1):
                    continue  # the third account is scanned in one region
                shift = a * 2 + r  # each place has the cases in another order
                cases = CASES[shift:] + CASES[:shift]
                if (a, r) == (0, 0):  # an older scan of the first place, every verdict waste: not counted
                    _scan(session, account, region, 0, ["waste"] * len(cases))
                _scan(session, account, region, 1, [kind for kind, _ in cases])
                for i, (_, findings) in enumerate(cases):
                    _, arn, variant = _resource(account, region, i)
                    for rule, (status, recommendation, evidence, effort, estimated, measured) in zip(
                        RULES, findings, strict=False
                    ):
                        session.add(
                            Finding(
                                id=str(uuid.uuid4()),
                                account_id=account,
                                region=region,
                                rule_id=rule,
                                resource_arn=arn,
                                resource_variant=variant,
                                resource_kind="ec2_instance",
                                resource_name=f"r{i:02d}",
                                instance_type="g5.xlarge",
                                instance_count=1,
                                monthly_cost_usd=Decimal(1000),
                                estimated_monthly_savings_usd=Decimal(estimated),
                                measured_monthly_savings_usd=None if measured is None else Decimal(measured),
                                recommendation=recommendation,
                                confidence="high",
                                signals_used=[],
                                signals_missing=[],
                                effort=effort,
                                summary=f"r{i:02d} {status}.",
                                evidence=evidence,
                                status=status,
                                first_seen=AT,
                                last_seen=AT,
                                resolved_at=AT if status == "resolved" else None,
                                suppressed_until=AT + timedelta(days=30) if status == "suppressed" else None,
                                suppress_reason="kept" if status == "suppressed" else None,
                            )
                        )


def reference_page(
    account: str | None, region: str | None, team: str | None, *, limit: int | None, cursor: str | None = None
) -> VerdictPage:
    """The page as ``chipwise resources`` made it before issue 37's change: every verdict of every latest document,
    settled, counted and cut (the code it replaced, verbatim)."""
    page = VerdictPage()
    seen: set[str] = set()
    for row in stream_verdicts(account, region, team, cursor):
        page.counts[row.verdict.verdict] += 1
        if row.scan_id not in seen:
            seen.add(row.scan_id)
            page.scans.append((row.scan_id, row.account_id, row.region))
        if limit is None or len(page.rows) < limit:
            page.rows.append(row)
    return page


def _same(found: VerdictPage, expected: VerdictPage) -> None:
    assert found.counts == expected.counts
    assert found.scans == expected.scans
    assert found.rows == expected.rows


def test_the_counts_and_rows_are_those_of_every_latest_document(organisation: None) -> None:
    every = reference_page(None, None, None, limit=None)
    kinds = Counter(every.counts)
    assert set(kinds) == {"waste", "efficient", "cannot_judge", "not_counted", "out_of_scope"}  # every kind met
    assert every.total == 5 * len(CASES)
    ids = [r.verdict.resource_id for r in every.rows]
    cursors = (None, ids[0], ids[len(CASES) + 3], ids[-2], ids[-1], "arn:aws:ec2:us-east-1:1:instance/i-none")
    filters = [(a, r, t) for a, r, t in product((None, *ACCOUNTS, "444444444444"), (None, *REGIONS), TEAMS)]
    pages = (None, 7)  # every filter with the whole list and a short page; the cursors on a few filters
    cases = [(f, None, p) for f in filters for p in pages]
    cases += [
        (f, c, p)
        for f in ((None, None, None), (None, None, "nlp"), (ACCOUNTS[0], None, None))
        for c in cursors
        for p in (None, 1, 50)
    ]
    for (account, region, team), cursor, limit in cases:
        try:
            expected = reference_page(account, region, team, limit=limit, cursor=cursor)
        except Exception as error:  # the same refusal, in the same words
            with pytest.raises(type(error), match=str(error)):
                verdict_page(account, region, team, limit=limit, cursor=cursor)
            continue
        _same(verdict_page(account, region, team, limit=limit, cursor=cursor), expected)


def test_a_finding_changed_after_the_scan_settles_the_count_as_it_stands(
    organisation: None, session_factory: sessionmaker[Session]
) -> None:
    before = verdict_page(None, None, None, limit=3)
    with session_factory.begin() as session:  # every open finding suppressed: no waste is counted any more
        for finding in session.scalars(select(Finding).where(Finding.status == "open")):
            finding.status = "suppressed"
    after = verdict_page(None, None, None, limit=3)
    assert before.counts["waste"] > 0 and after.counts["waste"] == 0
    _same(after, reference_page(None, None, None, limit=3))


def test_only_the_latest_scan_of_each_place_keeps_its_verdict_rows(
    organisation: None, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as session:
        kept = set(session.scalars(select(ScanVerdict.scan_id).distinct()))
        assert kept == set(ScanRepository(session).latest_ids(None, None))
        assert session.scalar(select(func.count()).select_from(ScanVerdict)) == 5 * len(CASES)
        # a newer scan of the first place replaces its rows
        _scan(session, ACCOUNTS[0], REGIONS[0], 2, ["efficient"] * 3)
    page = verdict_page(ACCOUNTS[0], REGIONS[0], None, limit=None)
    assert page.total == 3  # the older scan's rows went
    _same(page, reference_page(ACCOUNTS[0], REGIONS[0], None, limit=None))


def test_a_scan_without_verdict_rows_is_refused_as_before(
    organisation: None, session_factory: sessionmaker[Session]
) -> None:
    with session_factory.begin() as session:
        scan_id = ScanRepository(session).latest_ids(ACCOUNTS[2], None)[0]
        ScanRepository(session).save_document(scan_id, _document(scan_id, ACCOUNTS[2], REGIONS[0], 1, []))
        assert session.scalar(select(func.count()).where(ScanVerdict.scan_id == scan_id)) == 0
    with pytest.raises(Exception, match="stored no verdicts"):
        verdict_page(ACCOUNTS[2], None, None, limit=3)
    with pytest.raises(Exception, match="stored no verdicts"):
        reference_page(ACCOUNTS[2], None, None, limit=3)


def test_the_command_prints_the_same_table_and_lines(
    organisation: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    every = reference_page(None, None, None, limit=None)
    assert main(["resources", "--limit", "4", "--team", "nlp"]) == 0
    table = " ".join(capsys.readouterr().out.split())  # the title as one line
    nlp = reference_page(None, None, "nlp", limit=None)
    summary = ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in sorted(nlp.counts.items()))
    assert f"top 4 of {nlp.total:,} resources" in table
    for part in summary.split(", "):
        assert part in table
    assert f"and {nlp.total - 4:,} more resources" in table
    cursor = every.rows[10].verdict.resource_id
    assert main(["resources", "--json", "--cursor", cursor, "--limit", "5"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["resource_id"] for line in lines] == [r.verdict.resource_id for r in every.rows[11:16]]


def test_deleting_a_scan_deletes_its_verdict_rows(organisation: None, session_factory: sessionmaker[Session]) -> None:
    with session_factory.begin() as session:
        session.execute(delete(Scan).where(Scan.account_id == ACCOUNTS[1]))
    with session_factory.begin() as session:
        left = session.scalar(select(func.count()).select_from(ScanVerdict))
    assert left == 5 * len(CASES) - 2 * len(CASES)


def test_the_rows_from_the_document_held_are_those_from_its_json() -> None:
    # Given a scan's document with teams (some none), variants and every kind of verdict
    kinds: list[VerdictKind] = [kind for kind, _ in CASES] * 2
    text = _document("scan-held", ACCOUNTS[0], REGIONS[0], 1, kinds)
    # When its verdict rows are made from the document the scan holds (no JSON decoded) and from its JSON
    held = rows_of("scan-held", held_verdicts(ScanDocument.model_validate_json(text)))
    # Then they are the same rows, in the same order
    assert held == verdict_rows("scan-held", text)
    assert len(held) == len(kinds) and {r["team"] for r in held} == {"nlp", "vision", None}
