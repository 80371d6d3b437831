"""Indexed CloudWatch ``GetMetricData`` for moto: fast, exact matching, percentiles, real limits and paging.

Stock moto rescans every stored datapoint for every query and period, leaks other namespaces when
Dimensions are given, has no percentiles, no 500-query limit and no MaxDatapoints paging. ``install()``
replaces ``CloudWatchBackend.get_metric_data`` (the computation) and ``CloudWatchResponse.get_metric_data``
(limits and paging). Matching follows AWS: a query matches only the series with exactly its namespace,
name and dimension set (no Dimensions means the dimensionless series).
"""

from __future__ import annotations

import json
import math
import re
import threading
import uuid
from bisect import bisect_left
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from moto.cloudwatch.exceptions import ValidationError
from moto.cloudwatch.metric_data_expression_parser import parse_expression
from moto.cloudwatch.models import CloudWatchBackend, MetricAggregatedDatum, MetricDatum
from moto.cloudwatch.responses import CloudWatchResponse
from moto.core.exceptions import ServiceException
from moto.core.responses import ActionResult
from moto.core.utils import get_service_model

MAX_QUERIES = 500
DEFAULT_MAX_DATAPOINTS = 100_800
_MAX_STORED_PAGES = 256
_ID_RE = re.compile(r"^[a-z][a-zA-Z0-9_]*$")
_PERCENTILE_RE = re.compile(r"^p(\d+(?:\.\d+)?)$")
_HIGH_RESOLUTION_PERIODS = frozenset({1, 5, 10, 20, 30})

# (epoch seconds, sample count, sum, minimum, maximum, single value or None for statistic sets, unit)
Point = tuple[float, float, float, float, float, float | None, str]
SeriesKey = tuple[str, str, frozenset[tuple[str, str]]]
StatFn = Callable[[list[Point]], float | None]

_INDEX_ATTR = "_chipwise_cw_index"
_PAGES_ATTR = "_chipwise_cw_pages"
_installed = False
_install_lock = threading.Lock()
_pages_lock = threading.Lock()
_original_backend_get_metric_data: Callable[..., list[dict[str, Any]]] | None = None


class InvalidNextToken(ServiceException):
    """The NextToken is unknown (or was already used)."""

    code = "InvalidNextToken"


def _epoch(ts: datetime) -> float:
    return (ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)).timestamp()


def _to_point(md: Any) -> Point | None:
    ts = _epoch(md.timestamp)
    unit = "None" if md.unit is None else str(md.unit)
    if isinstance(md, MetricDatum):
        v = float(md.value)
        return (ts, 1.0, v, v, v, v, unit)
    if isinstance(md, MetricAggregatedDatum):
        return (ts, float(md.sample_count), float(md.sum), float(md.min), float(md.max), None, unit)
    return None


def _dimension_set(dimensions: list[Any]) -> frozenset[tuple[str, str]]:
    return frozenset((d.name, d.value) for d in dimensions)


class _Series:
    __slots__ = ("points", "stamps", "unsorted")

    def __init__(self) -> None:
        self.points: list[Point] = []
        self.stamps: list[float] = []
        self.unsorted = False

    def add(self, point: Point) -> None:
        if self.stamps and point[0] < self.stamps[-1]:
            self.unsorted = True
        self.points.append(point)
        self.stamps.append(point[0])

    def window(self, start: float, end: float) -> list[Point]:
        if self.unsorted:
            self.points.sort(key=lambda p: p[0])
            self.stamps = [p[0] for p in self.points]
            self.unsorted = False
        return self.points[bisect_left(self.stamps, start) : bisect_left(self.stamps, end)]


