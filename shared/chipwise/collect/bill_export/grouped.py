"""The bill query's first step with DuckDB: the export's lines summed per raw key before any per-line logic.

Hourly lines collapse about 24 times into resource-days, so every canonical expression (the line item type's
CASE, the compute test, the scope ...) runs once per group of raw lines, not once per line. The groups are keyed by
the columns the canonical expressions read (account, region, UTC day, resource id, product code, usage type, line
item type, pricing term, commitment ARNs, the list rate as AWS prints it ...; a text column the canonical
expressions only compare with one literal, such as CUR's ``pricing_term = 'Spot'``, by that comparison: a BOOLEAN
is cheaper to hash than the text) and carry each amount column summed, and the number of lines;
:func:`chipwise.collect.bill_export.query.logical_query` then reads the groups as it would read lines.

Exact cents without a decimal cast of every amount: a DOUBLE amount ``x`` becomes the integer ``round(x * 1e10)``
(exactly the integer that ``CAST(x AS DECIMAL(38,10))`` holds: DuckDB's cast multiplies by 1e10 and rounds the
same way), summed as DOUBLE, which is exact while every partial sum stays below 2^53; a group of ``n`` lines
whose largest such integer is ``m`` is exact when ``n * m < 2^52`` (``n = 1`` always is). A group that cannot be
shown exact this way is flagged ``inexact__``: its result rows are not used, and the query runs once more with
every amount cast to ``DECIMAL(38,10)`` per line (:func:`grouped_relation` with ``exact``), of which only the
flagged rows are kept. When every summed amount is a DOUBLE (or 0), the groups' integer sums are summed again as
DOUBLE by the per-resource-day step and made decimals once, at the end (``scaled``: a result row is flagged when
its lines' count times the largest integer reaches 2^51). Amounts of other types (a CSV's text, a DECIMAL
column) are always cast per line. Amounts that are 0 or NULL on every line and text columns with one value are
neither summed nor keyed (:class:`Footer`).

The checks of :mod:`.validation` move to where they cost least: a NULL or out-of-period day and an over-long key
are checked once per group (the key is the group's); an amount beyond ±1e12 and a NULL cost are proven from the
Parquet footer's statistics where they can be (``proven``: the columns whose every row group's minimum, maximum
and NULL count prove them), and checked on every line otherwise (a CSV, a column without statistics, a row group
whose statistics do not prove it)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date

from chipwise.collect.bill_export.formats import NUMERIC
from chipwise.collect.bill_export.query import (
    AWS_PROVIDER,
    COST_COLUMN,
    DATE_COLUMN,
    MONEY,
    TERMS,
    TO_MONEY,
    QuerySource,
    canonical_lines,
    columns_read,
    family,
)
from chipwise.collect.bill_export.validation import CHECKED_PER_GROUP, LENGTHS, month_after, problems

EXACT_BELOW = 2**52  # n * m below it: a DOUBLE sum of n integers of at most m (each partial sum below 2^53) is exact
SCALE = "1e10"  # the scale of MONEY (DECIMAL(38,10))
FAST_TYPES = ("DOUBLE", "FLOAT", "REAL")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _fast(duck_type: str) -> bool:
    return duck_type.upper() in FAST_TYPES


@dataclass(frozen=True)
class Footer:
    """What the Parquet footers' statistics prove of the columns read, for every row group of every file:
    ``proven``, the numeric columns within ±1e12 (the cost column: also never NULL); ``zero``, the amounts 0 or
    NULL on every line (not summed: 0); ``constant``, the text columns with one value on every line (not a key:
    that value)."""

    proven: frozenset[str] = frozenset()
    zero: frozenset[str] = frozenset()
    constant: Mapping[str, str] = field(default_factory=dict)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass
class _Columns:
    """The first step's columns: its keys (expression, name), its aggregates, and what the groups hand on."""

    keys: list[tuple[str, str]] = field(default_factory=list)
    aggregates: list[str] = field(default_factory=list)
    converted: list[str] = field(default_factory=list)
    key_columns: set[str] = field(default_factory=set)
    fast: list[str] = field(default_factory=list)


