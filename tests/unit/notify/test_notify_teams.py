"""The digest groups findings by team (the resource's team tag, live or from the bill's cost allocation tags)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from notify_factories import NOW, line

from chipwise.models.common import first_tag
from chipwise.notify.digest import AccountSnapshot, TeamLine, build_digest, waste_by_team
from chipwise.render import render


def test_waste_by_team_sums_counted_savings_largest_first() -> None:
    lines = [
        line("a", "100.00", team="search"),
        line("b", "250.00", team="nlp"),
        line("c", "40.00", team="search"),
        line("d", "500.00"),  # no team tag
        line("e", "900.00", team="nlp", excluded_from_totals="committed"),  # counted as a finding, not in the sum
    ]
    assert waste_by_team(lines) == (
        TeamLine(None, 1, Decimal("500.00")),
        TeamLine("nlp", 2, Decimal("250.00")),
        TeamLine("search", 2, Decimal("140.00")),
    )
    assert waste_by_team([line("x", "10.00")]) == ()  # nobody tags teams: no section


def test_the_digest_shows_waste_by_team() -> None:
    snapshot = AccountSnapshot(
        account_id="123456789012",
        account_name="Acme AI",
        since=NOW - timedelta(days=1),
        open=[line("a", "100.00", team="search"), line("b", "250.00", team="nlp")],
        resolved=[],
        benchmarked=[],
    )
    digest = build_digest(snapshot, now=NOW)
    text = render("email/digest.txt.j2", digest=digest)
    html = render("email/digest.html.j2", digest=digest)
    assert "Waste by team" in text and "nlp (1)" in text and "search (1)" in text
    assert 'data-chart="waste-by-team"' in html and "$250" in html


def test_first_tag_reads_the_bill_s_user_forms() -> None:
    keys = ["team", "user:team", "cost-center", "user:cost-center"]
    assert first_tag({"user:team": "nlp", "Name": "x"}, keys) == "nlp"
    assert first_tag({"Team": "search", "user:team": "nlp"}, keys) == "search"
    assert first_tag({"user:cost-center": "cc-42"}, keys) == "cc-42"
    assert first_tag({"owner": ""}, ["owner"]) is None
