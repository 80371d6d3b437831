"""Evaluating an account takes the same few SQL statements whatever its size: no query per resource.

The estate is the benchmark's (``benchmarks/bench_rules.py``: every shape the rules look at), written at two sizes
into one store under two accounts; the statements of ``evaluate_account`` are counted with a
``before_cursor_execute`` listener, on the first run (findings inserted) and the second (findings updated).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from analyse_factories import count_statements
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

from chipwise.pipeline.evaluate import evaluate_account
from chipwise.pipeline.policy import load_policy
from chipwise.store.tables import Account, CostRecord, MetricCoverage, MetricRollup, NeuronRollup, Resource

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from benchmarks.bench_rules import NOW, estate, neuron_rollups, rollups

DAYS = 2
SMALL, LARGE = ("111111111111", 200, 1), ("222222222222", 1000, 10_001)  # account, resources, first id
ROLLUP = ("resource_id", "namespace", "metric", "hour", "average", "maximum", "sum")
NEURON = (
    "account_id",
    "instance_id",
    "runtime_tag",
    "hour",
    "neuroncore_utilization_max",
    "neuroncore_utilization_avg",
    "cores_in_use",
    "device_memory_used_max",
    "executions_completed",
)


def _write(session: Session, account: str, resources: int, first_id: int) -> None:
    data = estate(resources, DAYS, account=account, first_id=first_id)
    session.add(Account(account_id=account))
    session.flush()
    for table, rows in ((Resource, data.resources), (MetricCoverage, data.coverage), (CostRecord, data.costs)):
        session.execute(insert(table), rows)
    session.execute(
        insert(MetricRollup), [dict(zip(ROLLUP, r, strict=True)) for r in rollups(resources, DAYS, first_id=first_id)]
    )
    neuron: list[dict[str, Any]] = [
        {**dict(zip(NEURON, r, strict=True)), "reports": 4} for r in neuron_rollups(resources, DAYS, account=account)
    ]
    session.execute(insert(NeuronRollup), neuron)


def _evaluate(session_factory: sessionmaker[Session], account: str) -> tuple[int, int]:
    with session_factory.begin() as session, count_statements(session) as statements:
        found = evaluate_account(
            session, account_id=account, region="us-east-1", now=NOW, policy=load_policy(), lookback_days=DAYS
        )
    return len(statements), len(found)


def test_the_statement_count_does_not_depend_on_the_number_of_resources(
    session_factory: sessionmaker[Session],
) -> None:
    # Given two accounts of 200 and 1,000 resources with 2 days of hourly rollups each
    with session_factory.begin() as session:
        for account, resources, first_id in (SMALL, LARGE):
            _write(session, account, resources, first_id)
    # When each is evaluated twice (findings inserted, then updated)
    small = [_evaluate(session_factory, SMALL[0]) for _ in range(2)]
    large = [_evaluate(session_factory, LARGE[0]) for _ in range(2)]
    # Then both take the same handful of statements, while the large one has five times the findings
    assert [s for s, _ in small] == [s for s, _ in large]
    assert all(s <= 12 for s, _ in small)
    assert large[0][1] == 5 * small[0][1] > 0
