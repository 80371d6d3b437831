"""The remediation tests' session: a plain one (committed at the end), because the apply and the rollback open their
own transactions (one to take the finding, one to act): a test commits what it built before calling them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker


@pytest.fixture
def session(session_factory: sessionmaker[Session]) -> Iterator[Session]:
    with session_factory() as s:
        yield s
        s.commit()
