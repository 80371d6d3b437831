"""The rules over a large estate: 10,000 resources x 30 days of hourly rollups in SQLite.

The estate mixes every shape the rules look at (busy, idle and oversized Inferentia endpoints and instances, idle
and steady GPUs, spiky endpoints, Trainium serving, GPU training, agent-less instances), about 2.5 hourly series
per resource: ~18 million metric rows plus neuron-monitor rollups. Figures:

- ``profiles``: building the profiles alone (the SQL reads and the per-series summaries) — the baseline;
- ``evaluate``: the whole ``evaluate_account`` (profiles, every rule, the findings lifecycle, the open findings
  read back), first run (inserts) and second run (updates), with its SQL statement count;
- the rules stage's peak memory: each size is evaluated in a fresh process, and its peak resident memory
  (``VmHWM``) right after the first ``evaluate_account`` is the stage's own (the interpreter and the modules
  included: ``imports_rss_mib`` says how much of it they are); issue 37's goal is at most 512 MiB at 10,000;
- the same at 1,000 resources, for the scaling ratio (10.0x would be linear).

:func:`estate` is also what the statement-count test writes (smaller) into SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert

from benchmarks.harness import BenchResult, max_rss_mib, measure
from chipwise.analyse.profile_builder import build_profiles
from chipwise.catalog import get_catalog
from chipwise.collect.metrics import metric_window
from chipwise.models.neuron import INSTANCE_RUNTIME_TAG
from chipwise.pipeline.evaluate import evaluate_account
from chipwise.pipeline.policy import load_policy
from chipwise.store import session_scope
from chipwise.store.engine import get_engine
from chipwise.store.repositories.profile_inputs import ProfileInputRepository
from chipwise.store.session import upgrade
from chipwise.store.tables import Account, CostRecord, MetricCoverage, Resource

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
ACCOUNT = "123456789012"
REGION = "us-east-1"
SIZES = (1_000, 10_000)
DAYS = 30
GIB = 2**30
PEAK_GOAL_MIB = 512  # issue 37: the rules stage at 10,000 resources peaks at most this


@dataclass(frozen=True)
class Shape:
    """One kind of resource in the estate and the hourly series it publishes."""

    kind: str
    instance_type: str
    platform: str
    hints: dict[str, Any]
    metrics: tuple[tuple[str, str, str, Callable[[int], float | None]], ...]  # namespace, metric, column, value(h)
    neuron: Callable[[int], tuple[float, float, int, int]] | None = None  # util max, avg, memory, executions
    missing: tuple[tuple[str, str], ...] = ()  # coverage rows with exists False
    state: str = "running"
    count: int = 1


ENDPOINT_DETAILS = {"variants": [{"variant_name": "AllTraffic", "instance_type": "x"}]}


def _wave(level: float) -> Callable[[int], float]:
    return lambda h: level * (1 + 0.35 * math.sin(2 * math.pi * (h % 24 - 9) / 24))


def _spiky(peak: float) -> Callable[[int], float | None]:
    return lambda h: peak if h % 24 in (10, 15) else None


def _flat(level: float) -> Callable[[int], float]:
    return lambda _h: level


EP, EC2 = "sagemaker_endpoint", "ec2_instance"
INV = ("AWS/SageMaker", "Invocations", "sum")
NEURON = "Chipwise/Neuron"
HINTS: dict[str, Any] = {"custom_cuda": False, "sources": {"model_family": "tag", "workload": "tag"}}
SHAPES: tuple[Shape, ...] = (
    Shape(
        EP,
        "ml.inf2.xlarge",
        "inferentia",
        {"model_family": "llama"},
        (
            (*INV, _wave(100_000)),
            (NEURON, "NeuronCoreUtilization", "maximum", _wave(60)),
            (NEURON, "NeuronDeviceMemoryUsed", "maximum", _flat(20 * GIB)),
        ),
        state="InService",
    ),
    Shape(
        EP,
        "ml.inf2.48xlarge",
        "inferentia",
        {"model_family": "llama"},
        (
            (*INV, _wave(10_000)),
            (NEURON, "NeuronCoreUtilization", "maximum", _wave(9)),
            (NEURON, "NeuronCoreUtilizationAvg", "average", _wave(7)),
            (NEURON, "NeuronDeviceMemoryUsed", "maximum", _flat(40 * GIB)),
        ),
        state="InService",
    ),
    Shape(
        EC2,
        "inf2.xlarge",
        "inferentia",
        {},
        (("AWS/EC2", "CPUUtilization", "maximum", _flat(1.5)),),
        neuron=lambda _h: (0.0, 0.0, 0, 0),
    ),
    Shape(EC2, "g5.xlarge", "nvidia", {}, (("CWAgent", "nvidia_smi_utilization_gpu", "maximum", _flat(0.4)),)),
    Shape(
        EP,
        "ml.g5.2xlarge",
        "nvidia",
        {"model_family": "mistral", "hf_model_id": "mistralai/Mistral-7B-v0.3"},
        (
            (*INV, _wave(80_000)),
            ("/aws/sagemaker/Endpoints", "GPUUtilization", "maximum", _wave(60)),
            ("AWS/SageMaker", "ModelLatency", "average", _flat(70_000)),
        ),
        state="InService",
        count=4,
    ),
    Shape(
        EC2,
        "trn1.2xlarge",
        "trainium",
        {"workload": "inference", "model_family": "llama"},
        (),
        neuron=lambda h: (_wave(40)(h), _wave(30)(h), 16 * GIB, 18_000),
    ),
    Shape(
        EC2,
        "inf2.xlarge",
        "inferentia",
        {},
        (("AWS/EC2", "CPUUtilization", "maximum", _flat(3.0)),),
        missing=((NEURON, "NeuronCoreUtilization"), ("neuron-monitor", "neuroncore_utilization")),
    ),
    Shape(
        EP,
        "ml.g5.12xlarge",
        "nvidia",
        {"model_family": "llama", "hf_model_id": "meta-llama/Llama-3.1-8B"},
        ((*INV, _spiky(40_000)), ("/aws/sagemaker/Endpoints", "GPUUtilization", "maximum", _spiky(300))),
        state="InService",
    ),
    Shape(
        EC2,
        "p5.48xlarge",
        "nvidia",
        {"workload": "training", "model_family": "llama"},
        (("CWAgent", "nvidia_smi_utilization_gpu", "maximum", _wave(80)),),
    ),
    Shape(EC2, "g6.xlarge", "nvidia", {}, (("CWAgent", "nvidia_smi_utilization_gpu", "maximum", _wave(50)),)),
)


@dataclass
class Estate:
    """Rows for the store, as plain dicts (the test inserts them with SQLAlchemy, the bench with sqlite3)."""

    resources: list[dict[str, Any]] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    costs: list[dict[str, Any]] = field(default_factory=list)


def estate(resources: int, days: int, now: datetime = NOW, account: str = ACCOUNT, first_id: int = 1) -> Estate:
    """The resources, their coverage and the days' Cost Explorer records (no rollups: see :func:`rollups`)."""
    out = Estate()
    start, end = now - timedelta(days=days), now
    for index in range(resources):
        shape = SHAPES[index % len(SHAPES)]
        name = _name(account, index)
        arn = (
            f"arn:aws:ec2:{REGION}:{account}:instance/i-{name}"
            if shape.kind == EC2
            else f"arn:aws:sagemaker:{REGION}:{account}:endpoint/{name}"
        )
        details = {"instance_id": f"i-{name}"} if shape.kind == EC2 else ENDPOINT_DETAILS
        out.resources.append(
            {
                "id": first_id + index,
                "account_id": account,
                "region": REGION,
                "arn": arn,
                "kind": shape.kind,
                "name": name,
                "instance_type": shape.instance_type,
                "instance_count": shape.count,
                "platform": shape.platform,
                "state": shape.state,
                "hints": {**HINTS, **shape.hints},
                "details": details,
                "tags": {},
                "unknown_instance_type": False,
            }
        )
        for namespace, metric, _, _ in shape.metrics:
            out.coverage.append(_coverage(first_id + index, namespace, metric, True, days * 24, start, end))
        for namespace, metric in shape.missing:
            out.coverage.append(_coverage(first_id + index, namespace, metric, False, 0, start, end))
    priced = {(s.kind, s.instance_type): s for s in SHAPES}.values()
    for day in range(days):
        for shape in priced:
            out.costs.append(_cost(now.date() - timedelta(days=day + 1), shape, account))
    return out


