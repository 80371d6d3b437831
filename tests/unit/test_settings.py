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
