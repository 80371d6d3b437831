"""An organisation (issue 37): 200 accounts x 250 accelerated resources (50,000) with 30 days of daily history.

The store is written through the repositories: the resources, their coverage and Cost Explorer days as direct
inserts (the shapes of :mod:`benchmarks.bench_rules`, team-tagged), then each day of each account the findings
lifecycle (``FindingRepository.apply``: findings opening, updating and resolving as resources move in and out of
waste, a few suppressed) and a finished scan with its document (resources and verdicts). No metric rollups and no
AWS calls: the rules stage and the collectors are measured by ``bench_rules`` and ``bench_scan``.

Figures, each with its goal where issue 37 sets one:

- ``chipwise --help`` against ``python -c "import typer"`` (CPU of each process);
- every read command on the demo store against importing its third-party dependencies alone;
- every read command at the full size against a tenth of it (CPU), and its peak memory;
- the daily write (lifecycle + scan document) on the last day against the second;
- the store's size after 90 days against 60 (at a tenth of the accounts), and rows and bytes per resource per day.

``CHIPWISE_BENCH_ORG_ACCOUNTS`` (default 200) and ``CHIPWISE_BENCH_ORG_DAYS`` (default 30) shrink it; with
``CHIPWISE_TEST_DATABASE_URL`` set (``postgresql+psycopg://...``) the read commands run on PostgreSQL as well.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import insert, text

from benchmarks.bench_rules import NOW, REGION, estate
from benchmarks.harness import BenchResult, measure
from chipwise.models.findings import FindingDraft, RecommendationDoc
from chipwise.models.scan import ScanCosts, ScanDocument, ScanResource, ScanWindow
from chipwise.models.verdicts import ResourceVerdict
from chipwise.pipeline.retention import prune_store
from chipwise.settings import Settings
from chipwise.store import session_scope
from chipwise.store.engine import get_engine
from chipwise.store.repositories.accounts import ScanRepository
from chipwise.store.repositories.findings import FindingRepository
from chipwise.store.session import upgrade
from chipwise.store.tables import Account, CostRecord, MetricCoverage, Resource

ROOT = Path(__file__).resolve().parent.parent
PER_ACCOUNT = 250
ACCOUNTS = int(os.environ.get("CHIPWISE_BENCH_ORG_ACCOUNTS", "200"))
DAYS = int(os.environ.get("CHIPWISE_BENCH_ORG_DAYS", "30"))
GROWTH_DAYS = (60, 90)
RETAINED_DAYS = 63  # the shortest history the store may keep (the longest look-back)
TEAMS = 25
RULES = ("gpu_idle", "inferentia_idle", "capacity_held_idle")
MIB = 2**20
CHIPWISE = str(Path(sys.executable).with_name("chipwise"))


def _account(index: int) -> str:
    return f"{100000000000 + index:012d}"


def _team(account_index: int) -> str:
    return f"team-{account_index % TEAMS:02d}"


# --- the store ------------------------------------------------------------------------------------------------


def _resources(session: Any, index: int, first_id: int) -> list[dict[str, Any]]:
    """One account's resources, coverage and cost days (direct inserts through the session)."""
    account = _account(index)
    data = estate(PER_ACCOUNT, 1, account=account, first_id=first_id)
    for row in data.resources:
        row["tags"] = {"team": _team(index), "owner": f"owner-{index}@example.com"}
    session.add(Account(account_id=account, name=f"Account {index}"))
    session.flush()
    session.execute(insert(Resource), data.resources)
    session.execute(insert(MetricCoverage), data.coverage)
    session.execute(insert(CostRecord), data.costs)
    return data.resources