def _name(account: str, index: int) -> str:
    return f"{account[-4:]}-r{index:05d}"


def _coverage(
    rid: int, namespace: str, metric: str, exists: bool, hours: int, start: datetime, end: datetime
) -> dict[str, Any]:
    return {
        "resource_id": rid,
        "namespace": namespace,
        "metric": metric,
        "exists": exists,
        "hours_with_data": hours,
        "window_start": start,
        "window_end": end,
    }


def _cost(day: date, shape: Shape, account: str) -> dict[str, Any]:
    price = get_catalog().price(shape.instance_type) or Decimal(1)
    hours = Decimal(24 * shape.count * 1000)  # a thousand of each type
    prefix = "BoxUsage:" if shape.kind == EC2 else "USE1-Host:"
    return {
        "account_id": account,
        "day": day,
        "service": shape.kind,
        "usage_type": prefix + shape.instance_type,
        "usage_kind": prefix.rstrip(":").split("-")[-1],
        "instance_type": shape.instance_type,
        "region": None,
        "unblended_cost": price * hours,
        "amortized_cost": price * hours,
        "usage_quantity": hours,
        "estimated": False,
    }


def rollups(resources: int, days: int, now: datetime = NOW, first_id: int = 1) -> Iterator[tuple[Any, ...]]:
    """(resource_id, namespace, metric, hour, average, maximum, sum) for every hour of every series."""
    hours = [now - timedelta(hours=days * 24 - h) for h in range(days * 24)]
    for index in range(resources):
        shape = SHAPES[index % len(SHAPES)]
        for namespace, metric, column, value in shape.metrics:
            for h, hour in enumerate(hours):
                v = value(h + index)
                if v is None:
                    continue
                yield (
                    first_id + index,
                    namespace,
                    metric,
                    hour,
                    v if column != "sum" else None,
                    v if column == "maximum" else None,
                    v if column == "sum" else None,
                )


