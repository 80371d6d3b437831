"""Every notification and draft template renders, escapes hostile values, and refuses a missing variable."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from jinja2 import UndefinedError
from notify_factories import HOSTILE, NOW, line

from chipwise.drafts import AccountFigures, CompanyFacts, DraftWorkload, build_account_drafts
from chipwise.notify.digest import (
    AccountSnapshot,
    BenchmarkedLine,
    RealisedLine,
    build_alert,
    build_digest,
)
from chipwise.notify.teams import OrgSummary, TeamDigest
from chipwise.render import render, templates_dir
from chipwise.store.repositories.finding_pages import Group

TEMPLATES = sorted(
    str(p.relative_to(templates_dir()))
    for folder in ("email", "slack", "drafts")
    for p in (templates_dir() / folder).glob("*.j2")
    if not p.name.startswith("_")
)


def snapshot(hostile: bool = False) -> AccountSnapshot:
    name = HOSTILE if hostile else "chat-mistral-g5"
    open_ = [
        line(name, "2400.50", summary=HOSTILE if hostile else "Steady serving on 4 A10G GPUs."),
        line("search-idle-inf2", "554.80", rule="inferentia_idle", hours_ago=72, action="delete", target=None),
        # measured, so it ranks first (presentation.rank): hostile values go in it too
        line(
            HOSTILE if hostile else "bert-ner-g6",
            "310",
            rule="gpu_small_model",
            measured=True,
            summary=HOSTILE if hostile else "Steady serving on 4 A10G GPUs.",
        ),
    ]
    resolved = [line("old-endpoint", "700", rule="inferentia_idle", status="resolved")]
    benchmarked = [
        BenchmarkedLine(open_[0], Decimal("2400.50"), Decimal("2100"), "inf2.xlarge", False, None, NOW),
        BenchmarkedLine(open_[1], Decimal("554.80"), None, "inf1.xlarge", True, HOSTILE, NOW),
    ]
    return AccountSnapshot(
        "123456789012", HOSTILE if hostile else "Acme AI", NOW - timedelta(days=1), open_, resolved, benchmarked
    )


def figures(hostile: bool = False) -> AccountFigures:
    snap = snapshot(hostile)
    return AccountFigures(
        account_id="123456789012",
        company=HOSTILE if hostile else "Acme AI",
        window_start=NOW.date() - timedelta(days=14),
        window_end=NOW.date(),
        accelerator_spend_usd=Decimal("4200.00"),
        monthly_accelerator_spend_usd=Decimal("9125.00"),
        monthly_by_platform={"inferentia": Decimal("1125.00"), "nvidia": Decimal("8000.00")},
        workloads=[
            DraftWorkload(
                HOSTILE if hostile else "chat-mistral-g5",
                "sagemaker_endpoint",
                "us-east-1",
                "ml.g5.2xlarge",
                4,
                "nvidia",
                "inference",
                "mistralai/Mistral-7B-Instruct-v0.3",
            ),
        ],
        open_findings=3,
        findings_words="3 counted findings (3 open, 0 not counted)",
        monthly_savings_usd=Decimal("3265.30"),
        measured_monthly_savings_usd=Decimal("310.00"),
        top_findings=snap.open,
        migrations=[snap.open[0]],
    )


def team_digest(snap: AccountSnapshot, team: str) -> TeamDigest:
    """A team's digest of the snapshot's open findings, under an organisation of 14 accounts and 12 teams."""
    lines = tuple(snap.open)
    total = sum((line.monthly_savings_usd for line in lines), Decimal(0))
    organisation = OrgSummary(
        open_count=len(lines) + 40,
        monthly_savings_usd=total + Decimal("9125.00"),
        accounts=14,
        teams=12,
        by_account=(Group(snap.account_id, len(lines), total),),
        by_team=(Group(team, len(lines), total),),
    )
    return TeamDigest(team, NOW, NOW - timedelta(days=1), organisation, len(lines) + 12, total, lines)


def context_for(template: str, hostile: bool = False) -> dict[str, Any]:
    """The context each template is rendered with in production."""
    snap = snapshot(hostile)
    digest = build_digest(snap, now=NOW)
    alert = build_alert(snap, snap.open[0], now=NOW, threshold_usd=Decimal("500"))
    drafts = build_account_drafts(figures(hostile), CompanyFacts(), contact_email="cto@example.com")
    draft_context = {
        "figures": drafts.figures,
        "programs": drafts.programs,
        "assumptions": ["company stage: seed"],
        "facts": drafts.facts,
    }
    name = Path(template).name
    if name.startswith(("digest", "rule_bar", "finding", "change", "benchmarked")):
        return {
            "digest": digest,
            "f": digest.top[0],
            "bar": digest.by_rule[0],
            "change": "new",
            "b": digest.benchmarked[0],
        }
    if name.startswith("alert"):
        return {"alert": alert}
    if name.startswith("team_digest"):
        return {"digest": team_digest(snap, HOSTILE if hostile else "search")}
    if name.startswith("drafts_review"):
        return {"drafts": drafts, "figures": drafts.figures, "generated_at": NOW}
    if name.startswith("credits_application"):
        return draft_context
    if name.startswith("partner_referral"):
        return {**draft_context, "ace": drafts.ace_document, "subject": "Referral", "next_steps": "Call them"}
    raise AssertionError(f"no render test context for {template}")


def test_the_templates_are_all_covered() -> None:
    assert len(TEMPLATES) >= 14
    assert {"email/digest.html.j2", "email/digest.txt.j2", "email/alert.html.j2", "slack/finding.mrkdwn.j2"} <= set(
        TEMPLATES
    )


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_renders_its_figures(template: str) -> None:
    # Given the context the template gets in production
    context = context_for(template)
    # When rendered
    text = render(template, **context)
    # Then it is not empty and shows real figures, not holes
    assert text.strip()
    assert "None" not in text.replace("none given", "")
    assert any(
        figure in text for figure in ("$2,401", "$3,265", "$9,125", "$500", "$2,100", "$1,000", "$554", "$555", "$310")
    )


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_missing_variable_is_an_error(template: str) -> None:
    # Given a context with nothing in it / When rendered / Then it raises instead of leaving a hole
    with pytest.raises(UndefinedError):
        render(template)


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.endswith(".html.j2")])
def test_html_escapes_hostile_values(template: str) -> None:
    # Given resource names, summaries and company names carrying markup
    html = render(template, **context_for(template, hostile=True))
    # When rendered as HTML / Then no tag from the data survives
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "<!channel>" not in html


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.startswith("slack/")])
def test_slack_escapes_hostile_values(template: str) -> None:
    # Given hostile values / When rendered as Slack mrkdwn
    text = render(template, **context_for(template, hostile=True))
    # Then no mention, link or formatting from the data reaches Slack
    assert "<!channel>" not in text and "<script>" not in text
    assert "*bold*" not in text
    if template != "slack/rule_bar.mrkdwn.j2":  # the only one without a value from AWS in it
        assert "&lt;script&gt;" in text


def test_digest_html_layout_pieces() -> None:
    # Given a digest
    html = render("email/digest.html.j2", **context_for("email/digest.html.j2"))
    # When rendered / Then it is one 600 px column with inline styles, the chart and both change lists
    assert "max-width:600px" in html
    assert 'data-chart="waste-by-rule"' in html
    assert html.count("data-bar=") == 3
    assert "<style" not in html  # mail clients drop style blocks: everything is inline
    for text in ("Top findings by saving", "What changed", "New", "Resolved", "Benchmarked", "$2,401/mo"):
        assert text in html


def test_digest_text_part_has_the_same_figures_as_the_html() -> None:
    context = context_for("email/digest.txt.j2")
    text = render("email/digest.txt.j2", **context)
    for figure in (
        "$3,265",
        "chat-mistral-g5",
        "search-idle-inf2",
        "3 counted findings (3 open, 0 not counted)",
        "old-endpoint",
        "$2,100/mo measured",
    ):
        assert figure in text
    assert "withdrawn" in text


def test_owner_digest_says_why_the_owner_gets_it() -> None:
    digest = replace(build_digest(snapshot(), now=NOW), owner="support-ai@example.com")
    html = render("email/digest.html.j2", digest=digest)
    assert "tagged with your address (support-ai@example.com)" in html


def test_a_withdrawn_benchmark_shows_its_reason_escaped() -> None:
    # Given a benchmark that did not confirm the saving, with a hostile reason
    withdrawn = build_digest(snapshot(hostile=True), now=NOW).benchmarked[1]
    # When rendered for Slack / Then the reason is shown, escaped
    text = render("slack/benchmarked.mrkdwn.j2", b=withdrawn)
    assert "withdrawn (&lt;script&gt;" in text and "<!channel>" not in text


def test_the_slack_digest_shows_what_fixes_realised() -> None:
    # Given an account with one fix measured in Cost Explorer: $722.70 a month realised of $803.00 estimated
    fix = RealisedLine(
        "inferentia_idle", "Idle Inferentia", "old-endpoint", "gone", Decimal("803.00"), Decimal("722.70"), None, 5
    )
    snap = replace(snapshot(), realised=(fix,))
    # When the Slack digest's summary is rendered
    text = render("slack/digest_summary.mrkdwn.j2", digest=build_digest(snap, now=NOW))
    # Then it says what was realised and how close the estimate was: 722.70 / 803.00 = 90 %
    assert "Realised to date: *$723/mo* saved by fixes measured in Cost Explorer" in text
    assert (
        "saved by fixes measured in Cost Explorer · Idle Inferentia endpoint or instance: 90 % of its estimate" in text
    )


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.startswith(("email/digest", "email/alert", "slack/"))])
def test_mail_and_slack_readers_get_links_and_steps_not_cli_commands(template: str) -> None:
    # Given a digest with no published report (the case that used to say "run `chipwise report`")
    text = render(template, **context_for(template))
    # Then no command is addressed to a reader who has no CLI
    assert "chipwise findings" not in text and "chipwise report" not in text and "--until" not in text


def test_the_slack_messages_carry_no_cli_command() -> None:
    from chipwise.notify.slack import alert_message, digest_message

    snap = snapshot()
    digest = build_digest(snap, now=NOW)
    payloads = [
        digest_message(digest),
        alert_message(build_alert(snap, snap.open[0], now=NOW, threshold_usd=Decimal(1))),
    ]
    for payload in payloads:
        body = str(payload)
        assert "chipwise findings" not in body and "`chipwise report`" not in body
    assert "ask the person who runs Chipwise for the latest HTML report" in str(payloads[0])
    assert "Idle Inferentia endpoint or instance" in str(payloads[0])  # rules by their titles, not ids
