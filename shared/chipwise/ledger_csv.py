"""Findings as CSV, in ledger order: one row per finding with its ledger columns (plain numbers, no currency signs,
so spreadsheets sum them) and its resource's verdict. ``chipwise findings --format csv`` streams it; the report
writes it beside its HTML (where the HTML shows the top findings only).

The verdicts are handed in (``resource id -> (verdict, why)``), worked out above this module from the same source
as ``chipwise resources`` (:func:`chipwise.pipeline.findings.resource_verdicts`)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from typing import IO

from chipwise.links import console_url
from chipwise.presentation import Ledger, LedgerRow, action_words, ledger_money, target_label

CSV_COLUMNS = (
    "rank",
    "counted",
    "group",
    "basis",
    "saving_usd",
    "net_value_12m_usd",
    "one_time_cost_usd",
    "payback_months",
    "verdict",
    "excluded_reason",
    "resource_verdict",
    "resource_verdict_reason",
    "owner",
    "finding_id",
    "rule_id",
    "status",
    "account_id",
    "region",
    "resource_name",
    "resource_id",
    "instance_type",
    "instance_count",
    "monthly_cost_usd",
    "estimated_monthly_savings_usd",
    "measured_monthly_savings_usd",
    "action",
    "target",
    "confidence",
    "effort",
    "first_seen",
    "last_seen",
    "console_url",
)


def write_csv(
    figures: Ledger,
    stream: IO[str],
    owners: dict[str, str] | None = None,
    *,
    start: int = 1,
    header: bool = True,
    verdicts: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    """The findings as CSV (plain numbers, no currency signs: spreadsheets sum them), in ledger order. The sum of
    ``saving_usd`` over the rows with ``counted`` = yes is the headline to the cent; the others say why not.
    ``start`` numbers the first row (a batch of a longer list); ``header`` writes the column names; ``verdicts``
    gives each resource's verdict and its reason (empty columns for a resource it does not name)."""
    writer = csv.writer(stream, lineterminator="\n")
    if header:
        writer.writerow(CSV_COLUMNS)
    owners = owners or {}
    verdicts = verdicts or {}
    # every row handed to the writer at once: an organisation's report writes every finding (20,000 at 50,000
    # resources)
    writer.writerows(
        _row(index, row, owners, verdicts.get(row.document.resource_id, _NO_VERDICT))
        for index, row in enumerate(figures.rows, start=start)
    )


_NO_VERDICT = ("", "")


def _row(index: int, row: LedgerRow, owners: Mapping[str, str], verdict: tuple[str, str]) -> list[object]:
    """One finding's CSV row: the ledger's words and money (:func:`chipwise.presentation.ledger_money`, as the JSON
    has them; not :func:`~chipwise.presentation.ledger_fields`, whose next step per row the CSV does not print),
    its resource's verdict, then the document's columns."""
    d = row.document
    saving, net_value, one_time, payback = ledger_money(row)
    return [
        index,
        "yes" if row.counted else "no",
        row.group_words,
        row.basis,
        saving,
        net_value or "",
        one_time,
        payback or "",
        row.verdict,
        row.excluded_reason or "",
        *verdict,
        owners.get(d.resource_id, ""),
        d.finding_id,
        d.rule_id,
        d.status,
        d.account_id,
        d.region,
        d.resource_name,
        d.resource_id,
        d.instance_type or "",
        d.instance_count,
        f"{d.monthly_cost_usd:.2f}",
        f"{d.estimated_monthly_savings_usd:.2f}",
        "" if d.measured_monthly_savings_usd is None else f"{d.measured_monthly_savings_usd:.2f}",
        action_words(d.recommendation.action) if row.actionable else "",
        (target_label(d.recommendation) or "") if row.actionable else "",
        d.confidence if row.actionable else "",
        d.effort,
        d.first_seen.isoformat(),
        d.last_seen.isoformat(),
        console_url(d.resource_id, d.region, d.resource_kind, d.resource_name),
    ]
