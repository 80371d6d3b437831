"""The logical query with DuckDB over the period's data files (Parquet, or gzip CSV), in one connection set up for
a bounded, time-zone-proof read: its days in UTC whatever the machine's zone, its memory limited from the
function's memory (``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``; spilling to a scratch directory beyond it), insertion
order not kept (an aggregate needs none). Each file is checked first (its columns, their types), then the payer
and the rows of other providers are counted, then the aggregated rows stream to the caller in batches (the whole
result is never held), every AWS line checked (:mod:`.validation`) in the same pass that sums it; a rejected line
is looked for once more to name its file and row."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chipwise.collect.bill_export.errors import BillError
from chipwise.collect.bill_export.formats import NUMERIC, TEXT, legacy_parquet_name
from chipwise.collect.bill_export.grouped import Footer, grouped_relation
from chipwise.collect.bill_export.query import (
    COST_COLUMN,
    CUR_SPLIT_COLUMNS,
    PAYER_COLUMN,
    ROW_COLUMNS,
    TAGS_COLUMN,
    TERMS,
    QuerySource,
    columns_read,
    family,
    legacy_tags,
    logical_query,
    required_columns,
    terms_query,
)
from chipwise.collect.bill_export.validation import (
    check_described,
    check_payers,
    group_rejected_expr,
    rejected,
    row_sql,
    terms_rejected_expr,
    value_check_sql,
)
from chipwise.models.bill import BillTable, DataFormat
from chipwise.observability import logger

if TYPE_CHECKING:
    import duckdb

FETCH_BATCH = 20_000  # result rows fetched at a time
MEMORY_SHARE = 0.4  # of the function's memory, for DuckDB (the rest: Python, the batches, the store's driver)
DEFAULT_MEMORY_MB = 256  # off Lambda
_ARN = ROW_COLUMNS.index("commitment_arn")
CSV_BUFFER = 4 * 1024 * 1024  # bytes a CSV scan buffers (DuckDB: 32 MB per file scanned; a CUR line is a few KB)


def cores() -> int:
    """The CPU cores this process may run on (DuckDB's threads)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def memory_limit_mb() -> int:
    """DuckDB's share of the function's memory (Lambda's ``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``, in MB)."""
    raw = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
    total = int(raw) if raw.isdigit() else 0
    return max(64, int(total * MEMORY_SHARE)) if total else DEFAULT_MEMORY_MB


def connect(scratch: Path | None = None) -> duckdb.DuckDBPyConnection:
    import duckdb

    con = duckdb.connect(
        config={
            "threads": cores(),
            "memory_limit": f"{memory_limit_mb()}MB",
            "preserve_insertion_order": False,
            "temp_directory": str(scratch or Path(tempfile.gettempdir()) / "chipwise-duckdb"),
        }
    )
    con.execute("LOAD icu")  # time zones: built into DuckDB's wheel
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    return con


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def reader(paths: Sequence[Path], data_format: DataFormat, *, located: bool = False) -> str:
    """The DuckDB table function over the files (``located``: with each row's file, and row for Parquet)."""
    listed = ", ".join(f"'{_quote(p)}'" for p in paths)
    where = ", filename = true" + (", file_row_number = true" if data_format == "parquet" else "") if located else ""
    if data_format == "csv":
        return (
            f"read_csv([{listed}], header = true, all_varchar = true, union_by_name = true,"
            f" buffer_size = {CSV_BUFFER}{where})"
        )
    return f"read_parquet([{listed}], union_by_name = true{where})"


def _describe(con: duckdb.DuckDBPyConnection, path: Path, shown: str, data_format: DataFormat) -> dict[str, str]:
    import duckdb

    if not path.is_file():
        raise BillError(f"{shown}: data file not found")
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {reader([path], data_format)}").fetchall()
    except duckdb.Error as exc:
        kind = "gzip CSV" if data_format == "csv" else "Parquet"
        raise BillError(f"{shown}: unreadable {kind} ({str(exc).splitlines()[0]})") from exc
    return {str(row[0]): str(row[1]) for row in rows}


def source_of(
    table: BillTable, data_format: DataFormat, columns: dict[str, str], relation: str, dialect: str = "duckdb"
) -> QuerySource:
    """The query's view of the files: which physical column is each column read, and how the tags arrive."""
    if table == "LEGACY_CUR" and data_format == "csv":
        physical_of = {legacy_parquet_name(name): name for name in columns}
        tag_columns = [(name, name.split("/", 1)[1]) for name in columns if name.startswith("resourceTags/")]
    else:
        physical_of = {name: name for name in columns}
        tag_columns = [
            (name, name[len("resource_tags_") :].replace("_", ":", 1))
            for name in columns
            if name.startswith("resource_tags_")
        ]
    split = family(table) == "cur" and all(c in physical_of for c in CUR_SPLIT_COLUMNS)
    read = columns_read(table, split)
    physical = {name: physical_of.get(name) for name in read}
    if table == "LEGACY_CUR":
        tags, are_map = legacy_tags(tag_columns, "athena" if dialect == "athena" else "duckdb"), dialect == "athena"
    else:
        tag = TAGS_COLUMN[table]
        tags = f'"{tag}"' if tag in physical_of else "NULL"
        are_map = data_format == "parquet" or dialect == "athena"
    return QuerySource(table, relation, physical, tags, are_map, "athena" if dialect == "athena" else "duckdb",
                  data_format, split)  # fmt: skip


@dataclass
class DuckRead:
    """What the read found besides its rows: the bytes of the files, the payer, the rows of other providers."""

    bytes_read: int
    payer_account_id: str
    other_providers: dict[str, int] = field(default_factory=dict)


def run_duckdb(
    files: Sequence[tuple[Path, str]],
    table: BillTable,
    data_format: DataFormat,
    period: str,
    sink: Callable[[Sequence[Any]], None],
    terms: Callable[[Mapping[str, Sequence[Any]]], None] | None = None,
) -> DuckRead:
    """Check, validate and query the period's files; each aggregated row goes to ``sink`` as it is fetched.
    With ``terms``, each commitment's terms (ARN → the values of :data:`TERMS`) go to it once, before any row,
    and the rows are :data:`ROW_COLUMNS` (followed by a value to ignore); without, each row is
    :data:`RESULT_COLUMNS`, its commitment's terms appended."""
    import duckdb

    with tempfile.TemporaryDirectory(prefix="chipwise-duckdb-") as scratch:
        con = connect(Path(scratch))
        try:
            union: dict[str, str] = {}
            for path, shown in files:
                described = _describe(con, path, shown, data_format)
                names = (
                    {legacy_parquet_name(n): t for n, t in described.items()}
                    if table == "LEGACY_CUR" and data_format == "csv"
                    else described
                )
                wanted = required_columns(table)
                check_described(names, wanted, shown, typed=data_format == "parquet", missing_ok=frozenset())
                split_read = {k: v for k, v in CUR_SPLIT_COLUMNS.items() if k in names}
                check_described(names, split_read, shown, typed=data_format == "parquet", missing_ok=frozenset())
                union.update(described)
            paths = [p for p, _ in files]
            src = source_of(table, data_format, union, reader(paths, data_format))
            try:
                payer, others = _census(con, src, files[0][1])
                footer = _footer(con, paths, src) if data_format == "parquet" else Footer()
                found = _terms(con, src, files[0][1])
                if terms is not None:
                    terms(found)
                    row_sink = sink
                else:
                    none = (None,) * len(TERMS)

                    def row_sink(record: Sequence[Any]) -> None:
                        sink((*record[: len(ROW_COLUMNS)], *found.get(str(record[_ARN] or ""), none)))

                _stream(con, files, src, period, row_sink, union, footer)
            except duckdb.Error as exc:
                with contextlib.suppress(duckdb.Error):  # a line a check rejects (a NaN amount ...): named
                    _validate(con, files, src, period)
                raise BillError(f"{files[0][1]}: the bill query failed ({str(exc).splitlines()[0]})") from exc
            return DuckRead(sum(p.stat().st_size for p in paths), payer, others)
        finally:
            con.close()


def _terms(con: duckdb.DuckDBPyConnection, src: QuerySource, where: str) -> dict[str, tuple[Any, ...]]:
    """Each commitment's terms (ARN → the values of ``TERMS``), checked (a family longer than the store keeps
    rejects the export, as it would joined onto the rows)."""
    found: dict[str, tuple[Any, ...]] = {}
    for row in con.execute(terms_query(src, terms_rejected_expr(src))).fetchall():
        if row[-1]:
            raise BillError(f"{where}: column {row[-1]} (export rejected, nothing stored)")
        found[str(row[0])] = tuple(row[1:-1])
    return found


def _footer(con: duckdb.DuckDBPyConnection, paths: Sequence[Path], src: QuerySource) -> Footer:
    """What the Parquet footers' statistics (per row group and column: minimum, maximum, NULL and NaN counts)
    prove of the columns read, without a line read (:class:`.grouped.Footer`). A column without statistics, or
    whose statistics do not prove a check, is checked on every line."""
    read = columns_read(src.table, src.split)
    wanted = {src.physical[name]: name for name in read if src.physical.get(name) is not None}
    listed = ", ".join(f"'{_quote(p)}'" for p in paths)
    names = ", ".join("'" + str(n).replace("'", "''") + "'" for n in wanted)
    low, high = "COALESCE(stats_min_value, stats_min)", "COALESCE(stats_max_value, stats_max)"
    all_null = "stats_null_count = row_group_num_rows"
    no_nan = "COALESCE(stats_nan_count, 0) = 0"
    rows = con.execute(
        f"SELECT path_in_schema, bool_and(COALESCE({no_nan} AND ({all_null} OR (TRY_CAST({low} AS DOUBLE)"
        f" >= -1e12 AND TRY_CAST({high} AS DOUBLE) <= 1e12)), false)),"
        " bool_and(COALESCE(stats_null_count = 0, false)), count(DISTINCT file_name),"
        f" bool_and(COALESCE({no_nan} AND ({all_null} OR (TRY_CAST({low} AS DOUBLE) = 0"
        f" AND TRY_CAST({high} AS DOUBLE) = 0)), false)),"
        f" bool_and(COALESCE(stats_null_count = 0 AND {low} = {high} AND min_is_exact AND max_is_exact, false)),"
        f" min({low}), max({high})"
        f" FROM parquet_metadata([{listed}]) WHERE path_in_schema IN ({names}) GROUP BY path_in_schema"
    ).fetchall()
    cost = COST_COLUMN[family(src.table)]
    every_file = len(set(paths))
    proven: set[str] = set()
    zero: set[str] = set()
    constant: dict[str, str] = {}
    for path, within, no_nulls, files, zeros, same, low_value, high_value in rows:
        name = wanted[str(path)]
        if read[name] == NUMERIC:
            if within and (name != cost or (no_nulls and files == every_file)):
                proven.add(name)
            if zeros and name != cost:  # 0 or NULL on every line (a file without it: NULL)
                zero.add(name)
        elif read[name] == TEXT and same and files == every_file and low_value == high_value is not None:
            constant[name] = str(low_value)
    return Footer(frozenset(proven), frozenset(zero), constant)


def fast_query(src: QuerySource, period: str, types: Mapping[str, str], footer: Footer, exact: bool) -> str:
    """The checked query over the groups of raw lines (:mod:`.grouped`), each row with its ``inexact`` flag;
    ``exact``: every amount cast per line (the caller keeps the rows the fast query flagged)."""
    grouped = grouped_relation(src, period, types, footer, exact=exact)
    return logical_query(
        src, "rejected__", group_rejected_expr(src, grouped.scaled, terms=False), grouped=grouped, terms_apart=True
    )


def _stream(
    con: duckdb.DuckDBPyConnection,
    files: Sequence[tuple[Path, str]],
    src: QuerySource,
    period: str,
    sink: Callable[[Sequence[Any]], None],
    types: dict[str, str] | None = None,
    footer: Footer | None = None,
) -> None:
    """Run the query and pass each row to ``sink`` as it is fetched. DuckDB's aggregates and joins spill to the
    scratch directory beyond the memory limit; what cannot spill (each thread's scan buffers) grows with the
    threads: should the limit still be hit before any row has left, the query runs once more on one thread.
    A row whose sums the fast read cannot show exact is held back; those rows come from a second, exact query.
    ``types`` (each physical column's DuckDB type; unknown: every amount cast per line) and ``footer`` (what the
    Parquet statistics prove) choose how the groups are read (:mod:`.grouped`)."""
    import duckdb

    sunk = False
    for attempt in ("as configured", "on one thread"):
        if attempt == "on one thread":
            con.execute("SET threads = 1")
        try:
            held = False
            for exact in (False, True):
                if exact and not held:
                    return
                cursor = con.execute(fast_query(src, period, types or {}, footer or Footer(), exact))
                returned = tuple(str(d[0]) for d in cursor.description or [])
                if returned != (*ROW_COLUMNS, "inexact"):
                    raise BillError(f"{files[0][1]}: the bill query returned {', '.join(returned)}")
                while batch := cursor.fetchmany(FETCH_BATCH):
                    for record in batch:
                        if bool(record[-1]) != exact:  # the fast query's rows not shown exact: the exact one's
                            held = True
                            continue
                        if record[-2]:  # a rejected line: name its file and row (nothing is stored)
                            _validate(con, files, src, period)
                        sunk = True
                        sink(record)  # its last value (the flag) is not one of ROW_COLUMNS: never read
            return
        except duckdb.OutOfMemoryException:
            if sunk or attempt == "on one thread":
                raise
            logger().warning("bill query out of memory: running it again on one thread",
                             extra={"file": files[0][1], "memory_limit_mb": memory_limit_mb()})  # fmt: skip


def _validate(con: duckdb.DuckDBPyConnection, files: Sequence[tuple[Path, str]], src: QuerySource, period: str) -> None:
    """Reject the export at its first insane AWS line, naming the file (as the manifest lists it), row, column."""
    read = columns_read(src.table, src.split)
    located = reader([p for p, _ in files], src.data_format, located=True)
    found = con.execute(value_check_sql(src, located, period, read)).fetchone()
    if found is None:
        return
    local, row, what = found
    shown = {str(p): s for p, s in files}.get(str(local), str(local))
    if row is None:  # CSV: its row, counted in that one file
        one = reader([Path(str(local))], src.data_format)
        counted = con.execute(row_sql(src, one, period, read)).fetchone()
        row = counted[0] if counted else None
    raise rejected(shown, None if row is None else int(row), str(what))


def _census(con: duckdb.DuckDBPyConnection, src: QuerySource, where: str) -> tuple[str, dict[str, int]]:
    """The export's payer (of its AWS lines) and the rows of other providers (FOCUS is multi-cloud)."""
    payer = src.col(PAYER_COLUMN[family(src.table)])
    if family(src.table) == "focus":
        provider = src.col("ProviderName")
        rows = con.execute(
            f"SELECT COALESCE({provider}, ''), CASE WHEN {provider} = 'AWS' THEN {payer} END, COUNT(*)"
            f" FROM {src.relation} GROUP BY ALL"
        ).fetchall()
        others: dict[str, int] = {}
        for name, _, count in rows:
            if name != "AWS":
                label = str(name) or "(no provider)"
                others[label] = others.get(label, 0) + int(count)
        return check_payers([str(p) for n, p, _ in rows if n == "AWS" and p], where), others
    rows = con.execute(f"SELECT DISTINCT {payer} FROM {src.relation}").fetchall()
    return check_payers([str(r[0]) for r in rows if r[0]], where), {}