def neuron_rollups(resources: int, days: int, now: datetime = NOW, account: str = ACCOUNT) -> Iterator[tuple[Any, ...]]:
    """(account_id, instance_id, runtime_tag, hour, util max, util avg, cores, memory, executions)."""
    hours = [now - timedelta(hours=days * 24 - h) for h in range(days * 24)]
    for index in range(resources):
        shape = SHAPES[index % len(SHAPES)]
        if shape.neuron is None:
            continue
        for h, hour in enumerate(hours):
            util, avg, memory, executions = shape.neuron(h + index)
            yield (account, f"i-{_name(account, index)}", INSTANCE_RUNTIME_TAG, hour, util, avg, 2, memory, executions)


# --- the benchmark: a SQLite file written with sqlite3 executemany (the fastest way to get 18 M rows in) ----------


def _sqlite_time(value: datetime) -> str:
    """SQLAlchemy's SQLite DATETIME storage format (UTC, naive)."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _populate(url: str, resources: int, days: int) -> None:
    data = estate(resources, days)
    with session_scope(url) as session:
        session.add(Account(account_id=ACCOUNT))
        session.flush()
        session.execute(insert(Resource), data.resources)
        session.execute(insert(MetricCoverage), data.coverage)
        session.execute(insert(CostRecord), data.costs)
    raw = get_engine(url).raw_connection()
    try:
        cursor = raw.cursor()
        cursor.executemany(
            "INSERT INTO metric_rollups (resource_id, namespace, metric, hour, average, maximum, sum) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((r[0], r[1], r[2], _sqlite_time(r[3]), r[4], r[5], r[6]) for r in rollups(resources, days)),
        )
        cursor.executemany(
            "INSERT INTO neuron_rollups (account_id, instance_id, runtime_tag, hour, reports, "
            "neuroncore_utilization_max, neuroncore_utilization_avg, cores_in_use, device_memory_used_max, "
            "executions_completed, executions_failed, errors, reports_missing, parts) "
            "VALUES (?, ?, ?, ?, 4, ?, ?, ?, ?, ?, 0, 0, 0, ?)",
            ((*r[:3], _sqlite_time(r[3]), *r[4:], json.dumps(None)) for r in neuron_rollups(resources, days)),
        )
        raw.commit()
    finally:
        raw.close()


def _populate_in_child(url: str, resources: int) -> None:
    """Write the estate from another process, so this one's peak memory is the evaluation's own."""
    root = Path(__file__).resolve().parent.parent
    code = f"from benchmarks.bench_rules import _populate; _populate({url!r}, {resources}, {DAYS})"
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True, env={**os.environ, "PYTHONPATH": str(root)})


def _peak_mib() -> float:
    """This process's peak resident memory so far (``VmHWM``; ``ru_maxrss`` where /proc is not there)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return max_rss_mib()


