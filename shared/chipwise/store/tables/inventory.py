"""Accounts and the inventory of resources seen in them."""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.clock import utcnow
from chipwise.models.resources import resource_key
from chipwise.store.base import Base


class Account(Base):
    __tablename__ = "accounts"

    account_id: Mapped[str] = mapped_column(String(12), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(256))
    role_arn: Mapped[str | None] = mapped_column(String(2048))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_scan_at: Mapped[datetime | None]


class Resource(Base):
    """One EC2 instance, SageMaker endpoint, training job, Batch compute environment/queue/job.

    ``(arn, variant)`` is the stable identity (:attr:`key`): ``arn`` is always an ARN AWS accepts, and ``variant``
    names one production variant of a multi-variant endpoint (``arn`` is then the endpoint's; empty otherwise);
    ``parent_arn`` is the endpoint of a variant or an inference component. ``details`` keeps what the collector
    saw (variants, serverless config, image, environment, catalog facts), ``hints`` the workload hints (model
    family, training/inference, custom CUDA, owner).
    """

    __tablename__ = "resources"
    __table_args__ = (
        UniqueConstraint("arn", "variant"),
        Index("ix_resources_account_region_kind", "account_id", "region", "kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.account_id"))
    region: Mapped[str] = mapped_column(String(32))
    arn: Mapped[str] = mapped_column(String(2048))
    variant: Mapped[str] = mapped_column(String(256), default="", server_default="")
    parent_arn: Mapped[str | None] = mapped_column(String(2048))
    kind: Mapped[str] = mapped_column(String(48))
    name: Mapped[str] = mapped_column(String(512))
    instance_type: Mapped[str | None] = mapped_column(String(64))
    instance_count: Mapped[int] = mapped_column(default=1)
    platform: Mapped[str] = mapped_column(String(16))
    state: Mapped[str | None] = mapped_column(String(32))
    unknown_instance_type: Mapped[bool] = mapped_column(default=False)
    launched_at: Mapped[datetime | None]
    ended_at: Mapped[datetime | None]
    tags: Mapped[dict[str, Any]] = mapped_column(default=dict)
    hints: Mapped[dict[str, Any]] = mapped_column(default=dict)
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)
    first_seen: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(default=utcnow)
    last_scan_id: Mapped[str | None] = mapped_column(String(36))

    @property
    def key(self) -> str:
        """Chipwise's id of this resource (:func:`chipwise.models.resources.resource_key`)."""
        return resource_key(self.arn, self.variant)
