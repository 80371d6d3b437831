"""The scan's metric stages: CloudWatch (and PromQL) series read from where the store leaves off, hourly rollups
and coverage over the whole window; which EC2 Neuron instances have neuron-monitor rollups."""

from __future__ import annotations

from datetime import datetime, timedelta

from chipwise.aws import AwsContext
from chipwise.collect import metrics, otel_metrics
from chipwise.errors import UpstreamError
from chipwise.models.records import HourlyRollup, SeriesCoverage
from chipwise.models.resources import InstanceDetails
from chipwise.observability import logger
from chipwise.pipeline.scan_run import AWS_ERRORS, ScanRun
from chipwise.settings import get_settings
from chipwise.store import Session, SessionFactory, transaction
from chipwise.store.repositories.metric_series import keep_hours
from chipwise.store.repositories.usage import (
    NEURON_MONITOR_METRIC,
    NEURON_MONITOR_NAMESPACE,
    CoverageKey,
    StoredCoverage,
    UsageRepository,
)

ROLLUP_FLUSH_ROWS = 20_000


def collect_metrics(aws: AwsContext, session_factory: SessionFactory, run: ScanRun) -> None:
    """Every metric target, read from where the store leaves off: a (resource, metric) whose coverage says it was
    read up to hour H is read again from H minus the overlap only (``metric_overlap_hours``, for datapoints
    CloudWatch adds late); a new one over the whole window. Coverage is then counted over the whole window from the
    store, so the profile still spans the full window."""
    try:
        discovered = metrics.discover_series(aws, run.resources)
    except AWS_ERRORS as exc:
        run.fail("metrics.list_metrics", exc)
        discovered = metrics.Discovered()
    targets = metrics.plan_targets(run.resources, discovered)
    run.counts["gpu_agent_matched_by"] = metrics.agent_match_counts(run.resources, discovered)
    settings = get_settings()
    # the packed series keep the windows this scan and the configured ones read, not every day of the history
    keep = keep_hours(max(run.lookback_days, settings.lookback_days))
    prior: dict[CoverageKey, StoredCoverage] = {}
    if run.incremental:
        with transaction(session_factory) as session:
            prior = UsageRepository(session).coverage_windows(run.account_id, run.region)
    last_read = {
        target_index: end
        for target_index, target in enumerate(targets)
        if (found := prior.get((run.resource_ids[target.resource_key], target.spec.namespace, target.spec.metric)))
        and (end := found[0]) > run.metric_start
    }
    groups = metrics.read_starts(
        targets, last_read, run.metric_start, run.metric_end, timedelta(hours=settings.metric_overlap_hours)
    )
    buffered: list[HourlyRollup] = []
    read: list[SeriesCoverage] = []

    def write(rollups: list[HourlyRollup], coverage: list[SeriesCoverage]) -> None:
        buffered.extend(rollups)
        read.extend(coverage)
        if len(buffered) >= ROLLUP_FLUSH_ROWS:
            with transaction(session_factory) as session:
                UsageRepository(session).save_rollups(buffered, run.resource_ids, keep)
            buffered.clear()

    try:  # OTel Container Insights (PromQL) for the EKS nodes classic Container Insights has no series for
        args = (run.resources, discovered, run.metric_start, run.metric_end, write)
        if (otel := otel_metrics.collect_otel_metrics(aws, *args)) is not None:
            run.counts["otel_metrics"] = otel
    except UpstreamError as exc:
        run.fail("metrics.promql", exc)
    totals = metrics.MetricsResult()
    listing = metrics.AgentListing(aws)
    try:
        for start, group in groups:
            queried = _only_listed(group, listing, start, run)
            result = metrics.collect_metrics(aws, queried, start, run.metric_end, write)
            totals.calls += result.calls
            totals.queries += result.queries
            totals.datapoints += result.datapoints
            totals.rollups += result.rollups
    except AWS_ERRORS as exc:
        run.fail("metrics", exc)
    finally:
        with transaction(session_factory) as session:
            if buffered:
                UsageRepository(session).save_rollups(buffered, run.resource_ids, keep)
            _save_window_coverage(session, run, read, prior)
    incremental = sum(len(group) for start, group in groups if start > run.metric_start)
    run.counts |= {
        "metric_queries": totals.queries,
        "datapoints": totals.datapoints,
        "rollups": totals.rollups,
        "metric_targets_incremental": incremental,
        "metric_targets_full": len(targets) - incremental,
    }


def _only_listed(
    group: list[metrics.MetricTarget], listing: metrics.AgentListing, start: datetime, run: ScanRun
) -> list[metrics.MetricTarget]:
    """The group without the optional agents' series ListMetrics does not list; every series when it cannot list
    them (nothing is lost: the series are read as before)."""
    try:
        return metrics.only_listed(group, listing, start, run.metric_end)
    except AWS_ERRORS as exc:
        logger().warning("ListMetrics failed: every agent series is read", extra={"error": str(exc)[:500]})
        return group


def _save_window_coverage(
    session: Session, run: ScanRun, read: list[SeriesCoverage], prior: dict[CoverageKey, StoredCoverage]
) -> None:
    """Coverage over the whole window for the targets read: hours with data counted in the store, and a metric
    that existed earlier in the window still exists."""
    if not read:
        return
    window = (run.metric_start, run.metric_end)
    stored = UsageRepository(session).stored_hours(run.account_id, run.region, *window)
    merged = []
    for c in read:
        key = (run.resource_ids[c.resource_key], c.namespace, c.metric)
        hours = stored.get(key, 0)
        earlier = prior.get(key)
        existed = earlier is not None and earlier[1] and earlier[0] > run.metric_start
        merged.append(SeriesCoverage(c.resource_key, c.namespace, c.metric, c.exists or existed or hours > 0, hours))
    UsageRepository(session).save_coverage(merged, run.resource_ids, window, run.now, stored=prior)


def neuron_coverage(session_factory: SessionFactory, run: ScanRun) -> None:
    """SeriesCoverage rows saying which EC2 Neuron instances have neuron-monitor reports in the window."""
    neuron = {
        r.details.instance_id: r.key
        for r in run.resources
        if isinstance(r.details, InstanceDetails) and r.platform in ("inferentia", "trainium")
    }
    if not neuron:
        return
    from chipwise.store.repositories.neuron import NeuronRepository  # Neuron instances only

    with transaction(session_factory) as session:
        hours = NeuronRepository(session).hours_by_instance(run.account_id, neuron, run.metric_start, run.metric_end)
        coverage = [
            SeriesCoverage(
                arn, NEURON_MONITOR_NAMESPACE, NEURON_MONITOR_METRIC, hours.get(iid, 0) > 0, hours.get(iid, 0)
            )
            for iid, arn in neuron.items()
        ]
        UsageRepository(session).save_coverage(coverage, run.resource_ids, (run.metric_start, run.metric_end), run.now)
    run.counts["neuron_instances_reporting"] = sum(1 for h in hours.values() if h)