def _drafts(account: str, resources: list[dict[str, Any]], day: int) -> list[FindingDraft]:
    """About 40% of the resources waste on a day; each moves in or out every five days (opening, resolving)."""
    drafts = []
    for i, r in enumerate(resources):
        if (i * 7 + (day + i) // 5) % 5 >= 2:
            continue
        rule = RULES[i % len(RULES)]
        cost = Decimal(200 + (i * 37) % 4000)
        drafts.append(
            FindingDraft(
                rule_id=rule,
                account_id=account,
                region=REGION,
                resource_arn=r["arn"],
                resource_kind=r["kind"],
                resource_name=r["name"],
                instance_type=r["instance_type"],
                instance_count=r["instance_count"],
                monthly_cost_usd=cost,
                estimated_monthly_savings_usd=(cost * Decimal("0.8")).quantize(Decimal("0.01")),
                recommendation=RecommendationDoc(action="stop"),
                confidence="high",
                summary=f"{r['name']} was idle for the window.",
            )
        )
    return drafts


def _document(scan_id: str, account: str, index: int, resources: list[dict[str, Any]], day: int) -> str:
    """The finished scan's document: every resource and its one verdict (findings live in their table)."""
    end = (NOW + timedelta(days=day)).date()
    waste = {d.resource_arn for d in _drafts(account, resources, day)}
    document = ScanDocument(
        scan_id=scan_id,
        account_id=account,
        region=REGION,
        status="succeeded",
        started_at=NOW + timedelta(days=day),
        finished_at=NOW + timedelta(days=day, minutes=3),
        window=ScanWindow(start=end - timedelta(days=14), end=end),
        costs=ScanCosts(total_usd=Decimal(1000 * len(resources))),
        resources=[
            ScanResource(
                id=r["arn"],
                arn=r["arn"],
                kind=r["kind"],
                name=r["name"],
                instance_type=r["instance_type"],
                instance_count=r["instance_count"],
                platform=r["platform"],
                team=_team(index),
            )
            for r in resources
        ],
        verdicts=[
            ResourceVerdict(
                resource_id=r["arn"],
                name=r["name"],
                kind=r["kind"],
                platform=r["platform"],
                instance_type=r["instance_type"],
                verdict="waste" if r["arn"] in waste else "efficient",
                reason="idle for the window" if r["arn"] in waste else "busy: utilisation above the thresholds",
            )
            for r in resources
        ],
    )
    return document.model_dump_json()


def _day(url: str, index: int, resources: list[dict[str, Any]], day: int) -> None:
    """One account's day: the findings lifecycle and a finished scan with its document."""
    account = _account(index)
    now = NOW + timedelta(days=day)
    scan_id = str(uuid.uuid4())
    with session_scope(url) as session:
        end = now.date()
        scans = ScanRepository(session)
        scans.open(scan_id, account, REGION, started_at=now, window_start=end - timedelta(days=14), window_end=end)
        repository = FindingRepository(session)
        repository.apply(
            account_id=account,
            region=REGION,
            drafts=_drafts(account, resources, day),
            rule_ids=RULES,
            now=now,
            scan_id=scan_id,
        )
        scans.finish(
            scan_id,
            status="succeeded",
            finished_at=now + timedelta(minutes=3),
            resource_count=len(resources),
            api_calls={},
            timings={},
            errors=[],
            document_json=_document(scan_id, account, index, resources, day),
        )
        if day == 1:  # a few suppressed for a month
            for row in repository.find(account_id=account)[::50]:
                repository.suppress(row.id, until=now + timedelta(days=30), reason="kept", now=now)


def build(
    url: str,
    accounts: int,
    days: int,
    on_day: Callable[[int, float], None] | None = None,
    history_days: int | None = None,
) -> None:
    """The organisation's store: resources, then ``days`` daily writes of every account; ``on_day(day, cpu)``
    after each day with the CPU seconds of its writes. With ``history_days``, the store's retention
    (:func:`chipwise.pipeline.retention.prune_store`) runs after each day with that history horizon."""
    upgrade(url)
    per_account: list[list[dict[str, Any]]] = []
    with session_scope(url) as session:
        for index in range(accounts):
            per_account.append(_resources(session, index, 1 + index * PER_ACCOUNT))
    for day in range(1, days + 1):
        started = time.process_time()
        for index, resources in enumerate(per_account):
            _day(url, index, resources, day)
        if history_days is not None:
            settings = Settings(database_url=url, history_retention_days=history_days)
            prune_store(now=NOW + timedelta(days=day, hours=1), settings=settings)
        if on_day is not None:
            on_day(day, time.process_time() - started)


# --- measuring ------------------------------------------------------------------------------------------------


# The command line as its console script runs it, reporting its own peak resident memory (VmHWM: the process's
# own high-water mark; a forked child's ru_maxrss would count the benchmark's memory at the fork).
_CLI = (
    "import os, sys\n"
    "from chipwise.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "    open(os.environ['CHIPWISE_BENCH_HWM'], 'w').write(status)\n"
    "sys.exit(code)\n"
)


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """CPU seconds (user + system) and peak memory (MiB) of one process; ``argv[0]`` "chipwise" runs the CLI."""
    hwm = cwd / "hwm.txt"
    command = [sys.executable, "-c", _CLI, *argv[1:]] if argv[0] == CHIPWISE else argv
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, env={**env, "CHIPWISE_BENCH_HWM": str(hwm)}, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv)} failed: {errors.read().decode().strip()[-300:]}")
    peak = int(hwm.read_text()) / 1024 if argv[0] == CHIPWISE else usage.ru_maxrss / 1024
    return usage.ru_utime + usage.ru_stime, peak


