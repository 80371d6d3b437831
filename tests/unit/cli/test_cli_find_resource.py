"""`chipwise findings explain RESOURCE` finds a resource by name, id, ARN or instance id; an endpoint's ARN that
stands for several variants is refused with the names to give instead."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from chipwise.cli.resources import find_verdict
from chipwise.errors import InvalidInput, NotFound
from chipwise.models.scan import ScanCosts, ScanDocument, ScanWindow
from chipwise.models.verdicts import ResourceVerdict

ENDPOINT = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/chat-ab"
INSTANCE = "arn:aws:ec2:us-east-1:123456789012:instance/i-0abc"
AT = datetime(2026, 11, 27, tzinfo=UTC)


def _verdict(resource_id: str, name: str) -> ResourceVerdict:
    return ResourceVerdict(
        resource_id=resource_id,
        name=name,
        kind="ec2_instance" if "instance/" in resource_id else "sagemaker_endpoint",
        platform="inferentia",
        instance_type="inf2.xlarge",
        verdict="efficient",
        reason="busy",
    )


DOCUMENT = ScanDocument(
    scan_id="0123456789",
    account_id="123456789012",
    region="us-east-1",
    status="succeeded",
    started_at=AT,
    finished_at=AT,
    window=ScanWindow(start=date(2026, 11, 13), end=date(2026, 11, 27)),
    costs=ScanCosts(total_usd=0),
    verdicts=[
        _verdict(f"{ENDPOINT}#variant/main", "chat-ab/main"),
        _verdict(f"{ENDPOINT}#variant/canary", "chat-ab/canary"),
        _verdict(INSTANCE, "box"),
    ],
)


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("chat-ab/canary", "chat-ab/canary"),  # its name
        (f"{ENDPOINT}#variant/canary", "chat-ab/canary"),  # its id
        ("box", "box"),
        (INSTANCE, "box"),  # its ARN
        ("i-0abc", "box"),  # its instance id
    ],
)
def test_a_resource_is_found_by_name_id_arn_or_instance_id(given: str, name: str) -> None:
    assert find_verdict(DOCUMENT, given).name == name


def test_an_endpoint_arn_standing_for_several_variants_names_them() -> None:
    with pytest.raises(InvalidInput, match=r"several resources \(chat-ab/canary, chat-ab/main\): give one of those"):
        find_verdict(DOCUMENT, ENDPOINT)


def test_an_unknown_resource_says_where_the_list_is() -> None:
    with pytest.raises(NotFound, match="`chipwise resources` lists them"):
        find_verdict(DOCUMENT, "nope")
