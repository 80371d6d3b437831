"""${message}"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Text
from alembic import op

import chipwise.store.base
from chipwise.store.migrations import columns as col
${imports if imports else ""}

revision: str = ${repr(up_revision)}
down_revision: str | None = ${repr(down_revision)}


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    ${downgrades if downgrades else "pass"}
