"""The deployed store connection comes from a Secrets Manager secret (read once, at settings time)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from chipwise.errors import ConfigError
from chipwise.settings import get_settings


def _secret(value: str) -> str:
    return boto3.client("secretsmanager").create_secret(Name="chipwise-db", SecretString=value)["ARN"]


def test_aurora_managed_secret_with_the_host_from_the_environment(aws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an Aurora managed master-user secret (no host in it) and the cluster endpoint in the environment
    arn = _secret(json.dumps({"username": "chipwise", "password": "p@ss/word"}))
    monkeypatch.setenv("CHIPWISE_DATABASE_SECRET_ARN", arn)
    monkeypatch.setenv("CHIPWISE_DATABASE_HOST", "db.cluster.example.internal")
    # Then the URL is built with the password escaped
    assert get_settings().database_url == (
        "postgresql+psycopg://chipwise:p%40ss%2Fword@db.cluster.example.internal:5432/chipwise"
    )


def test_a_secret_holding_a_url_is_used_as_is(aws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIPWISE_DATABASE_SECRET_ARN", _secret("postgresql+psycopg://u:p@h:5433/db"))
    assert get_settings().database_url == "postgresql+psycopg://u:p@h:5433/db"


def test_a_missing_secret_names_the_setting(aws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIPWISE_DATABASE_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope")
    with pytest.raises(ConfigError, match="CHIPWISE_DATABASE_SECRET_ARN"):
        get_settings()