def _tested_literal(quoted: str, used: str) -> str | None:
    """The one literal a text column is only ever compared with in the canonical expressions (CUR's
    ``pricing_term = 'Spot'``, FOCUS's ``PricingCategory = 'Dynamic'``), if it is: the groups are then keyed by that
    test (a BOOLEAN: cheaper to hash than the text) and hand on the literal, '' or NULL, which every such
    comparison reads as it reads the raw text."""
    found: set[str] = set(re.findall(re.escape(quoted) + r" = '((?:[^']|'')+)'", used))
    if len(found) != 1 or quoted in re.sub(re.escape(quoted) + r" = '(?:[^']|'')+'", "", used):
        return None
    (literal,) = found
    return literal.replace("''", "'")


def _amount(columns: _Columns, quoted: str, *, exact: bool, scaled: bool) -> None:
    """A DOUBLE amount: summed as integers of 1e-10 (or, ``exact``, as decimals, line by line)."""
    columns.fast.append(quoted)
    summed = f"CAST({quoted} AS {MONEY})" if exact else f"round({quoted} * {SCALE})"
    columns.aggregates.append(f"SUM({summed}) AS {quoted}")
    columns.converted.append(
        quoted if exact or scaled else f"CASE WHEN NOT inexact__ THEN {TO_MONEY.format(quoted, MONEY)} END AS {quoted}"
    )


def _columns(src: QuerySource, types: Mapping[str, str], footer: Footer, *, exact: bool, scaled: bool) -> _Columns:
    lines = canonical_lines(src)
    used = " ".join(expr for name, expr in lines.items() if name not in TERMS)
    others = " ".join(expr for name, expr in lines.items() if name not in (*TERMS, "list_rate"))
    date_column = DATE_COLUMN[family(src.table)]
    columns = _Columns()
    for name, kind in columns_read(src.table, src.split).items():
        physical, quoted = src.physical.get(name), src.col(name)
        if physical is None or quoted not in used:
            continue
        if name == date_column:  # the UTC day (a naive TIMESTAMP is UTC already)
            naive = types.get(physical, "").upper() == "TIMESTAMP"
            day = f"CAST({quoted} AS DATE)" if naive else f"CAST(CAST({quoted} AS TIMESTAMPTZ) AS DATE)"
            columns.keys.append((day, quoted))
            columns.key_columns.add(name)
            columns.converted.append(quoted)
        elif kind == NUMERIC and quoted not in others:  # FOCUS's ListUnitPrice: the list rate, a MAX
            columns.aggregates.append(f"MAX(CAST({quoted} AS {MONEY})) AS {quoted}")
            columns.converted.append(quoted)
        elif kind == NUMERIC and name in footer.zero:
            columns.converted.append(f"CAST(0 AS {'DOUBLE' if scaled else MONEY}) AS {quoted}")
        elif kind == NUMERIC and _fast(types.get(physical, "")):
            _amount(columns, quoted, exact=exact, scaled=scaled)
        elif kind == NUMERIC:
            columns.aggregates.append(f"SUM(CAST({quoted} AS {MONEY})) AS {quoted}")
            columns.converted.append(quoted)
        elif name in footer.constant:  # checked as the groups' keys are (its one value)
            columns.converted.append(f"{_literal(footer.constant[name])} AS {quoted}")
            columns.key_columns.add(name)
        elif name not in LENGTHS and (literal := _tested_literal(quoted, used)) is not None:
            columns.keys.append((f"{quoted} = {_literal(literal)}", quoted))
            as_text = f"CASE WHEN {quoted} THEN {_literal(literal)} WHEN NOT {quoted} THEN '' END"
            columns.converted.append(f"{as_text} AS {quoted}")
        else:
            columns.keys.append((quoted, quoted))
            columns.key_columns.add(name)
            columns.converted.append(quoted)
    return columns


