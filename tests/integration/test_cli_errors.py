"""Every expected failure of the ``chipwise`` console script ends in one or two lines and a non-zero exit.

Each case runs the installed console script (``.venv/bin/chipwise``) in a subprocess, with no AWS credentials
and "AWS" a closed local port, or the emulator: the same path a user's shell takes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHIPWISE = Path(sys.executable).with_name("chipwise")
PASSWORD = "s3cr3t-Pa55"


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no AWS credentials, no Chipwise settings, no AWS config files, fail fast."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "CHIPWISE_")) and k not in {"POWERTOOLS_LOG_LEVEL"}
    }
    env.update(
        AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws-credentials"),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_MAX_ATTEMPTS="1",
        CHIPWISE_DATABASE_URL=f"sqlite:///{tmp_path / 'chipwise.db'}",
        COLUMNS="200",
    )
    env.update(extra)
    return env


def chipwise(tmp_path: Path, *args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHIPWISE), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        input=stdin,
        timeout=120,
        check=False,
    )


def assert_one_clear_failure(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert 1 <= len(lines) <= 2, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr
    assert PASSWORD not in done.stderr + done.stdout
    return done.stderr


@pytest.fixture
def offline(tmp_path: Path) -> dict[str, str]:
    """Fake credentials, and every AWS endpoint a closed local port (no network)."""
    return base_env(
        tmp_path,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{closed_port()}",
    )


@pytest.fixture
def emulated(tmp_path: Path, aws: Any) -> dict[str, str]:
    """The emulator's environment (credentials and endpoint), otherwise clean."""
    env = base_env(tmp_path, **aws.env())
    env["AWS_MAX_ATTEMPTS"] = "1"
    return env


def test_chipwise_is_the_installed_console_script() -> None:
    assert CHIPWISE.is_file()


@pytest.mark.parametrize("command", [["scan"], ["accounts", "list"]])
def test_no_credentials(tmp_path: Path, command: list[str]) -> None:
    done = chipwise(tmp_path, *command, env=base_env(tmp_path))
    assert_one_clear_failure(done, "no AWS credentials", "aws configure")


def test_no_network(tmp_path: Path, offline: dict[str, str]) -> None:
    done = chipwise(tmp_path, "scan", env=offline)
    assert_one_clear_failure(done, "cannot reach", "AWS_ENDPOINT_URL")


def test_debug_shows_the_traceback(tmp_path: Path, offline: dict[str, str]) -> None:
    done = chipwise(tmp_path, "scan", "--debug", env=offline)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "cannot reach" in done.stderr
    done = chipwise(tmp_path, "scan", env={**offline, "CHIPWISE_DEBUG": "1"})
    assert "Traceback" in done.stderr


def test_access_denied_names_the_action(tmp_path: Path, emulated: dict[str, str], aws: Any) -> None:
    # Given AWS denies the identity call with a bare "Access Denied" (no action in the message)
    aws.inject_fault("sts", "GetCallerIdentity", "AccessDenied", "Access Denied", times=5, status=403)
    # When chipwise lists the accounts it would scan
    done = chipwise(tmp_path, "accounts", "list", env=emulated)
    # Then the message names the IAM action the identity needs, from the call that failed
    assert_one_clear_failure(done, "AWS denied GetCallerIdentity", "needs sts:GetCallerIdentity")


def test_access_denied_action_from_the_message(tmp_path: Path, emulated: dict[str, str], aws: Any) -> None:
    # AWS names the action in the message ("... is not authorized to perform: ec2:DescribeRegions ..."): use it
    message = "User: arn:aws:iam::123456789012:user/dev is not authorized to perform: ec2:DescribeRegions"
    aws.inject_fault("sts", "GetCallerIdentity", "AccessDenied", message, times=5, status=403)
    done = chipwise(tmp_path, "accounts", "list", env=emulated)
    assert_one_clear_failure(done, "AWS denied", "needs ec2:DescribeRegions")


def test_missing_bucket(tmp_path: Path, emulated: dict[str, str]) -> None:
    done = chipwise(tmp_path, "ingest-neuron", "s3://no-such-bucket-anywhere/neuron/", env=emulated)
    assert_one_clear_failure(done, "no-such-bucket-anywhere", "does not exist")


