"""What an export must be before anything of it is stored: every needed column there with the type family AWS
documents (per file), and every AWS line sane (per row). A failed check rejects the whole export with one line
naming the file, the row and the column; nothing is stored.

Rejected (AWS documents none of these as a possible value):
- a NULL usage date or cost (``line_item_usage_start_date``/``ChargePeriodStart``, ``line_item_unblended_cost``/
  ``EffectiveCost``: not nullable in the table dictionaries);
- a usage day outside the billing period;
- an amount beyond ±1e12 (the store keeps NUMERIC(18, 6): beyond that nothing is a bill);
- a value longer than the store keeps (an account id over 12 characters, a resource id over 1,024 ...);
- in a CSV file, a number that is not one.

Amounts summed past the store's precision are refused the same way (:func:`check_amount`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import Decimal

from chipwise.collect.bill_export.errors import BillError
from chipwise.collect.bill_export.formats import MAP, NUMERIC, TEXT, TIME
from chipwise.collect.bill_export.query import (
    AWS_PROVIDER,
    COST_COLUMN,
    DATE_COLUMN,
    SUMS,
    QuerySource,
    columns_read,
    family,
    logical_query,
)

LIMIT = Decimal("1e12")  # the store's NUMERIC(18, 6) holds less than 1e12
# The longest value the store keeps, per export column (what ends in a String(n) column).
LENGTHS: dict[str, int] = {
    "bill_payer_account_id": 12,
    "line_item_usage_account_id": 12,
    "BillingAccountId": 12,
    "SubAccountId": 12,
    "product_region_code": 32,
    "RegionId": 32,
    "line_item_resource_id": 1024,
    "ResourceId": 1024,
    "split_line_item_parent_resource_id": 1024,
    "line_item_product_code": 128,
    "x_ServiceCode": 128,
    "line_item_usage_type": 256,
    "x_UsageType": 256,
    "SkuMeter": 256,
    "savings_plan_savings_plan_a_r_n": 256,
    "reservation_reservation_a_r_n": 256,
    "CommitmentDiscountId": 256,
    "savings_plan_offering_type": 64,
    "savings_plan_instance_type_family": 64,
}


def type_family(duck_type: str) -> str:
    t = duck_type.upper()
    if t.startswith(("DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "HUGEINT", "SMALLINT", "TINYINT")):
        return NUMERIC
    if t.startswith("TIMESTAMP") or t == "DATE":
        return TIME
    if t.startswith("MAP"):
        return MAP
    if t.startswith("VARCHAR"):
        return TEXT
    return t.lower()


def check_described(
    described: dict[str, str], wanted: dict[str, str], shown: str, *, typed: bool, missing_ok: frozenset[str]
) -> None:
    """Every wanted column in a file's columns (``name → DuckDB type``), of the right type family when the file
    is typed (Parquet; CSV is text throughout): else a BillError naming file and column."""
    for column, kind in wanted.items():
        if column not in described:
            if column in missing_ok:
                continue
            raise BillError(f"{shown}: column {column} missing")
        found = type_family(described[column])
        if typed and found != kind:
            raise BillError(f"{shown}: column {column} is {described[column]}, expected {kind}")


def month_after(start: date) -> date:
    return date(start.year + start.month // 12, start.month % 12 + 1, 1)


def problems(src: QuerySource, period: str, read: dict[str, str]) -> list[tuple[str, str]]:
    """``(condition, "column: what")`` of each rejected value, in the order they are reported; conditions read
    the source's physical columns (in the source's dialect)."""
    fam = family(src.table)
    start = date.fromisoformat(f"{period}-01")
    when = src.col(DATE_COLUMN[fam])
    found: list[tuple[str, str]] = [
        (f"{when} IS NULL", f"{DATE_COLUMN[fam]}: NULL usage date"),
        (f"{src.col(COST_COLUMN[fam])} IS NULL", f"{COST_COLUMN[fam]}: NULL cost"),
    ]
    day = f"CAST({when} AS DATE)" if src.dialect == "athena" else f"CAST(CAST({when} AS TIMESTAMPTZ) AS DATE)"
    found.append(
        (
            f"{day} < DATE '{start}' OR {day} >= DATE '{month_after(start)}'",
            f"{DATE_COLUMN[fam]}: a day outside the billing period {period}",
        )
    )
    for column, kind in read.items():
        if src.physical.get(column) is None:
            continue
        if kind == NUMERIC:
            if src.data_format == "csv":
                found.append(
                    (
                        f"{src.col(column)} IS NOT NULL AND TRY_CAST({src.col(column)} AS DOUBLE) IS NULL",
                        f"{column}: not a number",
                    )
                )
            found.append((f"ABS(TRY_CAST({src.col(column)} AS DOUBLE)) > 1e12", f"{column}: beyond ±1e12"))
        elif column in LENGTHS:
            found.append(
                (f"length(CAST({src.col(column)} AS VARCHAR)) > {LENGTHS[column]}", f"{column}: longer than "
                 f"{LENGTHS[column]} characters")
            )  # fmt: skip
    return found


# Columns whose length is checked once per aggregated group (the query's output carries them as they are), not once
# per line: each export column → the query's column holding it (a commitment's terms: per commitment).
CHECKED_PER_GROUP: dict[str, str] = {
    "bill_payer_account_id": "sums.payer",
    "BillingAccountId": "sums.payer",
    "line_item_usage_account_id": "sums.account_id",
    "SubAccountId": "sums.account_id",
    "product_region_code": "sums.region",
    "RegionId": "sums.region",
    "line_item_product_code": "sums.service",
    "x_ServiceCode": "sums.service",
    "split_line_item_parent_resource_id": "sums.parent_resource_id",
    "savings_plan_savings_plan_a_r_n": "sums.commitment_arn",
    "reservation_reservation_a_r_n": "sums.commitment_arn",
    "CommitmentDiscountId": "sums.commitment_arn",
    "savings_plan_offering_type": "terms.offering_type",
    "savings_plan_instance_type_family": "terms.family",
}


def rejected_expr(src: QuerySource, period: str) -> str:
    """What the query says of each line: '' when it is sane, else the first problem ("column: what"); the
    aggregate keeps the worst of a group, so one pass reads and checks every line. Lengths the groups carry as
    they are (:data:`CHECKED_PER_GROUP`) are left to :func:`group_rejected_expr`."""
    found = [
        (cond, label)
        for cond, label in problems(src, period, columns_read(src.table, src.split))
        if not (label.endswith(" characters") and label.split(":", 1)[0] in CHECKED_PER_GROUP)
    ]
    return "CASE " + " ".join(f"WHEN {cond} THEN '{label}'" for cond, label in found) + " ELSE '' END"


def _length_checks(src: QuerySource, terms: bool) -> list[str]:
    """``WHEN`` clauses on the lengths the output carries: the sums' columns, or (``terms``) a commitment's."""
    by_output: dict[str, tuple[list[str], int]] = {}
    for column in columns_read(src.table, src.split):
        if column in CHECKED_PER_GROUP and column in LENGTHS and src.physical.get(column) is not None:
            names, _ = by_output.get(CHECKED_PER_GROUP[column], ([], 0))
            by_output[CHECKED_PER_GROUP[column]] = ([*names, column], LENGTHS[column])
    return [
        f"WHEN length({output}) > {limit} THEN '{' or '.join(names)}: longer than {limit} characters'"
        for output, (names, limit) in by_output.items()
        if output.startswith("terms.") == terms
    ]


def terms_rejected_expr(src: QuerySource) -> str:
    """What is wrong with a commitment's terms (``terms.family`` longer than the store keeps ...), '' if nothing:
    checked once per commitment when the terms are read apart (:func:`.query.terms_query`)."""
    checks = _length_checks(src, terms=True)
    return "CASE " + " ".join([*checks, "ELSE '' END"]) if checks else "''"


def group_rejected_expr(src: QuerySource, scaled: bool = False, terms: bool = True) -> str:
    """The checks made once per aggregated group: ``WHEN <condition> THEN '<column: what>'`` clauses over the
    query's output: the lengths the groups carry (``sums.account_id``, ``terms.family`` ...; a commitment's ARN
    named by its columns), and each sum within ±1e12 (the store's NUMERIC(18, 6)); ``scaled``: the sums are
    DOUBLE integers of 1e-10 (:mod:`.grouped`); ``terms`` false: the commitment's terms are not joined (checked
    apart: :func:`terms_rejected_expr`)."""
    lengths = _length_checks(src, terms=False) + (_length_checks(src, terms=True) if terms else [])
    limit = "1e22" if scaled else str(int(LIMIT))  # scaled: the sums are integers of 1e-10 (1e22 is exact)
    beyond = " OR ".join(f"ABS(sums.{name}) >= {limit}" for agg, name in SUMS if agg == "SUM")
    label = f"{COST_COLUMN[family(src.table)]}: a sum of lines beyond what a bill can hold (±1e12)"
    return " ".join([*lengths, f"WHEN {beyond} THEN '{label}'"])


def checked_query(src: QuerySource, period: str) -> str:
    """The logical query with every check: per line in the sums' pass, per group on what the groups carry."""
    return logical_query(src, rejected_expr(src, period), group_rejected_expr(src))