def _best(argv: list[str], env: dict[str, str], cwd: Path, repeats: int = 3) -> tuple[float, float]:
    runs = [_run(argv, env, cwd) for _ in range(repeats)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def commands(account: str, out: Path) -> dict[str, list[str]]:
    """The read commands, by name, as a person runs them on an organisation (tables cut to their top rows)."""
    return {
        "findings": ["findings"],
        "findings --json": ["findings", "--json"],
        "findings --team": ["findings", "--team", _team(0)],
        "resources": ["resources"],
        "findings realised": ["findings", "realised"],
        "report": ["report", "--account", account, "-o", str(out)],
        "notify --dry-run": ["notify", "--dry-run", "--limit", "20"],
        "drafts ACCOUNT": ["drafts", account, "-o", str(out / "drafts")],
    }


DEPENDENCIES = "import typer, rich.console, rich.table, sqlalchemy, pydantic, pydantic_settings"


def _env(url: str) -> dict[str, str]:
    return {
        **os.environ,
        "CHIPWISE_DATABASE_URL": url,
        "CHIPWISE_EMAIL_RECIPIENTS": "finops@example.com",
        "COLUMNS": "160",
    }


def _store_size(url: str) -> int:
    if url.startswith("sqlite"):
        return Path(url.removeprefix("sqlite:///")).stat().st_size
    with get_engine(url).connect() as connection:
        return int(connection.execute(text("select pg_database_size(current_database())")).scalar_one())


def _rows(url: str) -> dict[str, int]:
    with get_engine(url).connect() as connection:
        names = [
            r[0]
            for r in connection.execute(
                text(
                    "select name from sqlite_master where type = 'table'"
                    if url.startswith("sqlite")
                    else "select tablename from pg_tables where schemaname = 'public'"
                )
            )
        ]
        return {n: int(connection.execute(text(f'select count(*) from "{n}"')).scalar_one()) for n in names}


def _startup(tmp: Path) -> list[BenchResult]:
    env = {**os.environ, "COLUMNS": "160"}
    typer_cpu, _ = _best([sys.executable, "-c", "import typer"], env, tmp, repeats=5)
    help_cpu, help_mib = _best([CHIPWISE, "--help"], env, tmp, repeats=5)
    results = [
        BenchResult(
            name="chipwise --help",
            figures={"cpu_s": round(help_cpu, 3), "peak_mib": round(help_mib, 1), "import_typer_cpu_s": typer_cpu},
            baseline="import typer",
            ratio=help_cpu / max(typer_cpu, 1e-9),
            goal=1.5,
        )
    ]
    demo = ROOT / "chipwise-demo" / "chipwise-demo.db"
    if not demo.is_file():
        results.append(BenchResult(name="read commands on the demo store", figures={"skipped": "run `make demo`"}))
        return results
    store = tmp / "demo.db"
    shutil.copy(demo, store)
    deps_cpu, _ = _best([sys.executable, "-c", DEPENDENCIES], env, tmp)
    demo_env = _env(f"sqlite:///{store}")
    account = "123456789012"
    for name, args in commands(account, tmp / "demo-out").items():
        if name == "findings --team" or name == "drafts ACCOUNT":
            continue
        cpu, mib = _best([CHIPWISE, *args], demo_env, tmp)
        results.append(
            BenchResult(
                name=f"{name} (demo store)",
                figures={"cpu_s": round(cpu, 3), "peak_mib": round(mib, 1), "import_dependencies_cpu_s": deps_cpu},
                baseline="importing its dependencies",
                ratio=cpu / max(deps_cpu, 1e-9),
                goal=1.5,
            )
        )
    return results


def _reads(label: str, small_url: str, full_url: str, tmp: Path, accounts: int) -> list[BenchResult]:
    results = []
    for name, args in commands(_account(0), tmp / f"{label}-out").items():
        small_cpu, _ = _best([CHIPWISE, *args], _env(small_url), tmp, repeats=2)
        full_cpu, full_mib = _best([CHIPWISE, *args], _env(full_url), tmp, repeats=2)
        results.append(
            BenchResult(
                name=f"{name} at {accounts * PER_ACCOUNT:,} resources ({label})",
                figures={
                    "cpu_s": round(full_cpu, 3),
                    f"cpu_s_at_{accounts * PER_ACCOUNT // 10:,}": round(small_cpu, 3),
                    "peak_mib": round(full_mib, 1),
                    "peak_goal_mib": 256,
                    "peak_met": full_mib <= 256,
                },
                baseline=f"the same at {accounts * PER_ACCOUNT // 10:,}",
                ratio=full_cpu / max(small_cpu, 1e-9),
                goal=3.0,
            )
        )
    html = sorted((tmp / f"{label}-out").glob("*.html"))
    if html:
        size = html[-1].stat().st_size
        results.append(
            BenchResult(
                name=f"report HTML at {accounts * PER_ACCOUNT:,} resources ({label})",
                figures={"bytes": size, "goal_bytes": 2 * MIB, "met": size <= 2 * MIB},
            )
        )
    return results


def _pg_url(name: str) -> str | None:
    base = os.environ.get("CHIPWISE_TEST_DATABASE_URL", "")
    if not base.startswith("postgresql"):
        return None
    admin = get_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"drop database if exists {name}"))
        connection.execute(text(f"create database {name}"))
    return base.rsplit("/", 1)[0] + f"/{name}"


