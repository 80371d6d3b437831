"""Property-based fuzzing of ``POST /intake`` (and the plan routes) through the Lambda handler, on SQLite and on
PostgreSQL (when CHIPWISE_TEST_DATABASE_URL is set): whatever arrives, the answer is never a 5xx, and every 4xx
says why. Over 1,000 generated requests a backend: hostile JSON (deep, huge, NaN, control characters, wrong
types), intakes with one field mutated, form bodies with served and unserved field names, raw bytes."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from intake_events import Invoke, get, request
from plan_factories import intake_dict, workload

from chipwise.intake.form import FIELD_LABELS, WORKLOAD_LABELS
from chipwise.settings import get_settings

EXAMPLES = 1100  # a few are discarded or repeated by hypothesis; at least 1,000 requests are asserted below
FORM_NAMES = [*FIELD_LABELS, *(f"workloads.{i}.{name}" for i in (0, 1, 7) for name in WORKLOAD_LABELS)]

texts = st.text(max_size=40) | st.sampled_from(["", "\x00", "a\x00b", "\ud800", "\u202e", "<script>", "1e-30"])
numbers = (
    st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-30, 1e308, -0.0, 0.5, 10**40])
)
# What can be percent-encoded (a lone surrogate cannot: raw bodies carry invalid bytes instead)
encodable = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", "\x00", "a\x00b", "\u202e", "<script>", "1e-30", "https://evil.example"]
)
leaves = st.none() | st.booleans() | numbers | texts
json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated_intake(draw: st.DrawFn) -> Any:
    """The worked example with one value (at any depth) replaced or one key added."""
    data: Any = intake_dict(workload(), workload(name="train", stage="training", runs_per_month="4"))
    path = draw(
        st.sampled_from(
            [
                ("company", "name"),
                ("company", "stage"),
                ("company", "website"),
                ("company", "activate_provider_org_id"),
                ("contact", "email"),
                ("contact", "name"),
                ("aws", "account_ids"),
                ("aws", "monthly_spend_usd"),
                ("workloads", 0, "requests_per_day"),
                ("workloads", 0, "parameters_billion"),
                ("workloads", 0, "instance_count"),
                ("workloads", 0, "current_throughput_per_instance"),
                ("workloads", 0, "model_family"),
                ("workloads", 1, "hours_per_month"),
                ("workloads", 1, "runs_per_month"),
                ("workloads", 1, "current_instance_type"),
                ("workloads",),
                ("partner_referral",),
            ]
        )
    )
    node = data
    for part in path[:-1]:
        node = node[part]
    printable = st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), min_size=1, max_size=60)
    node[path[-1]] = draw(json_values | printable | printable)
    return data


json_bodies = st.one_of(
    json_values.map(json.dumps),
    mutated_intake().map(json.dumps),
    mutated_intake().map(json.dumps),
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),
    st.text(max_size=200),
)
form_bodies = st.dictionaries(st.sampled_from(FORM_NAMES) | encodable, encodable, max_size=12).map(urlencode)
raw_bodies = st.binary(max_size=300)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["json", "json", "form", "form", "raw", "plan"]))
    ip = f"198.51.100.{draw(st.integers(0, 255))}"
    if kind == "plan":
        suffix = draw(st.sampled_from(["", "/confirm", "/delete"]))
        plan_id = draw(st.text(alphabet="AZaz09_-", min_size=30, max_size=70))
        query = urlencode({"expires": draw(encodable), "signature": draw(encodable)})
        return request("GET", f"/plans/{plan_id}{suffix}", query=query, source_ip=ip)
    if kind == "raw":
        content_type = draw(st.sampled_from(["application/json", "application/x-www-form-urlencoded", "text/plain"]))
        return request(
            "POST", "/intake", body=draw(raw_bodies), base64_body=True, headers={"content-type": content_type}
        )
    body = draw(json_bodies) if kind == "json" else draw(form_bodies)
    content_type = "application/json" if kind == "json" else "application/x-www-form-urlencoded"
    accept = draw(st.sampled_from(["application/json", "text/html", "*/*"]))
    encoded = body.encode("utf-8", errors="surrogatepass")
    try:
        encoded.decode("utf-8")
        return request(
            "POST", "/intake", body=body, headers={"content-type": content_type, "accept": accept}, source_ip=ip
        )
    except UnicodeDecodeError:
        return request(
            "POST",
            "/intake",
            body=encoded,
            base64_body=True,
            headers={"content-type": content_type, "accept": accept},
            source_ip=ip,
        )


def test_no_generated_request_gets_a_5xx(invoke: Invoke, use_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIPWISE_INTAKE_SUBMISSIONS_PER_CLIENT_PER_HOUR", "100000")
    monkeypatch.setenv("CHIPWISE_INTAKE_SUBMISSIONS_PER_ADDRESS_PER_DAY", "100000")
    get_settings.cache_clear()
    statuses: list[int] = []
    raw: dict[str, str] = {}  # pydantic's own wording reaching a founder, by error type

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(event=events())
    def one(event: dict[str, Any]) -> None:
        response = invoke(event)
        status = response["statusCode"]
        statuses.append(status)
        assert status < 500, (status, event.get("body", "")[:300], response["body"][:300])
        if 400 <= status < 500:
            assert response["body"].strip(), "a 4xx must say why"
        if status == 422 and response["headers"]["Content-Type"].startswith("application/json"):
            for item in json.loads(response["body"]).get("detail", []):
                raw.update({item["type"]: item["msg"]} if item["msg"].startswith("Input should") else {})

    one()
    # Then well over 1,000 requests were answered, and some of them were plans (the fuzzer reached the planner)
    assert len(statuses) >= 1000
    assert raw == {}, f"messages not in plain words: {raw}"
    assert 303 in statuses and 422 in statuses and 400 in statuses
    # and the service still works afterwards
    assert invoke(get("/intake"))["statusCode"] == 200
