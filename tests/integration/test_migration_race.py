"""Two first-run migrations of one empty database at once (issue 26 item 7), in two processes: both succeed, the
schema is created once and is current. SQLite always, PostgreSQL too when CHIPWISE_TEST_DATABASE_URL is set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from chipwise.store.schema import schema_status
from chipwise.store.session import get_engine, table_names

HANG_GUARD_S = 300  # only stops a hung child from hanging the suite
# Each child waits for the other at a file barrier, then migrates.
CHILD = """
import sys, time
from pathlib import Path
from chipwise.store.session import upgrade
url, me, other = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
me.touch()
while not other.exists():
    time.sleep(0.01)
upgrade(url)
print("migrated")
"""


def test_two_first_migrations_in_two_processes_both_succeed(empty_url: str, tmp_path: Path) -> None:
    # Given an empty database and two deploys migrating it at the same moment, in two processes
    a, b = tmp_path / "a.ready", tmp_path / "b.ready"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, empty_url, str(me), str(other)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in ((a, b), (b, a))
    ]
    outputs = [child.communicate(timeout=HANG_GUARD_S) for child in children]
    # Then both succeeded (the second waited for the lock and found the schema there)
    assert [child.returncode for child in children] == [0, 0], [err[-2000:] for _, err in outputs]
    assert all("migrated" in out for out, _ in outputs)
    # And the schema is current, with one revision row
    assert schema_status(empty_url).state == "current"
    assert "notified_scans" in table_names(empty_url)
    with get_engine(empty_url).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