class SeriesIndex:
    """Datapoints by (namespace, name, dimension set), kept in step with an append-only datum list."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.series: dict[SeriesKey, _Series] = {}
        self.first_datum: dict[SeriesKey, Any] = {}  # one stored datum per series, for ListMetrics
        self._source: list[Any] | None = None
        self._seen = 0

    def sync(self, data: list[Any]) -> None:
        """Index the datums appended since the last call (rebuild if the list was replaced or shrank)."""
        if data is not self._source or len(data) < self._seen:
            self.series = {}
            self.first_datum = {}
            self._source = data
            self._seen = 0
        end = len(data)
        series = self.series
        dimension_sets: dict[int, frozenset[tuple[str, str]]] = {}  # seed_metrics shares one list per series
        for md in data[self._seen : end]:
            point = _to_point(md)
            if point is None:
                continue
            dims = dimension_sets.get(id(md.dimensions))
            if dims is None:
                dims = dimension_sets[id(md.dimensions)] = _dimension_set(md.dimensions)
            key = (md.namespace, md.name, dims)
            s = series.get(key)
            if s is None:
                s = series[key] = _Series()
                self.first_datum[key] = md
            s.add(point)
        self._seen = end


def _index_for(backend: Any) -> SeriesIndex:
    index: SeriesIndex = backend.__dict__.setdefault(_INDEX_ATTR, SeriesIndex())
    return index


# --- statistics ---------------------------------------------------------------------------------


def _sum(ps: list[Point]) -> float | None:
    return math.fsum(p[2] for p in ps)


def _count(ps: list[Point]) -> float | None:
    return sum(p[1] for p in ps)


def _average(ps: list[Point]) -> float | None:
    n = sum(p[1] for p in ps)
    return math.fsum(p[2] for p in ps) / n if n else None


def _minimum(ps: list[Point]) -> float | None:
    return min(p[3] for p in ps)


def _maximum(ps: list[Point]) -> float | None:
    return max(p[4] for p in ps)


def _extended_statistic(pct: float) -> StatFn:
    """CloudWatch's own pNN extended statistic (nearest rank over the raw values), as AWS computes it; not
    Chipwise's percentile definition (``chipwise.economics``), which the product uses on what it reads."""

    def fn(ps: list[Point]) -> float | None:
        values: list[float] = []
        for p in ps:
            if p[5] is not None:
                values.append(p[5])
            elif p[3] == p[4]:  # a statistic set whose samples are all equal
                values.extend([p[3]] * int(p[1]))
        if not values:
            return None
        values.sort()
        rank = max(1, math.ceil(pct / 100.0 * len(values)))
        return values[rank - 1]

    return fn


_STAT_FNS: dict[str, StatFn] = {
    "Sum": _sum,
    "SampleCount": _count,
    "Average": _average,
    "Minimum": _minimum,
    "Maximum": _maximum,
}


def stat_function(stat: str) -> StatFn:
    """The aggregation for a statistic name; raises ValidationError for unsupported ones."""
    fn = _STAT_FNS.get(stat)
    if fn is not None:
        return fn
    match = _PERCENTILE_RE.match(stat)
    if match and 0.0 <= float(match.group(1)) <= 100.0:
        return _extended_statistic(float(match.group(1)))
    raise ValidationError(
        f"The statistic '{stat}' is not supported by the Chipwise emulator "
        "(Sum, Average, Minimum, Maximum, SampleCount, pNN and pNN.N are)."
    )


# --- the backend computation ------------------------------------------------------------------


