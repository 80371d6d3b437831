"""Evaluating an account takes the same few SQL statements whatever its size: no query per resource. The profiles
are built a batch of resources at a time (``PROFILE_BATCH``, issue 37's bounded memory), each batch with the same
five statements (its resources, their coverage, neuron-monitor rows and the CloudWatch series in two): six more
statements, then five per batch (11 at 1,000 resources, 56 at 10,000).

The estate is the benchmark's (``benchmarks/bench_rules.py``: every shape the rules look at), written at two sizes
into one store under two accounts; the statements of ``evaluate_account`` are counted with a
``before_cursor_execute`` listener, on the first run (findings inserted) and the second (findings updated).
"""

from __future__ import annotations

from analyse_factories import NOW, count_statements, write_estate
from sqlalchemy.orm import Session, sessionmaker

from chipwise.analyse.profile_builder import PROFILE_BATCH
from chipwise.pipeline.evaluate import evaluate_account
from chipwise.pipeline.policy import load_policy

DAYS = 2
SMALL, LARGE = ("111111111111", 200, 1), ("222222222222", PROFILE_BATCH, 10_001)  # account, resources, first id
BATCHES = ("333333333333", 2 * PROFILE_BATCH + 500, 20_001)  # three batches
PER_BATCH = 5


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
        for account, resources, first_id in (SMALL, LARGE, BATCHES):
            write_estate(session, account, resources, DAYS, first_id)
    # When each is evaluated twice (findings inserted, then updated)
    small = [_evaluate(session_factory, SMALL[0]) for _ in range(2)]
    large = [_evaluate(session_factory, LARGE[0]) for _ in range(2)]
    batches = [_evaluate(session_factory, BATCHES[0]) for _ in range(2)]
    # Then both take the same handful of statements, while the large one has five times the findings
    assert [s for s, _ in small] == [s for s, _ in large]
    assert all(s <= 12 for s, _ in small)
    assert large[0][1] == 5 * small[0][1] > 0
    # And an account of three batches takes five statements more for each batch after the first
    assert [s for s, _ in batches] == [s + 2 * PER_BATCH for s, _ in small]
    assert [s for s, _ in small] == [11, 10]  # docs/performance.md: 6 + 5 per batch on a first run, 10 on a re-run
