"""The bill query's first step with DuckDB: the export's lines summed per raw key before any per-line logic.

Hourly lines collapse about 24 times into resource-days, so every canonical expression (the line item type's
CASE, the compute test, the scope ...) runs once per group of raw lines, not once per line. The groups are keyed by
the columns the canonical expressions read (account, region, UTC day, resource id, product code, usage type, line
item type, pricing term, commitment ARNs, the list rate as AWS prints it ...) and carry each amount column summed,
and the number of lines; :func:`chipwise.collect.bill_export.query.logical_query` then reads the groups as it
would read lines.

Exact cents without a decimal cast of every amount: a DOUBLE amount ``x`` becomes the integer ``round(x * 1e10)``
(exactly the integer that ``CAST(x AS DECIMAL(38,10))`` holds: DuckDB's cast multiplies by 1e10 and rounds the
same way), summed as DOUBLE, which is exact while every partial sum stays below 2^53; a group of ``n`` lines
whose largest such integer is ``m`` is exact when ``n * m < 2^52`` (``n = 1`` always is). A group that cannot be
shown exact this way is flagged ``inexact__``: its row is not used, and the query runs once more for the flagged
groups only, with every amount cast to ``DECIMAL(38,10)`` per line (:func:`grouped_relation` with ``exact``).
Amounts of other types (a CSV's text, a DECIMAL column) are always cast per line.

The checks of :mod:`.validation` move to where they cost least: a NULL or out-of-period day and an over-long key
are checked once per group (the key is the group's); an amount beyond ±1e12 and a NULL cost are proven from the
Parquet footer's statistics where they can be (``proven``: the columns whose every row group's minimum, maximum
and NULL count prove them), and checked on every line otherwise (a CSV, a column without statistics, a row group
whose statistics do not prove it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date

from chipwise.collect.bill_export.formats import NUMERIC
from chipwise.collect.bill_export.query import (
    COST_COLUMN,
    DATE_COLUMN,
    MONEY,
    TERMS,
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


def grouped_relation(
    src: QuerySource, period: str, types: Mapping[str, str], footer: Footer, *, exact: bool = False
) -> QuerySource:
    """The source as groups of raw lines (a subquery over the files), to read as ``grouped`` by
    :func:`~chipwise.collect.bill_export.query.logical_query`. ``types``: each physical column's DuckDB type;
    ``footer``: what the Parquet statistics prove. ``exact``: every amount cast per line, only the groups a fast
    read flags."""
    proven = footer.proven
    fam = family(src.table)
    lines = canonical_lines(src)
    used = " ".join(expr for name, expr in lines.items() if name not in TERMS)
    rate_only = lines["list_rate"]
    others = " ".join(expr for name, expr in lines.items() if name not in (*TERMS, "list_rate"))
    read = columns_read(src.table, src.split)
    date_column, cost_column = DATE_COLUMN[fam], COST_COLUMN[fam]
    keys: list[tuple[str, str]] = []
    aggregates: list[str] = []
    converted: list[str] = []
    key_columns: set[str] = set()
    fast: list[str] = []
    # scaled: every summed amount a DOUBLE (or 0): the groups hand their integer sums on as they are, summed again
    # as DOUBLE and made decimals once, at the end (query.TO_MONEY); else each group's sums become decimals here
    scalable = all(
        _fast(types.get(str(src.physical.get(name)), "")) or name in footer.zero
        for name, kind in read.items()
        if kind == NUMERIC and src.physical.get(name) is not None and src.col(name) in others
    )
    scaled = scalable and not exact
    for name, kind in read.items():
        physical = src.physical.get(name)
        quoted = src.col(name)
        if physical is None or quoted not in used:
            continue
        if name == date_column:
            naive = types.get(physical, "").upper() == "TIMESTAMP"
            day = f"CAST({quoted} AS DATE)" if naive else f"CAST(CAST({quoted} AS TIMESTAMPTZ) AS DATE)"
            keys.append((day, quoted))
            converted.append(quoted)
            key_columns.add(name)
        elif kind == NUMERIC and quoted in rate_only and quoted not in others:  # FOCUS's ListUnitPrice: a MAX
            aggregates.append(f"MAX(CAST({quoted} AS {MONEY})) AS {quoted}")
            converted.append(quoted)
        elif kind == NUMERIC and name in footer.zero:
            converted.append(f"CAST(0 AS {'DOUBLE' if scaled else MONEY}) AS {quoted}")
        elif kind == NUMERIC and _fast(types.get(physical, "")):
            fast.append(quoted)
            aggregates.append(f"SUM({'CAST(' + quoted + f' AS {MONEY})' if exact else f'round({quoted} * {SCALE})'})"
                              f" AS {quoted}")  # fmt: skip
            converted.append(
                quoted
                if exact or scaled
                else f"CASE WHEN NOT inexact__ THEN CAST(TRY_CAST({quoted} AS HUGEINT) AS DECIMAL(38,0))"
                f" * CAST('0.0000000001' AS DECIMAL(11,10)) END AS {quoted}"
            )
        elif kind == NUMERIC:
            aggregates.append(f"SUM(CAST({quoted} AS {MONEY})) AS {quoted}")
            converted.append(quoted)
        elif name in footer.constant:
            converted.append(f"{_literal(footer.constant[name])} AS {quoted}")
            key_columns.add(name)  # checked as the groups' keys are (its one value)
        else:
            keys.append((quoted, quoted))
            converted.append(quoted)
            key_columns.add(name)
    # what each group's keys prove wrong (the day, a key's length), and what is left to check on every line
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
        and not (label.endswith("beyond ±1e12") and label.split(":", 1)[0] in proven)
        and not (label == f"{cost_column}: NULL cost" and cost_column in proven)
    ]  # fmt: skip
    if per_line:
        case = " ".join(f"WHEN {condition} THEN '{label}'" for condition, label in per_line)
        aggregates.append(f"MAX(CASE {case} ELSE '' END) AS rejected__")
    line_verdict = "rejected__" if per_line else "''"
    largest = "0"
    if fast:
        largest = f"MAX(GREATEST({', '.join(f'abs({q})' for q in fast)})) * {SCALE}"
    aggregates += ["COUNT(*) AS line_items__", f"{largest} AS largest__"]
    conditions = [src.filter] if src.filter else []
    if fam == "focus":
        conditions.append(f"{src.col('ProviderName')} = 'AWS'")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    first = (
        f"SELECT {', '.join([*(f'{expr} AS {alias}' for expr, alias in keys), *aggregates])}"
        f" FROM {src.relation}{where} GROUP BY {', '.join(expr for expr, _ in keys)}"
    )
    flag = f"COALESCE(line_items__ > 1 AND line_items__ * largest__ >= {EXACT_BELOW}, false)"
    checks = " ".join(f"WHEN {condition} THEN '{label}'" for condition, label in group_checks)
    verdict = f"CASE WHEN {line_verdict} <> '' THEN {line_verdict} {checks} ELSE '' END"
    second = (
        f"SELECT {', '.join(converted)}, line_items__, largest__, {verdict} AS rejected__, inexact__"
        f" FROM (SELECT *, {flag} AS inexact__ FROM ({first}))"
    )
    return replace(src, relation=f"({second})", filter="", scaled=scaled, flag_sums=scalable)
