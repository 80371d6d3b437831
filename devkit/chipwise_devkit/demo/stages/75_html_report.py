"""After the report: the HTML scan report (one static file with inline SVG charts), as `chipwise report` writes it."""

from __future__ import annotations

from chipwise.clock import utcnow
from chipwise.pipeline.commitments import report_with_commitments
from chipwise.presentation import plural
from chipwise.report.build import build_report, find_scan, render_report
from chipwise.settings import get_settings
from chipwise.store import session_scope
from chipwise_devkit.demo.runner import DemoContext, Stage


def _run(ctx: DemoContext) -> None:
    with session_scope(ctx.database_url) as session:
        scan = find_scan(session, account_id=ctx.account_id, region=ctx.region)
        view = build_report(session, scan, now=utcnow(), team_tag_keys=get_settings().team_tag_keys)
        view = report_with_commitments(session, view, now=utcnow())
    ctx.write(view.filename, render_report(view))
    heat_maps = sum(1 for f in view.findings if f.heat is not None)
    ctx.summary.append(
        (
            "HTML report",
            f"{view.filename}: totals, waste by rule, {plural(heat_maps, 'utilisation heat-map')}, the trend over "
            f"{plural(view.scans, 'scan')}, every finding with its evidence: {view.headline.count_words()}"
            f"{f', {view.headline.withdrawn} withdrawn' if view.headline.withdrawn else ''}, "
            "the commitments after the fix",
        )
    )


STAGE = Stage("HTML report: one static file with inline charts", _run)
