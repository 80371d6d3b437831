"""Shared fixtures: stores (SQLite always, PostgreSQL when CHIPWISE_TEST_DATABASE_URL is set), the AWS emulator,
sample events and clean settings."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from chipwise import neuron_agent
from chipwise.aws import base_session
from chipwise.settings import get_settings
from chipwise.store.session import get_engine, get_session_factory, upgrade
from chipwise.store.tables import all_tables

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"
PG_ENV = "CHIPWISE_TEST_DATABASE_URL"

# Tests never reach real AWS: fake credentials everywhere, endpoints set by the emulator fixture.
os.environ.update(
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_DEFAULT_REGION="us-east-1",
    AWS_REGION="us-east-1",
    AWS_EC2_METADATA_DISABLED="true",
    POWERTOOLS_TRACE_DISABLED="true",
    POWERTOOLS_METRICS_NAMESPACE="Chipwise",
    POWERTOOLS_SERVICE_NAME="chipwise-tests",
)
for _var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
    os.environ.pop(_var, None)


def _database_backends() -> list[str]:
    return ["sqlite", "postgresql"] if os.environ.get(PG_ENV) else ["sqlite"]


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file; each test gets a copy (cheaper than migrating per test)."""
    path = tmp_path_factory.mktemp("db") / "template.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    get_engine(url).dispose()  # checkpoints the WAL into the file before it is copied
    get_engine.cache_clear()
    get_session_factory.cache_clear()
    return path


