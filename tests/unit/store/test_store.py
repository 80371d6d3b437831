"""The store: schema from migrations equals the models, writers are idempotent, types round-trip."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from chipwise.store.repositories.accounts import AccountRepository
from chipwise.store.session import alembic_config, get_engine
from chipwise.store.tables import CostRecord, Resource, all_tables
from chipwise.store.upsert import upsert


def test_migrations_match_models(db_url: str) -> None:
    # Given a store built only by the migrations
    with get_engine(db_url).connect() as conn:
        # When Alembic compares it with the ORM models
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), all_tables())
    # Then there is nothing to migrate
    assert diff == []


def test_single_migration_head() -> None:
    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    assert len(heads) == 1


def test_upsert_is_idempotent(session_factory: sessionmaker[Session]) -> None:
    row = {
        "account_id": "123456789012",
        "day": date(2026, 11, 1),
        "service": "Amazon SageMaker",
        "usage_type": "USE1-Host:ml.inf2.xlarge",
        "instance_type": "ml.inf2.xlarge",
        "unblended_cost": Decimal("18.196800"),
        "amortized_cost": Decimal("18.196800"),
        "usage_quantity": Decimal("24"),
    }
    with session_factory.begin() as s:
        AccountRepository(s).ensure("123456789012")
    for amount in ("18.196800", "20.000001"):
        with session_factory.begin() as s:
            upsert(
                s,
                CostRecord,
                [{**row, "unblended_cost": Decimal(amount)}],
                conflict=["account_id", "day", "service", "usage_type"],
            )
    with session_factory() as s:
        assert s.scalar(select(func.count()).select_from(CostRecord)) == 1
        stored = s.scalars(select(CostRecord)).one()
        assert stored.unblended_cost == Decimal("20.000001")
        assert isinstance(stored.unblended_cost, Decimal)


def test_timestamps_are_utc_aware(session_factory: sessionmaker[Session]) -> None:
    seen = datetime(2026, 11, 20, 12, 30, tzinfo=UTC) + timedelta(microseconds=5)
    with session_factory.begin() as s:
        AccountRepository(s).ensure("123456789012")
        s.add(
            Resource(
                account_id="123456789012",
                region="us-east-1",
                arn="arn:x",
                kind="ec2_instance",
                name="n",
                platform="cpu",
                first_seen=seen,
                last_seen=seen,
            )
        )
    with session_factory() as s:
        res = s.scalars(select(Resource)).one()
        assert res.first_seen == seen
        assert res.first_seen.tzinfo is not None


def test_naive_datetimes_are_refused(session_factory: sessionmaker[Session]) -> None:
    with pytest.raises(Exception, match="naive datetime"), session_factory.begin() as s:
        AccountRepository(s).ensure("123456789012")
        s.add(
            Resource(
                account_id="123456789012",
                region="us-east-1",
                arn="arn:y",
                kind="ec2_instance",
                name="n",
                platform="cpu",
                first_seen=datetime(2026, 1, 1),
            )
        )
        s.flush()


def test_a_scan_document_given_as_json_text_reads_back_as_the_same_document(
    session_factory: sessionmaker[Session],
) -> None:
    # Given a scan, and its document serialised by pydantic (non-ASCII text, floats, decimals as text, nesting)
    from chipwise.store.repositories.accounts import ScanRepository

    text = '{"name":"Zürich – inf2","p95":0.1,"tiny":1e-5,"saving":"1234.560000","rows":[{"h":1},null],"ok":true}'
    with session_factory.begin() as session:
        AccountRepository(session).ensure("123456789012")
        scans = ScanRepository(session)
        scans.open(
            "scan-json",
            "123456789012",
            "us-east-1",
            started_at=datetime(2026, 11, 20, tzinfo=UTC),
            window_start=date(2026, 11, 6),
            window_end=date(2026, 11, 20),
        )
        # When it is stored as the text it is
        scans.save_document("scan-json", text)
        # Then the scan the session holds reads it as a document, not as text
        held = scans.get("scan-json")
        assert held is not None and held.document == json.loads(text)
    # And so does a new session, on this database
    with session_factory() as session:
        stored = ScanRepository(session).get("scan-json")
        assert stored is not None and stored.document == json.loads(text)


def test_every_table_module_s_tables_are_named_for_lazy_mapping() -> None:
    # Given every module of chipwise.store.tables imported (what a new table module would add)
    import importlib
    import inspect
    import pkgutil

    import chipwise.store.tables as tables
    from chipwise.store.base import Base

    found: dict[str, str] = {}
    for module in pkgutil.iter_modules(tables.__path__):
        loaded = importlib.import_module(f"{tables.__name__}.{module.name}")
        for name, value in vars(loaded).items():
            if inspect.isclass(value) and issubclass(value, Base) and value.__module__ == loaded.__name__:
                found[name] = module.name
    # Then the package names each table with its module, so all_tables() (Alembic's metadata) misses none
    assert found == tables._MODULE_OF
    assert set(found) <= set(tables.__all__)
