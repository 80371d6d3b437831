"""How the command line words failures: passwords hidden, the IAM action named, bugs marked unexpected."""

from __future__ import annotations

import errno

from botocore.exceptions import ClientError, NoCredentialsError

from chipwise.cli._errors import explain, iam_action, redact, take_debug_flag, unexpected
from chipwise.errors import ConfigError


def test_redact_hides_url_passwords() -> None:
    text = "cannot reach postgresql+psycopg://chipwise:p%40ss@db.internal:5432/chipwise (timeout)"
    assert redact(text) == "cannot reach postgresql+psycopg://chipwise:***@db.internal:5432/chipwise (timeout)"
    assert redact("sqlite:///chipwise.db") == "sqlite:///chipwise.db"


def test_chipwise_errors_are_their_message_redacted() -> None:
    assert explain(ConfigError("bad postgres://u:pw@h/db")) == "bad postgres://u:***@h/db"


def test_no_credentials_says_how() -> None:
    message = explain(NoCredentialsError())
    assert message is not None and "aws configure" in message and "AWS_PROFILE" in message


def test_denied_action_from_the_message() -> None:
    exc = ClientError(
        {
            "Error": {
                "Code": "AccessDeniedException",
                "Message": "User: x is not authorized to perform: ce:GetCostAndUsage on y",
            }
        },
        "GetCostAndUsage",
    )
    assert iam_action(exc) == "ce:GetCostAndUsage"
    assert "needs ce:GetCostAndUsage" in (explain(exc) or "")


def test_missing_bucket_is_named() -> None:
    exc = ClientError({"Error": {"Code": "NoSuchBucket", "Message": "x", "BucketName": "nope"}}, "ListObjectsV2")
    assert explain(exc) == "S3 bucket nope does not exist (or is in another account): check the s3:// path"


def test_busy_port() -> None:
    assert "already in use" in (explain(OSError(errno.EADDRINUSE, "Address already in use")) or "")


def test_a_bug_is_unexpected_with_the_debug_hint() -> None:
    assert explain(KeyError("x")) is None
    assert unexpected(ValueError("boom\nsecond line")) == (
        "unexpected ValueError: boom (run again with --debug for the traceback, and report it)"
    )


def test_debug_flag_anywhere() -> None:
    assert take_debug_flag(["findings", "--debug", "show", "abc"]) == (["findings", "show", "abc"], True)
    assert take_debug_flag(["findings"]) == (["findings"], False)