def _evaluate(url: str, resources: int, days: int) -> dict[str, Any]:
    """The rules stage (``evaluate_account``: profiles, rules, lifecycle) first, so the process's peak after it is
    the stage's own; then a second run (updates) and the profiles alone (all of them kept: a list)."""
    policy = load_policy()
    statements: list[str] = []
    event.listen(get_engine(url), "before_cursor_execute", lambda *a: statements.append(a[2]))
    before = _peak_mib()
    with measure(track_memory=False) as first, session_scope(url) as session:
        found = evaluate_account(session, account_id=ACCOUNT, region=REGION, now=NOW, policy=policy, lookback_days=days)
    rules_peak = _peak_mib()
    first_statements = len(statements)
    with measure(track_memory=False) as second, session_scope(url) as session:
        evaluate_account(session, account_id=ACCOUNT, region=REGION, now=NOW, policy=policy, lookback_days=days)
    second_statements = len(statements) - first_statements
    start, end = metric_window(NOW, days)
    with measure(track_memory=False) as built, session_scope(url) as session:
        profiles = len(
            build_profiles(
                ProfileInputRepository(session, account_id=ACCOUNT, region=REGION),
                start=start,
                end=end,
                catalog=get_catalog(),
            )
        )
    return {
        "profiles_cpu_s": round(built.cpu_seconds, 2),
        "evaluate_cpu_s": round(first.cpu_seconds, 2),
        "evaluate_wall_s": round(first.wall_seconds, 2),
        "re_evaluate_cpu_s": round(second.cpu_seconds, 2),
        "rules_and_lifecycle_cpu_s": round(first.cpu_seconds - built.cpu_seconds, 2),
        "ms_per_resource": round(1000 * first.cpu_seconds / resources, 3),
        "profiles": profiles,
        "findings": len(found),
        "sql_statements": first_statements,
        "sql_statements_second_run": second_statements,
        "rules_peak_rss_mib": round(rules_peak, 1),  # the process's peak after the rules stage, imports included
        "imports_rss_mib": round(before, 1),  # the same before it: the interpreter and the modules
    }


def _evaluate_in_child(url: str, resources: int) -> dict[str, Any]:
    """:func:`_evaluate` in a fresh process: its peak memory is one rules stage's, not this process's history."""
    root = Path(__file__).resolve().parent.parent
    code = (
        "import json; from benchmarks.bench_rules import _evaluate; "
        f"print(json.dumps(_evaluate({url!r}, {resources}, {DAYS})))"
    )
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, check=True, env=env, capture_output=True, text=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def run() -> list[BenchResult]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for resources in SIZES:
            url = f"sqlite:///{Path(tmp) / f'rules-{resources}.db'}"
            upgrade(url)
            with measure(track_memory=False) as written:
                _populate_in_child(url, resources)
            figures = _evaluate_in_child(url, resources)
            figures["write_store_s"] = round(written.wall_seconds, 1)
            results.append(BenchResult(name=f"rules R={resources:,} x {DAYS} days", figures=figures))
            get_engine(url).dispose()
    baseline = results[0]
    for result in results[1:]:
        result.baseline = baseline.name
        result.ratio = result.figures["evaluate_cpu_s"] / max(baseline.figures["evaluate_cpu_s"], 1e-9)
    profiles_only = BenchResult(
        name=f"profiles only R={SIZES[-1]:,} x {DAYS} days",
        figures={"cpu_s": results[-1].figures["profiles_cpu_s"]},
        baseline=results[-1].name,
        ratio=results[-1].figures["profiles_cpu_s"] / max(results[-1].figures["evaluate_cpu_s"], 1e-9),
    )
    peak = BenchResult(
        name=f"rules stage peak memory R={SIZES[-1]:,} (MiB)",
        figures={"peak_rss_mib": results[-1].figures["rules_peak_rss_mib"], "goal_mib": PEAK_GOAL_MIB},
        baseline=f"the goal, {PEAK_GOAL_MIB} MiB",
        ratio=results[-1].figures["rules_peak_rss_mib"] / PEAK_GOAL_MIB,
        goal=1.0,
    )
    return [*results, profiles_only, peak]