@pytest.fixture(scope="session")
def _postgres_url(worker_id: str) -> Iterator[str]:
    """A fresh PostgreSQL database per test session (and xdist worker), migrated once."""
    admin_url = make_url(os.environ[PG_ENV])
    name = f"chipwise_test_{worker_id}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url.set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = admin_url.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
    upgrade(url)
    yield url
    get_engine(url).dispose()
    get_engine.cache_clear()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=_database_backends())
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database with no schema at all: a new SQLite file, or a new PostgreSQL database (dropped
    afterwards), for tests of the migrations themselves."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    admin_url = make_url(os.environ[PG_ENV]).set(drivername="postgresql+psycopg")
    name = f"chipwise_empty_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = admin_url.set(database=name).render_as_string(hide_password=False)
    yield url
    get_engine(url).dispose()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def worker_id(request: pytest.FixtureRequest) -> str:
    """xdist's worker id when running in parallel, "main" otherwise."""
    workerinput = getattr(request.config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


@pytest.fixture(params=_database_backends())
def db_url(request: pytest.FixtureRequest, tmp_path: Path, _sqlite_template: Path) -> Iterator[str]:
    """An empty, migrated store: SQLite always, PostgreSQL too when CHIPWISE_TEST_DATABASE_URL is set."""
    if request.param == "sqlite":
        path = tmp_path / "chipwise.db"
        shutil.copy(_sqlite_template, path)
        url = f"sqlite:///{path}"
        yield url
        get_engine(url).dispose()
        return
    url = request.getfixturevalue("_postgres_url")
    tables = ", ".join(f'"{t.name}"' for t in all_tables().sorted_tables)
    with get_engine(url).begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    yield url


class BuiltStores:
    """Stores built once per test process (and backend) and handed to each test as a copy: a SQLite file copied,
    or a PostgreSQL database created from the built one as its template. For tests that only read, or change in
    their own copy, a store whose building (seeding the emulator, scanning) costs far more than the copy."""

    def __init__(self, root: Path, sqlite_template: Path, worker: str) -> None:
        self._root = root
        self._sqlite_template = sqlite_template
        self._worker = worker
        self._built: dict[tuple[str, str], str] = {}  # (key, backend) -> the built store's url
        self._databases: list[str] = []  # PostgreSQL databases to drop at the end

    def _admin(self) -> Any:
        admin_url = make_url(os.environ[PG_ENV]).set(drivername="postgresql+psycopg")
        return admin_url, create_engine(admin_url, isolation_level="AUTOCOMMIT")

    def _create(self, name: str, template: str | None = None) -> str:
        admin_url, admin = self._admin()
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
        admin.dispose()
        self._databases.append(name)
        return str(admin_url.set(database=name).render_as_string(hide_password=False))

    def drop(self, url: str) -> None:
        get_engine(url).dispose()
        name = make_url(url).database
        _, admin = self._admin()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
        if name in self._databases:
            self._databases.remove(name)

    def _build(self, key: str, backend: str, build: Callable[[str], None]) -> str:
        if backend == "sqlite":
            path = self._root / f"{key}.db"
            shutil.copy(self._sqlite_template, path)
            url = f"sqlite:///{path}"
        else:
            url = self._create(f"chipwise_built_{key}_{self._worker}_{uuid.uuid4().hex[:8]}".lower())
            upgrade(url)
        build(url)
        get_engine(url).dispose()  # SQLite: the WAL checkpointed into the file; PostgreSQL: no session left on it
        return url

    def copy(self, key: str, backend: str, build: Callable[[str], None], into: Path) -> str:
        """A copy of store ``key`` on ``backend`` (built by ``build(url)`` the first time it is asked for): a file
        under ``into`` for SQLite, a new database for PostgreSQL (dropped by ``drop`` or at the session's end)."""
        if (key, backend) not in self._built:
            self._built[key, backend] = self._build(key, backend, build)
        source = self._built[key, backend]
        if backend == "sqlite":
            path = into / f"{key}-copy.db"
            shutil.copy(make_url(source).database or "", path)
            return f"sqlite:///{path}"
        template = make_url(source).database or ""
        return self._create(f"{template[:40]}_{uuid.uuid4().hex[:8]}", template=template)

    def close(self) -> None:
        for name in list(self._databases):
            _, admin = self._admin()
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
        self._databases.clear()


@pytest.fixture(scope="session")
def built_stores(
    tmp_path_factory: pytest.TempPathFactory, _sqlite_template: Path, worker_id: str
) -> Iterator[BuiltStores]:
    """Stores built once per test process: see ``BuiltStores``."""
    stores = BuiltStores(tmp_path_factory.mktemp("built"), _sqlite_template, worker_id)
    yield stores
    stores.close()


@pytest.fixture
def sqlite_url(tmp_path: Path, _sqlite_template: Path) -> Iterator[str]:
    """A migrated SQLite store only (for tests whose subject is not the database)."""
    path = tmp_path / "chipwise.db"
    shutil.copy(_sqlite_template, path)
    url = f"sqlite:///{path}"
    yield url
    get_engine(url).dispose()


@pytest.fixture
def session_factory(db_url: str) -> sessionmaker[Session]:
    return get_session_factory(db_url)


@pytest.fixture
def session(session_factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session whose work is committed at the end of the test (rolled back on error)."""
    with session_factory.begin() as s:
        yield s


@pytest.fixture(autouse=True)
def _clean_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test starts from default settings, in its own working directory (no stray chipwise.toml/db)."""
    for key in list(os.environ):
        if key.startswith("CHIPWISE_") and key != PG_ENV:
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def use_db(monkeypatch: pytest.MonkeyPatch, db_url: str) -> str:
    """Point the settings (and so the CLI and handlers) at the test store."""
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", db_url)
    get_settings.cache_clear()
    return db_url


@pytest.fixture(scope="session")
def emulator() -> Iterator[Any]:
    """One moto server on 127.0.0.1 for the whole session (reset per test by ``aws``)."""
    from chipwise_devkit.emulator import Emulator

    with Emulator() as emu:
        yield emu


@pytest.fixture
def aws(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The emulator, reset, with this process's AWS environment pointed at it."""
    emulator.reset()
    for key, value in emulator.env().items():
        monkeypatch.setenv(key, value)
    base_session.cache_clear()
    neuron_agent.aws_client.cache_clear()  # the host agent's own cached boto3 clients
    yield emulator
    base_session.cache_clear()
    neuron_agent.aws_client.cache_clear()


def load_event(name: str, **overrides: Any) -> dict[str, Any]:
    """A sample event from events/ (the same files `sam local invoke -e` uses)."""
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    event.update(overrides)
    return event


@pytest.fixture
def sample_event() -> Callable[..., dict[str, Any]]:
    """``load_event`` as a fixture, for test modules outside this directory."""
    return load_event


@pytest.fixture
def lambda_context() -> Any:
    """A minimal Lambda context for handler tests."""

    class _Context:
        function_name = "chipwise-test"
        memory_limit_in_mb = 512
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:chipwise-test"
        aws_request_id = "00000000-0000-0000-0000-000000000000"

        @staticmethod
        def get_remaining_time_in_millis() -> int:
            return 300_000

    return _Context()


class CfnResponses:
    """A stand-in for CloudFormation's presigned response URL on 127.0.0.1: records every PUT body."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class _Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.headers.append(dict(self.headers.items()))
                outer.received.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                return

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/cfn-response?X-Amz-Signature=test"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def cfn_responses() -> Iterator[CfnResponses]:
    """CloudFormation's response URL, served locally: custom resource events get ``ResponseURL`` = ``.url``."""
    server = CfnResponses()
    yield server
    server.close()
