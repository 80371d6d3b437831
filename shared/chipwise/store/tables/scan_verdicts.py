"""One row per verdict of the latest scan document of each account and region (``chipwise resources`` counts them
in SQL, issue 37)."""

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from chipwise.store.base import Base
from chipwise.store.tables.scans import Scan  # noqa: F401  (mapped first: foreign keys name it)


class ScanVerdict(Base):
    """A verdict of a scan's document as the scan stored it (before the findings settle it again), at its
    ``position`` in the document's ``verdicts``; the resource's ARN and variant (what a finding is matched on) and
    its team (the document's ``resources[].team``). Written with the document (:meth:`ScanRepository.save_document`)
    and kept for the latest finished scan of each account and region only (so the table holds about one row per
    resource, whatever the history); deleted with the scan."""

    __tablename__ = "scan_verdicts"
    # a scan's verdict of a resource, by the resource's ARN and variant (what a finding is matched on)
    __table_args__ = (Index("ix_scan_verdicts_scan_id", "scan_id", "resource_arn", "resource_variant"),)

    scan_id: Mapped[str] = mapped_column(String(36), ForeignKey("scans.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    resource_id: Mapped[str] = mapped_column(String(2400))
    resource_arn: Mapped[str] = mapped_column(String(2048))
    resource_variant: Mapped[str] = mapped_column(String(256))
    team: Mapped[str | None] = mapped_column(String(256))
    verdict: Mapped[str] = mapped_column(String(16))
