"""Settings: read once, environment over chipwise.toml over defaults, bad values named."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from chipwise.errors import ConfigError
from chipwise.settings import get_settings


def test_defaults_use_a_sqlite_file_in_the_working_directory() -> None:
    settings = get_settings()
    assert settings.database_url == "sqlite:///chipwise.db"
    assert settings.lookback_days == 14
    assert settings.scan_regions == ["us-east-1"]


def test_environment_overrides_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Given a chipwise.toml and one environment override
    (tmp_path / "chipwise.toml").write_text(
        'lookback_days = 30\nemail_recipients = ["a@example.com"]\n[batch_queues]\ninf2 = "q-inf2"\n'
    )
    monkeypatch.setenv("CHIPWISE_LOOKBACK_DAYS", "21")
    monkeypatch.setenv("CHIPWISE_ACCOUNT_IDS", "111111111111, 222222222222")
    monkeypatch.setenv("CHIPWISE_ALERT_THRESHOLD_USD", "125.50")
    # When the settings are read
    settings = get_settings()
    # Then the environment wins, the file fills in the rest
    assert settings.lookback_days == 21
    assert settings.email_recipients == ["a@example.com"]
    assert settings.batch_queues.inf2 == "q-inf2"
    assert settings.account_ids == ["111111111111", "222222222222"]
    assert settings.alert_threshold_usd == Decimal("125.50")


def test_settings_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    first = get_settings()
    monkeypatch.setenv("CHIPWISE_LOOKBACK_DAYS", "3")
    assert get_settings() is first


@pytest.mark.parametrize(
    ("env", "value", "named"),
    [
        ("CHIPWISE_LOOKBACK_DAYS", "fourteen", "CHIPWISE_LOOKBACK_DAYS"),
        ("CHIPWISE_LOOKBACK_DAYS", "0", "CHIPWISE_LOOKBACK_DAYS"),
        ("CHIPWISE_REGION", "mars-1", "CHIPWISE_REGION"),
        ("CHIPWISE_ACCOUNT_IDS", "12345", "CHIPWISE_ACCOUNT_IDS"),
        ("CHIPWISE_BATCH_QUEUES__NOPE", "x", "CHIPWISE_BATCH_QUEUES__NOPE"),
    ],
)
def test_a_bad_value_names_the_setting(monkeypatch: pytest.MonkeyPatch, env: str, value: str, named: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=named):
        get_settings()


def test_an_unknown_key_in_the_toml_file_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "chipwise.toml").write_text("lookback_dayz = 3\n")
    with pytest.raises(ConfigError, match="lookback_dayz"):
        get_settings()


# --- the home region: --region, CHIPWISE_REGION, then the standard AWS environment and profile -------------------


@pytest.fixture
def no_aws_region(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No region anywhere in the environment; an empty AWS config file the test can write a profile into."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "CHIPWISE_REGION", "CHIPWISE_REGIONS"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "aws-config"
    config.write_text("")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    return config


def test_without_any_region_the_home_region_is_us_east_1(no_aws_region: Path) -> None:
    assert get_settings().region == "us-east-1"


def test_aws_region_is_the_home_region_without_chipwise_region(
    no_aws_region: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-north-1")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert get_settings().region == "eu-west-1"
    assert get_settings().scan_regions == ["eu-west-1"]


def test_aws_default_region_comes_next(no_aws_region: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-north-1")
    assert get_settings().region == "eu-north-1"


def test_the_profile_region_comes_last(no_aws_region: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_aws_region.write_text("[default]\nregion = us-west-2\n[profile finops]\nregion = ap-northeast-1\n")
    assert get_settings().region == "us-west-2"
    get_settings.cache_clear()
    monkeypatch.setenv("AWS_PROFILE", "finops")
    assert get_settings().region == "ap-northeast-1"


def test_a_missing_profile_is_no_region(no_aws_region: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "nope")
    assert get_settings().region == "us-east-1"


def test_chipwise_region_wins_over_the_aws_environment(no_aws_region: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("CHIPWISE_REGION", "us-west-2")
    assert get_settings().region == "us-west-2"


def test_a_bad_aws_region_is_named_as_such(no_aws_region: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "moon-1")
    with pytest.raises(ConfigError, match="AWS_REGION"):
        get_settings()