@pytest.mark.parametrize("source", ["s3://", "s3:///neuron/", "s3://Bad_Bucket!/x"])
def test_malformed_s3_path(tmp_path: Path, emulated: dict[str, str], source: str) -> None:
    done = chipwise(tmp_path, "ingest-neuron", source, env=emulated)
    assert_one_clear_failure(done, "s3://bucket/prefix")


def test_malformed_chipwise_toml(tmp_path: Path) -> None:
    (tmp_path / "chipwise.toml").write_text('region = "us-east-1\nlookback_days = [\n')
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path))
    assert_one_clear_failure(done, "chipwise.toml is not valid TOML")


def test_invalid_chipwise_toml(tmp_path: Path) -> None:
    (tmp_path / "chipwise.toml").write_text("lookback_days = 400\nno_such_setting = 1\n")
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path))
    assert_one_clear_failure(done, "lookback_days", "no_such_setting")


def test_missing_config_file(tmp_path: Path) -> None:
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path, CHIPWISE_CONFIG=str(tmp_path / "nope.toml")))
    assert_one_clear_failure(done, "CHIPWISE_CONFIG", "no such file")


def test_postgres_url_is_postgresql(tmp_path: Path) -> None:
    # postgres:// (what psql and many consoles print) is accepted as PostgreSQL: the error is about reaching it
    url = f"postgres://chipwise:{PASSWORD}@127.0.0.1:{closed_port()}/chipwise"
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path, CHIPWISE_DATABASE_URL=url))
    assert_one_clear_failure(done, "cannot reach the database", "postgresql+psycopg://chipwise:***@")


def test_mysql_is_not_supported(tmp_path: Path) -> None:
    url = f"mysql://chipwise:{PASSWORD}@127.0.0.1/chipwise"
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path, CHIPWISE_DATABASE_URL=url))
    assert_one_clear_failure(done, "mysql:// databases are not supported", "postgresql+psycopg://")


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


def test_serve_on_a_busy_port(tmp_path: Path, busy_port: int) -> None:
    done = chipwise(tmp_path, "serve", "--port", str(busy_port), env=base_env(tmp_path))
    assert_one_clear_failure(done, f"port {busy_port}", "already in use")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--to", "s3"], "--bucket"),
        (["--to", "s3", "--bucket", "b"], "no region"),
        (["--to", "cloudwatch", "--region", "us-east-1"], "no AWS credentials"),
    ],
)
def test_neuron_agent_says_why(tmp_path: Path, args: list[str], needle: str) -> None:
    env = base_env(tmp_path)
    env.pop("AWS_DEFAULT_REGION")
    done = chipwise(tmp_path, "neuron-agent", *args, env=env)
    assert_one_clear_failure(done, needle)


def test_unknown_filter_value(tmp_path: Path) -> None:
    done = chipwise(tmp_path, "findings", "--rule", "nonexistent", env=base_env(tmp_path))
    assert_one_clear_failure(done, "nonexistent", "chipwise rules")


def test_a_bad_region_in_chipwise_toml_names_the_file_not_the_aws_environment(tmp_path: Path) -> None:
    (tmp_path / "chipwise.toml").write_text('region = "mars-1"\n')
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path))
    message = assert_one_clear_failure(done, "region in chipwise.toml")
    assert "AWS environment" not in message


def test_a_missing_sqlite_folder_says_the_folder_does_not_exist(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'no-such-folder' / 'chipwise.db'}"
    done = chipwise(tmp_path, "findings", env=base_env(tmp_path, CHIPWISE_DATABASE_URL=url))
    message = assert_one_clear_failure(done, "does not exist", str(tmp_path / "no-such-folder"))
    assert "server is running" not in message


def test_catalog_refresh_without_credentials_starts_with_the_error(tmp_path: Path) -> None:
    done = chipwise(tmp_path, "catalog", "refresh", env=base_env(tmp_path))
    assert_one_clear_failure(done, "credentials")
    assert done.stderr.startswith("chipwise: "), repr(done.stderr[:40])


def test_catalog_show_of_an_unknown_region_fails(tmp_path: Path) -> None:
    done = chipwise(tmp_path, "catalog", "show", "--region", "mars-1", env=base_env(tmp_path))
    assert_one_clear_failure(done, "mars-1", "chipwise catalog regions")
    assert "n/a" not in done.stdout
