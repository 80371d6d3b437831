"""Deployed settings that need AWS to resolve: the database connection from a Secrets Manager secret."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from chipwise.errors import ConfigError


def database_url_from_secret(
    secret_arn: str, *, host: str | None = None, database: str = "chipwise", region: str | None = None
) -> str:
    """A PostgreSQL URL from a secret holding either a URL or host/port/username/password/dbname JSON (the shape
    of an RDS/Aurora managed master-user secret, which carries no host: ``host`` supplies it)."""
    try:
        raw = boto3.client("secretsmanager", region_name=region).get_secret_value(SecretId=secret_arn)["SecretString"]
    except (ClientError, BotoCoreError) as exc:
        raise ConfigError(
            f"cannot read database_secret_arn (CHIPWISE_DATABASE_SECRET_ARN) {secret_arn}: {exc}"
        ) from exc
    if raw.startswith(("postgresql", "sqlite")):
        return raw
    try:
        fields: dict[str, Any] = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"secret {secret_arn} is neither a database URL nor JSON") from exc
    server = fields.get("host") or host
    if not server or "username" not in fields or "password" not in fields:
        raise ConfigError(f"secret {secret_arn} needs username, password and a host (or CHIPWISE_DATABASE_HOST)")
    user, password = quote(str(fields["username"]), safe=""), quote(str(fields["password"]), safe="")
    name = fields.get("dbname") or database
    return f"postgresql+psycopg://{user}:{password}@{server}:{fields.get('port', 5432)}/{name}"