def _drop_pg(url: str) -> None:
    base = os.environ["CHIPWISE_TEST_DATABASE_URL"]
    get_engine(url).dispose()
    admin = get_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"drop database if exists {url.rsplit('/', 1)[1]}"))


def run() -> list[BenchResult]:
    results: list[BenchResult] = []
    small_accounts = max(ACCOUNTS // 10, 1)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        results += _startup(tmp)
        # the daily write on the last day against the second, while the full store is built
        day_cpu: dict[int, float] = {}
        full_url = f"sqlite:///{tmp / 'org-full.db'}"
        with measure(track_memory=False) as built:
            build(full_url, ACCOUNTS, DAYS, lambda day, cpu: day_cpu.__setitem__(day, cpu))
        small_url = f"sqlite:///{tmp / 'org-small.db'}"
        build(small_url, small_accounts, DAYS)
        results.append(
            BenchResult(
                name=f"daily write of {ACCOUNTS * PER_ACCOUNT:,} resources, day {DAYS}",
                figures={
                    f"cpu_s_day_{DAYS}": round(day_cpu[DAYS], 2),
                    "cpu_s_day_2": round(day_cpu[2], 2),
                    "build_wall_s": round(built.wall_seconds, 1),
                    "what": "findings lifecycle + scan document per account (not the collectors or the rules)",
                },
                baseline="day 2",
                ratio=day_cpu[DAYS] / max(day_cpu[2], 1e-9),
                goal=1.2,
            )
        )
        results += _reads("SQLite", small_url, full_url, tmp, ACCOUNTS)
        pg_small, pg_full = _pg_url("chipwise_bench_org_small"), _pg_url("chipwise_bench_org_full")
        if pg_small and pg_full:
            try:
                build(pg_full, ACCOUNTS, DAYS)
                build(pg_small, small_accounts, DAYS)
                results += _reads("PostgreSQL", pg_small, pg_full, tmp, ACCOUNTS)
                results.append(_growth_figures("PostgreSQL", pg_full, ACCOUNTS, DAYS))
            finally:
                _drop_pg(pg_small)
                _drop_pg(pg_full)
        results.append(_growth_figures("SQLite", full_url, ACCOUNTS, DAYS))
        results.append(_growth(tmp, small_accounts))
    return results


def _growth_figures(label: str, url: str, accounts: int, days: int) -> BenchResult:
    size, rows = _store_size(url), _rows(url)
    resource_days = accounts * PER_ACCOUNT * days
    growing = {k: v for k, v in sorted(rows.items(), key=lambda kv: -kv[1]) if v > accounts * PER_ACCOUNT}
    return BenchResult(
        name=f"store after {days} days of {accounts * PER_ACCOUNT:,} resources ({label})",
        figures={
            "bytes": size,
            "bytes_per_resource_day": round(size / resource_days, 1),
            "rows_per_resource_day": round(sum(rows.values()) / resource_days, 3),
            "largest_tables": ", ".join(f"{k} {v:,}" for k, v in list(growing.items())[:5]),
        },
    )


def _growth(tmp: Path, accounts: int) -> BenchResult:
    """The store's size after 60 and 90 days (a tenth of the accounts): retention should hold it flat."""
    url = f"sqlite:///{tmp / 'org-growth.db'}"
    sizes: dict[int, int] = {}

    def record(day: int, _cpu: float) -> None:
        if day in GROWTH_DAYS:
            with get_engine(url).connect() as connection:
                connection.exec_driver_sql("vacuum")
            sizes[day] = _store_size(url)

    build(url, accounts, GROWTH_DAYS[-1], record, history_days=RETAINED_DAYS)
    before, after = GROWTH_DAYS
    return BenchResult(
        name=f"store size after {after} days, {accounts * PER_ACCOUNT:,} resources (SQLite, vacuumed)",
        figures={
            f"bytes_day_{before}": sizes[before],
            f"bytes_day_{after}": sizes[after],
            "retention": f"db prune daily, history_retention_days={RETAINED_DAYS}",
        },
        baseline=f"after {before} days",
        ratio=sizes[after] / max(sizes[before], 1),
        goal=1.1,
    )