def value_check_sql(src: QuerySource, relation: str, period: str, read: dict[str, str]) -> str:
    """The first AWS line of ``relation`` (a read with ``filename`` and, for Parquet, ``file_row_number``) with a
    rejected value: ``(filename, row or NULL, "column: what")``; no row when every line is sane."""
    found = problems(src, period, read)
    case = " ".join(f"WHEN {cond} THEN '{label}'" for cond, label in found)
    where = " OR ".join(f"({cond})" for cond, _ in found)
    aws = f"{src.col('ProviderName')} = '{AWS_PROVIDER}' AND " if family(src.table) == "focus" else ""
    row = "file_row_number + 1" if src.data_format == "parquet" else "NULL"
    return f"SELECT filename, {row}, CASE {case} END FROM {relation} WHERE {aws}({where}) LIMIT 1"


def row_sql(src: QuerySource, relation: str, period: str, read: dict[str, str]) -> str:
    """The data row number (1 = the first line after the header) of the first rejected line of one CSV file."""
    found = problems(src, period, read)
    where = " OR ".join(f"({cond})" for cond, _ in found)
    aws = f"{src.col('ProviderName')} = '{AWS_PROVIDER}' AND " if family(src.table) == "focus" else ""
    return f"SELECT MIN(r) FROM (SELECT row_number() OVER () AS r, * FROM {relation}) WHERE {aws}({where})"


def rejected(file: str, row: int | None, what: str) -> BillError:
    where = f"row {row}, column " if row is not None else "column "
    return BillError(f"{file}: {where}{what} (export rejected, nothing stored)")


def check_amount(value: Decimal, what: str) -> Decimal:
    """A summed amount the store can keep (NUMERIC(18, 6)); else a BillError naming it."""
    if abs(value) >= LIMIT:
        raise BillError(f"{what}: {value:.2E} is beyond what a bill can hold (±1e12; export rejected, nothing stored)")
    return value


def check_payers(payers: Sequence[str], where: str) -> str:
    """The one payer account of an export's AWS lines (an export is set up in one payer account)."""
    found = sorted({p for p in payers if p})
    if len(found) != 1:
        listed = ", ".join(found) or "none"
        raise BillError(f"{where}: expected one payer account in the export, found {listed}")
    return found[0]
