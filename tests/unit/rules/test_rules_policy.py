"""The policy: defaults, [rules.<rule_id>] from chipwise.toml, a thresholds file and --config, in that order;
a typo is a one-line ConfigError naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.errors import ConfigError
from chipwise.pipeline.policy import load_policy
from chipwise.rules import policy_from_mapping
from chipwise.settings import get_settings


def test_the_default_policy_enables_every_rule_with_its_defaults() -> None:
    policy = load_policy()
    assert len(policy.rules()) == 11
    assert policy.params("gpu_idle").model_dump()["max_gpu_utilization_pct"] == 5.0
    assert policy.overrides() == {}


def test_chipwise_toml_overrides_thresholds(tmp_path: Path) -> None:
    # Given a chipwise.toml in the working directory (each test runs in its own tmp cwd)
    Path("chipwise.toml").write_text("[rules.gpu_idle]\nmax_gpu_utilization_pct = 3\nmin_idle_days = 10\n")
    get_settings.cache_clear()
    # When the policy is loaded
    policy = load_policy()
    # Then the overridden thresholds are used and reported
    assert policy.overrides() == {"gpu_idle": {"max_gpu_utilization_pct": 3.0, "min_idle_days": 10.0}}


def test_a_config_file_wins_over_the_thresholds_file_which_wins_over_chipwise_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the same threshold in chipwise.toml (3), a thresholds file (4) and a --config file (6)
    Path("chipwise.toml").write_text("[rules.gpu_idle]\nmax_gpu_utilization_pct = 3\nmin_idle_days = 9\n")
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[rules.gpu_idle]\nmax_gpu_utilization_pct = 4\n")
    config = tmp_path / "policy.toml"
    config.write_text(
        "[rules.gpu_idle]\nmax_gpu_utilization_pct = 6\n[rules.spiky_inference_bedrock]\nenabled = false\n"
    )
    monkeypatch.setenv("CHIPWISE_THRESHOLDS_FILE", str(thresholds))
    get_settings.cache_clear()
    # When each layer is loaded
    without_config = load_policy()
    with_config = load_policy(config)
    # Then later layers win key by key, and a disabled rule is not run
    assert without_config.overrides()["gpu_idle"] == {"max_gpu_utilization_pct": 4.0, "min_idle_days": 9.0}
    assert with_config.overrides()["gpu_idle"] == {"max_gpu_utilization_pct": 6.0, "min_idle_days": 9.0}
    assert "spiky_inference_bedrock" not in with_config.enabled_ids()
    assert "spiky_inference_bedrock" not in [r.meta.id for r in with_config.rules()]


def test_an_environment_variable_sets_one_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIPWISE_RULES__INFERENTIA_IDLE__MIN_IDLE_DAYS", "3")
    get_settings.cache_clear()
    assert load_policy().params("inferentia_idle").model_dump()["min_idle_days"] == 3.0


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"gpu_idel": {"min_idle_days": 3}}, "unknown rule gpu_idel"),
        ({"gpu_idle": {"min_idle_dayz": 3}}, "rules.gpu_idle.min_idle_dayz: unknown threshold"),
        ({"gpu_idle": {"min_idle_days": "soon"}}, "rules.gpu_idle.min_idle_days"),
        ({"gpu_idle": {"min_idle_days": 0}}, "greater than or equal to 1"),
    ],
)
def test_a_bad_policy_names_the_problem(overrides: dict[str, dict[str, object]], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        policy_from_mapping(overrides)


def test_an_unreadable_or_invalid_policy_file_is_a_config_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[rules.gpu_idle\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_policy(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        load_policy(tmp_path / "missing.toml")
    flat = tmp_path / "flat.toml"
    flat.write_text("[rules]\ngpu_idle = 3\n")
    with pytest.raises(ConfigError, match=r"\[rules.gpu_idle\] must be a table"):
        load_policy(flat)
