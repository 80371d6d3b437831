"""real identifiers: a resource's and a finding's ARN is one AWS accepts; the variant is its own column

A production variant of a multi-variant endpoint was stored under a made-up ARN
(``…:endpoint/<name>/variant/<VariantName>``) and an inference component under its endpoint's ARN
(``…:endpoint/<name>/inference-component/<component>``). Now the variant's ARN is its endpoint's with the variant
in ``variant`` (``resource_variant`` on findings), the component's is its own
(``…:inference-component/<component>``), and ``parent_arn`` names the endpoint of either. Rows keep their ids, so
findings keep their history (recommendations, benchmark runs, remediations, realised savings).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004_i25_ids"
down_revision: str | None = "0003_i28_act"

OLD_VARIANT = "/variant/"
OLD_COMPONENT = "/inference-component/"


def _real(arn: str) -> tuple[str, str, str | None]:
    """(ARN AWS accepts, variant or "", parent endpoint ARN or None) of a stored ARN."""
    if OLD_VARIANT in arn:
        endpoint, variant = arn.split(OLD_VARIANT, 1)
        return endpoint, variant, endpoint
    if OLD_COMPONENT in arn:
        endpoint, component = arn.split(OLD_COMPONENT, 1)
        head = endpoint.split(":endpoint/", 1)[0]
        return f"{head}:inference-component/{component}", "", endpoint
    return arn, "", None


def _made_up(arn: str, variant: str, parent: str | None) -> str:
    """The stored ARN of the revision before (for the downgrade)."""
    if variant:
        return f"{arn}{OLD_VARIANT}{variant}"
    if parent and ":inference-component/" in arn:
        return f"{parent}{OLD_COMPONENT}{arn.split(':inference-component/', 1)[1]}"
    return arn


_resources = sa.table(
    "resources",
    sa.column("id", sa.Integer),
    sa.column("arn", sa.String),
    sa.column("variant", sa.String),
    sa.column("parent_arn", sa.String),
)
_findings = sa.table(
    "findings",
    sa.column("id", sa.String),
    sa.column("resource_arn", sa.String),
    sa.column("resource_variant", sa.String),
)
_remediations = sa.table("remediations", sa.column("id", sa.String), sa.column("resource_arn", sa.String))


def _pattern(column: sa.ColumnClause[str]) -> sa.ColumnElement[bool]:
    return sa.or_(column.like(f"%{OLD_VARIANT}%"), column.like(f"%{OLD_COMPONENT}%"))


def upgrade() -> None:
    with op.batch_alter_table("resources", schema=None) as batch_op:
        batch_op.add_column(sa.Column("variant", sa.String(length=256), server_default="", nullable=False))
        batch_op.add_column(sa.Column("parent_arn", sa.String(length=2048), nullable=True))
        batch_op.drop_constraint("uq_resources_arn", type_="unique")
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resource_variant", sa.String(length=256), server_default="", nullable=False))
        batch_op.drop_constraint("uq_findings_rule_id_resource_arn", type_="unique")

    bind = op.get_bind()
    rows = bind.execute(sa.select(_resources.c.id, _resources.c.arn).where(_pattern(_resources.c.arn))).all()
    for rid, arn in rows:
        real, variant, parent = _real(str(arn))
        bind.execute(
            _resources.update().where(_resources.c.id == rid).values(arn=real, variant=variant, parent_arn=parent)
        )
    rows = bind.execute(
        sa.select(_findings.c.id, _findings.c.resource_arn).where(_pattern(_findings.c.resource_arn))
    ).all()
    for fid, arn in rows:
        real, variant, _ = _real(str(arn))
        bind.execute(
            _findings.update().where(_findings.c.id == fid).values(resource_arn=real, resource_variant=variant)
        )
    rows = bind.execute(
        sa.select(_remediations.c.id, _remediations.c.resource_arn).where(_pattern(_remediations.c.resource_arn))
    ).all()
    for rid, arn in rows:
        bind.execute(_remediations.update().where(_remediations.c.id == rid).values(resource_arn=_real(str(arn))[0]))

    with op.batch_alter_table("resources", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_resources_arn_variant", ["arn", "variant"])
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.create_unique_constraint(
            "uq_findings_rule_id_resource_arn_resource_variant", ["rule_id", "resource_arn", "resource_variant"]
        )


def downgrade() -> None:
    bind = op.get_bind()
    parents = {}
    for rid, arn, variant, parent in bind.execute(
        sa.select(_resources.c.id, _resources.c.arn, _resources.c.variant, _resources.c.parent_arn).where(
            sa.or_(_resources.c.variant != "", _resources.c.parent_arn.is_not(None))
        )
    ).all():
        parents[str(arn)] = parent
        old = _made_up(str(arn), str(variant or ""), parent)
        bind.execute(_resources.update().where(_resources.c.id == rid).values(arn=old))
    for fid, arn, variant in bind.execute(
        sa.select(_findings.c.id, _findings.c.resource_arn, _findings.c.resource_variant)
    ).all():
        old = _made_up(str(arn), str(variant or ""), parents.get(str(arn)))
        if old != arn:
            bind.execute(_findings.update().where(_findings.c.id == fid).values(resource_arn=old))
    for rid, arn in bind.execute(sa.select(_remediations.c.id, _remediations.c.resource_arn)).all():
        old = _made_up(str(arn), "", parents.get(str(arn)))
        if old != arn:
            bind.execute(_remediations.update().where(_remediations.c.id == rid).values(resource_arn=old))
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_constraint("uq_findings_rule_id_resource_arn_resource_variant", type_="unique")
        batch_op.drop_column("resource_variant")
        batch_op.create_unique_constraint("uq_findings_rule_id_resource_arn", ["rule_id", "resource_arn"])
    with op.batch_alter_table("resources", schema=None) as batch_op:
        batch_op.drop_constraint("uq_resources_arn_variant", type_="unique")
        batch_op.drop_column("parent_arn")
        batch_op.drop_column("variant")
        batch_op.create_unique_constraint("uq_resources_arn", ["arn"])