def _checks(
    src: QuerySource, period: str, footer: Footer, key_columns: set[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """What each group's keys prove wrong (a NULL or out-of-period day, a key too long), and what is left to
    check on every line (what the Parquet statistics do not prove)."""
    fam = family(src.table)
    date_column, cost_column = DATE_COLUMN[fam], COST_COLUMN[fam]
    read = columns_read(src.table, src.split)
    start = date.fromisoformat(f"{period}-01")
    when = src.col(date_column)
    group_checks = [
        (f"{when} IS NULL", f"{date_column}: NULL usage date"),
        (f"{when} < DATE '{start}' OR {when} >= DATE '{month_after(start)}'",
         f"{date_column}: a day outside the billing period {period}"),
    ]  # fmt: skip
    value = {column: _literal(footer.constant[column]) if column in footer.constant else src.col(column)
             for column in key_columns}  # fmt: skip
    group_checks += [
        (f"length(CAST({value[column]} AS VARCHAR)) > {LENGTHS[column]}",
         f"{column}: longer than {LENGTHS[column]} characters")
        for column in read if column in key_columns and column in LENGTHS
    ]  # fmt: skip
    by_group = {label for _, label in group_checks}
    per_line = [
        (condition, label)
        for condition, label in problems(src, period, read)
        if label not in by_group
        and not (label.endswith(" characters") and label.split(":", 1)[0] in CHECKED_PER_GROUP)
        and not (label.endswith("beyond ±1e12") and label.split(":", 1)[0] in footer.proven)
        and not (label == f"{cost_column}: NULL cost" and cost_column in footer.proven)
    ]  # fmt: skip
    return group_checks, per_line


def grouped_relation(
    src: QuerySource, period: str, types: Mapping[str, str], footer: Footer, *, exact: bool = False
) -> QuerySource:
    """The source as groups of raw lines (a subquery over the files), to read as ``grouped`` by
    :func:`~chipwise.collect.bill_export.query.logical_query`. ``types``: each physical column's DuckDB type;
    ``footer``: what the Parquet statistics prove. ``exact``: every amount cast per line (the caller keeps the
    rows the fast read flagged)."""
    lines = canonical_lines(src)
    others = " ".join(expr for name, expr in lines.items() if name not in (*TERMS, "list_rate"))
    read = columns_read(src.table, src.split)
    # scalable: every summed amount a DOUBLE (or 0): the groups hand their integer sums on as they are, summed
    # again as DOUBLE and made decimals once, at the end (query.TO_MONEY); else each group's sums become decimals
    scalable = all(
        _fast(types.get(str(src.physical.get(name)), "")) or name in footer.zero
        for name, kind in read.items()
        if kind == NUMERIC and src.physical.get(name) is not None and src.col(name) in others
    )
    scaled = scalable and not exact
    columns = _columns(src, types, footer, exact=exact, scaled=scaled)
    group_checks, per_line = _checks(src, period, footer, columns.key_columns)
    aggregates = list(columns.aggregates)
    if per_line:
        case = " ".join(f"WHEN {condition} THEN '{label}'" for condition, label in per_line)
        aggregates.append(f"MAX(CASE {case} ELSE '' END) AS rejected__")
    line_verdict = "rejected__" if per_line else "''"
    largest = f"MAX(GREATEST({', '.join(f'abs({q})' for q in columns.fast)})) * {SCALE}" if columns.fast else "0"
    aggregates += ["COUNT(*) AS line_items__", f"{largest} AS largest__"]
    conditions = [src.filter] if src.filter else []
    if family(src.table) == "focus":
        conditions.append(f"{src.col('ProviderName')} = '{AWS_PROVIDER}'")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    first = (
        f"SELECT {', '.join([*(f'{expr} AS {alias}' for expr, alias in columns.keys), *aggregates])}"
        f" FROM {src.relation}{where} GROUP BY {', '.join(expr for expr, _ in columns.keys)}"
    )
    flag = f"COALESCE(line_items__ > 1 AND line_items__ * largest__ >= {EXACT_BELOW}, false)"
    checks = " ".join(f"WHEN {condition} THEN '{label}'" for condition, label in group_checks)
    verdict = f"CASE WHEN {line_verdict} <> '' THEN {line_verdict} {checks} ELSE '' END"
    second = (
        f"SELECT {', '.join(columns.converted)}, line_items__, largest__, {verdict} AS rejected__, inexact__"
        f" FROM (SELECT *, {flag} AS inexact__ FROM ({first}))"
    )
    return replace(src, relation=f"({second})", filter="", scaled=scaled, flag_sums=scalable)