def _bucketize(
    points: Sequence[Point], start: datetime, start_ts: float, period: int, fn: StatFn
) -> tuple[list[float], list[datetime]]:
    values: list[float] = []
    stamps: list[datetime] = []
    current = -1
    bucket: list[Point] = []
    for p in points:
        b = int((p[0] - start_ts) // period)
        if b != current:
            if bucket:
                v = fn(bucket)
                if v is not None:
                    values.append(v)
                    stamps.append(start + timedelta(seconds=current * period))
            current = b
            bucket = [p]
        else:
            bucket.append(p)
    if bucket:
        v = fn(bucket)
        if v is not None:
            values.append(v)
            stamps.append(start + timedelta(seconds=current * period))
    return values, stamps


def _stat_query(
    indexes: Sequence[SeriesIndex], query: dict[str, Any], start: datetime, end: datetime
) -> dict[str, Any]:
    metric_stat = query["MetricStat"]
    metric = metric_stat["Metric"]
    name = metric["MetricName"]
    stat = metric_stat["Stat"]
    key: SeriesKey = (
        metric.get("Namespace") or "",
        name,
        frozenset((d["Name"], d["Value"]) for d in metric.get("Dimensions") or []),
    )
    start_ts, end_ts = _epoch(start), _epoch(end)
    points: list[Point] = []
    for index in indexes:
        series = index.series.get(key)
        if series is not None:
            points.extend(series.window(start_ts, end_ts))
    if len(indexes) > 1:
        points.sort(key=lambda p: p[0])
    unit = metric_stat.get("Unit")
    if unit:
        points = [p for p in points if p[6] == unit]
    values, stamps = _bucketize(points, start, start_ts, int(metric_stat["Period"]), stat_function(stat))
    return {
        "id": query["Id"],
        "label": query.get("Label") or f"{name} {stat}",
        "values": values,
        "timestamps": stamps,
        "status_code": "Complete",
    }


def fast_get_metric_data(
    self: CloudWatchBackend,
    queries: list[dict[str, Any]],
    start_time: datetime,
    end_time: datetime,
    scan_by: str = "TimestampAscending",
) -> list[dict[str, Any]]:
    """Drop-in replacement for ``CloudWatchBackend.get_metric_data`` backed by a per-backend index."""
    start_time = start_time.replace(microsecond=0)
    end_time = end_time.replace(microsecond=0)
    if start_time > end_time:
        raise ValidationError("The parameter EndTime must be greater than StartTime.")
    if start_time == end_time:
        raise ValidationError("The parameter StartTime must not equal parameter EndTime.")

    index = _index_for(self)
    with index.lock:
        index.sync(self.metric_data)
        indexes = [index]
        provided = list(self.aws_metric_data)  # metrics moto computes on the fly (S3); usually none
        if provided:
            extra = SeriesIndex()
            extra.sync(provided)
            indexes.append(extra)
        computed = [(q, _stat_query(indexes, q, start_time, end_time)) for q in queries if "MetricStat" in q]

    descending = scan_by == "TimestampDescending"
    if descending:
        for _, r in computed:
            r["values"].reverse()
            r["timestamps"].reverse()
    results = [r for q, r in computed if q.get("ReturnData", True)]

    all_stat_results = [r for _, r in computed]
    for q in queries:
        expression = q.get("Expression")
        if expression is None or expression.startswith("SELECT"):
            continue
        values, stamps = parse_expression(expression, all_stat_results)  # moto's own (identity) metric math
        results.append(
            {
                "id": q["Id"],
                "label": q.get("Label") or q["Id"],
                "values": values,
                "timestamps": stamps,
                "status_code": "Complete",
            }
        )
    insights = [q for q in queries if str(q.get("Expression", "")).startswith("SELECT")]
    if insights and _original_backend_get_metric_data is not None:
        results.extend(_original_backend_get_metric_data(self, insights, start_time, end_time, scan_by))
    return results


def fast_get_filtered_metrics(
    self: CloudWatchBackend, metric_name: str | None, namespace: str | None, dimensions: list[dict[str, str]] | None
) -> list[Any]:
    """ListMetrics from the index: each series once (stock moto lists a multi-dimension series per datapoint)."""
    wanted = [(d["Name"], d.get("Value")) for d in dimensions or []]
    index = _index_for(self)
    with index.lock:
        index.sync(self.metric_data)
        found = []
        for (ns, name, dims), datum in index.first_datum.items():
            if (namespace and ns != namespace) or (metric_name and name != metric_name):
                continue
            if all(any(n == want and (value is None or v == value) for n, v in dims) for want, value in wanted):
                found.append(datum)
    provided = [md for md in self.aws_metric_data if md.filter(namespace, metric_name, dimensions or [])]
    return found + provided


# --- the response: limits and paging ----------------------------------------------------------


def validate_queries(queries: list[dict[str, Any]]) -> None:
    """The checks real CloudWatch makes before running a GetMetricData call."""
    if len(queries) > MAX_QUERIES:
        raise ValidationError(
            f"The collection MetricDataQueries must not contain more than {MAX_QUERIES} items (got {len(queries)})."
        )
    seen: set[str] = set()
    for n, query in enumerate(queries, start=1):
        if ("MetricStat" in query) == ("Expression" in query):
            raise ValidationError(
                f"The parameter MetricDataQueries.member.{n}.MetricStat is required.\n"
                if "Expression" not in query
                else f"Exactly one element of the MetricStat or the Expression can be provided in "
                f"MetricDataQueries.member.{n}."
            )
        qid = str(query.get("Id", ""))
        if not _ID_RE.match(qid):
            raise ValidationError(
                f"The value {qid!r} for parameter MetricDataQueries.member.{n}.Id is not valid: it must start "
                "with a lowercase letter and contain only letters, numbers and underscores."
            )
        if qid in seen:
            raise ValidationError(f"The values for parameter id in MetricDataQueries are not unique: {qid!r}.")
        seen.add(qid)
        if "MetricStat" in query:
            metric_stat = query["MetricStat"]
            period = int(metric_stat.get("Period") or 0)
            if period < 1 or (period not in _HIGH_RESOLUTION_PERIODS and period % 60):
                raise ValidationError(
                    f"The parameter MetricDataQueries.member.{n}.MetricStat.Period must be 1, 5, 10, 20, 30 "
                    f"or a multiple of 60 (got {period})."
                )
            stat_function(str(metric_stat.get("Stat", "")))


def paginate(results: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split results so the first part holds at most ``budget`` datapoints; a split result is PartialData."""
    page: list[dict[str, Any]] = []
    for i, result in enumerate(results):
        n = len(result["values"])
        if n <= budget:
            page.append(result)
            budget -= n
            continue
        rest = results[i:]
        if budget > 0:
            head = dict(result, values=result["values"][:budget], timestamps=result["timestamps"][:budget])
            head["status_code"] = "PartialData"
            page.append(head)
            rest = [dict(result, values=result["values"][budget:], timestamps=result["timestamps"][budget:])]
            rest += results[i + 1 :]
        return page, rest
    return page, []


def fast_get_metric_data_response(self: CloudWatchResponse) -> ActionResult | tuple[str, dict[str, Any]]:
    """Replacement for ``CloudWatchResponse.get_metric_data``: 500-query limit, MaxDatapoints and NextToken."""
    params = self._get_params()
    queries = params.get("MetricDataQueries") or []
    validate_queries(queries)
    max_datapoints = params.get("MaxDatapoints")
    budget = DEFAULT_MAX_DATAPOINTS if max_datapoints is None else int(max_datapoints)
    if budget < 1:
        raise ValidationError("The parameter MaxDatapoints must be greater than 0.")
    backend = self.cloudwatch_backend
    pages: dict[str, list[dict[str, Any]]] = backend.__dict__.setdefault(_PAGES_ATTR, {})
    token = params.get("NextToken")
    if token:
        with _pages_lock:
            remaining = pages.pop(token, None)
        if remaining is None:
            raise InvalidNextToken(f"The NextToken {token!r} is not valid (unknown or already used).")
    else:
        remaining = backend.get_metric_data(
            queries=queries,
            start_time=params["StartTime"],
            end_time=params["EndTime"],
            scan_by=params.get("ScanBy") or "TimestampDescending",
        )
    page, rest = paginate(remaining, budget)
    result: dict[str, Any] = {"MetricDataResults": page, "Messages": []}
    if rest:
        new_token = uuid.uuid4().hex
        with _pages_lock:
            while len(pages) >= _MAX_STORED_PAGES:  # abandoned paging sessions: forget the oldest
                pages.pop(next(iter(pages)))
            pages[new_token] = rest
        result["NextToken"] = new_token
    if self.determine_response_protocol(get_service_model("cloudwatch")) == "json":
        return _json_response(result)
    return ActionResult(result)


def _json_response(result: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The awsJson1_0 body moto's serializer would write, built with ``json.dumps`` (much faster for 100k points)."""
    body: dict[str, Any] = {
        "MetricDataResults": [
            {
                "Id": r["id"],
                "Label": r["label"],
                "Timestamps": [_unix_seconds(t) for t in r["timestamps"]],
                "Values": [float(v) for v in r["values"]],
                "StatusCode": r["status_code"],
            }
            for r in result["MetricDataResults"]
        ],
        "Messages": result["Messages"],
    }
    if "NextToken" in result:
        body["NextToken"] = result["NextToken"]
    return json.dumps(body), {"Content-Type": "application/x-amz-json-1.0"}


def _unix_seconds(ts: datetime) -> int | float:
    seconds = _epoch(ts)
    return int(seconds) if seconds.is_integer() else round(seconds, 3)


def install() -> None:
    """Patch moto's CloudWatch classes (idempotent, process-wide)."""
    global _installed, _original_backend_get_metric_data
    with _install_lock:
        if _installed:
            return
        _original_backend_get_metric_data = CloudWatchBackend.get_metric_data
        CloudWatchBackend.get_metric_data = fast_get_metric_data  # type: ignore[method-assign]
        CloudWatchBackend.get_filtered_metrics = fast_get_filtered_metrics  # type: ignore[method-assign]
        CloudWatchResponse.get_metric_data = fast_get_metric_data_response  # type: ignore[method-assign,assignment]
        _installed = True


def naive_utc(ts: datetime) -> datetime:
    """The naive-UTC form moto stores (aware datetimes are converted; naive ones are taken as UTC)."""
    return ts.astimezone(UTC).replace(tzinfo=None) if ts.tzinfo is not None else ts
