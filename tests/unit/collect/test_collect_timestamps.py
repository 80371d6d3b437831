"""The clients' timestamp parser: the fast ISO 8601 path gives the instant botocore's own parser gives, and every
other form goes to botocore's parser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from botocore.utils import parse_timestamp

from chipwise.aws import base_session, parse_aws_timestamp


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        # DescribeInstances LaunchTime and attach times (EC2 query protocol, XML)
        ("2026-11-12T10:00:00.000Z", datetime(2026, 11, 12, 10, 0, tzinfo=UTC)),
        ("2026-11-12T10:00:00Z", datetime(2026, 11, 12, 10, 0, tzinfo=UTC)),
        ("2026-11-12T10:00:00.123456Z", datetime(2026, 11, 12, 10, 0, 0, 123456, tzinfo=UTC)),
        ("2026-11-12T12:00:00+02:00", datetime(2026, 11, 12, 12, 0, tzinfo=timezone(timedelta(hours=2)))),
        # epoch seconds (JSON protocols) and RFC 822 (REST headers): botocore's parser
        (1_763_000_000, datetime(2025, 11, 13, 2, 13, 20, tzinfo=UTC)),
        ("1763000000", datetime(2025, 11, 13, 2, 13, 20, tzinfo=UTC)),
        ("Thu, 12 Nov 2026 10:00:00 GMT", datetime(2026, 11, 12, 10, 0, tzinfo=UTC)),
    ],
)
def test_same_instant_as_botocore(wire: object, expected: datetime) -> None:
    parsed = parse_aws_timestamp(wire)
    assert parsed == expected
    assert parsed.utcoffset() is not None
    assert parsed == parse_timestamp(wire)


def test_text_without_offset_goes_to_botocore() -> None:
    assert parse_aws_timestamp("2026-11-12T10:00:00") == parse_timestamp("2026-11-12T10:00:00")


def test_invalid_text_fails_as_botocore_does() -> None:
    with pytest.raises(ValueError, match="Invalid timestamp"):
        parse_aws_timestamp("not a time")


def test_home_session_clients_use_it() -> None:
    factory = base_session()._session.get_component("response_parser_factory")
    assert factory._defaults["timestamp_parser"] is parse_aws_timestamp
