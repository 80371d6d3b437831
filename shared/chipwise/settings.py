"""Settings: one model, read once (environment with prefix CHIPWISE_, then an optional chipwise.toml)."""

import os
import tomllib
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from chipwise.errors import ConfigError
from chipwise.models.common import is_account_id

DEFAULT_DATABASE_URL = "sqlite:///chipwise.db"
CONFIG_FILE_ENV = "CHIPWISE_CONFIG"
DEFAULT_REGION = "us-east-1"


def standard_aws_region() -> str | None:
    """The region the standard AWS environment names: ``AWS_REGION``, then ``AWS_DEFAULT_REGION``, then the
    profile's ``region`` in the AWS config file (``AWS_PROFILE`` or ``AWS_DEFAULT_PROFILE``, else ``default``, in
    ``AWS_CONFIG_FILE`` or ``~/.aws/config``, as the AWS CLI reads it). None when none of them names one. The file
    is read with configparser, not through botocore: a store read loads no AWS SDK (issue 37)."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    import configparser
    from pathlib import Path

    profile = os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE") or "default"
    config = configparser.RawConfigParser()
    try:
        config.read(Path(os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config").expanduser(), encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):  # an unreadable file names no region
        return None
    for section in (f"profile {profile}", profile) if profile != "default" else ("default", "profile default"):
        if config.has_section(section):
            return config.get(section, "region", fallback="").strip() or None
    return None


def _default_region() -> str:
    return standard_aws_region() or DEFAULT_REGION


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class BatchQueues(BaseModel):
    """AWS Batch job queues for benchmark runs, by target family."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    inf1: str | None = None  # Inferentia 1 (Neuron SDK 1 image): unset, an inf1 target is not benchmarked
    inf2: str = "chipwise-bench-inf2"
    trn1: str = "chipwise-bench-trn1"
    trn2: str = "chipwise-bench-trn2"
    gpu_baseline: str | None = None


class Settings(BaseSettings):
    """Every knob Chipwise has. Environment variables win over chipwise.toml, which wins over defaults."""

    model_config = SettingsConfigDict(
        defer_build=True,  # validators are built on the first get_settings(), not at import
        env_prefix="CHIPWISE_",
        env_nested_delimiter="__",
        extra="forbid",
        toml_file="chipwise.toml",
    )

    database_url: str = Field(DEFAULT_DATABASE_URL, description="SQLAlchemy URL of the store.")
    database_secret_arn: str | None = Field(
        None, description="Secrets Manager secret with the store's connection (deployed); overrides database_url."
    )
    database_host: str | None = Field(None, description="Database host when the secret carries none (Aurora).")
    region: str = Field(
        default_factory=_default_region,
        validate_default=True,
        pattern=r"^[a-z]{2}(-gov)?-[a-z]+-\d$",
        description="Home AWS region: CHIPWISE_REGION (or chipwise.toml), else the standard AWS environment "
        "(AWS_REGION, AWS_DEFAULT_REGION, the profile's region), else us-east-1.",
    )
    regions: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Regions to scan (default: the home region)."
    )
    lookback_days: int = Field(14, ge=1, le=63, description="Days of metrics and costs each scan reads.")
    thresholds_file: Path | None = Field(None, description="Policy file overriding rule thresholds.")
    account_ids: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Accounts to scan when AWS Organizations is not used."
    )
    use_organizations: bool = Field(False, description="List member accounts from AWS Organizations.")
    member_role_name: str = Field("ChipwiseReadOnly", description="Role assumed in each member account.")
    external_id: str | None = Field(None, description="ExternalId sent on every AssumeRole.")
    email_sender: str = Field("chipwise@example.com", description="Verified SES identity mail is sent from.")
    email_recipients: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Digest recipients (comma separated)."
    )
    advisory_email: str = Field("advisory@example.com", description="Internal address for drafts and plans.")
    public_base_url: str | None = Field(
        None,
        description="Public address of the intake API (https://…), the only base of links in emails; unset: the "
        "intake sends no email (a link is never built from request headers).",
    )
    slack_webhook_secret_name: str | None = Field(
        None, description="Secrets Manager secret (or SSM parameter) holding the Slack webhook URL."
    )
    remediation_role_name: str | None = Field(
        None,
        description="The opt-in remediation role (iac/remediation-role.yaml) assumed in a finding's account to apply "
        "or roll it back, with external_id; unset: the current credentials act (the account they belong to).",
    )
    remediation_scheduler_role_arn: str | None = Field(
        None,
        description="IAM role EventBridge Scheduler assumes to stop and start an instance on an off-hours schedule "
        "(`chipwise findings apply` of an accelerator_off_hours finding); unset: such findings are not applied.",
    )
    slack_signing_secret_name: str | None = Field(
        None,
        description="Secrets Manager secret holding the Slack app's signing secret: turns on the alert buttons "
        "(Apply, Snooze 7 days, Not waste) and verifies their requests.",
    )
    slack_team_id: str | None = Field(
        None,
        description="The Slack workspace (team id, T…) whose presses of the alert's buttons count; a press from "
        "any other workspace is refused and audited. Unset: every press is refused.",
    )
    slack_approvers: dict[str, list[str]] = Field(
        default_factory=dict,
        description='Who may press the alert\'s buttons, by scope: "*" (every finding), an account id, or '
        '"team:<team tag value>"; each a list of Slack user ids (U…, W…) or user-group ids (S…). Anyone else\'s '
        "press is refused and audited. Empty: nobody.",
    )
    slack_bot_token_secret_name: str | None = Field(
        None,
        description="Secrets Manager secret holding a Slack bot token (usergroups:read): resolves the user-group ids "
        "in slack_approvers to their members. Unset: only user ids approve.",
    )
    alert_precision_floor: float = Field(
        0.0,
        ge=0,
        le=1,
        description="A rule whose alerts were acted on less than this share of the time (applied or resolved, "
        "against dismissed or suppressed, over 30 days) goes to the digest only until it recovers; 0: never.",
    )
    alert_precision_min_decisions: int = Field(
        3, ge=1, le=1000, description="Decided alerts (acted on or dismissed) a rule needs before the floor applies."
    )
    alert_threshold_usd: Decimal = Field(Decimal("500"), ge=0, description="Alert at once above this saving.")
    owner_email_domains: list[str] = Field(
        default_factory=list,
        description="Domains an owner tag may route mail to (default: the domains of email_recipients and "
        "advisory_email); other owners are listed in the digest, never emailed.",
    )
    max_owners_per_resource: int = Field(3, ge=0, le=20, description="Owner addresses emailed per resource, at most.")
    notify_max_attempts: int = Field(
        30, ge=1, le=100, description="Send attempts, at most, before an outbox message is marked failed."
    )
    notify_give_up_hours: int = Field(
        48,
        ge=1,
        le=24 * 14,
        description="A message still undelivered this long after it was queued is marked failed (with backoff, a "
        "short SES or Slack outage never parks messages).",
    )
    notify_retry_seconds: int = Field(
        60, ge=1, le=86_400, description="Delay before the first retry of a failed send; doubles each attempt."
    )
    benchmark_min_savings_usd: Decimal = Field(
        Decimal("200"), ge=0, description="Benchmark findings saving at least this much a month."
    )
    benchmark_max_attempts: int = Field(
        3, ge=1, le=10, description="Benchmark job attempts per (finding, target) before the run is given up."
    )
    benchmark_expiry_hours: int = Field(
        24, ge=1, le=24 * 14, description="A benchmark run with no terminal state after this long is expired."
    )
    benchmark_timeout_minutes: int = Field(
        180, ge=5, le=24 * 60, description="Batch attempt timeout of a benchmark job (a timed-out job fails)."
    )
    benchmark_image: str = Field(
        "chipwise-benchmark-neuron:latest", description="Container image of Neuron benchmark jobs (iac/benchmark)."
    )
    benchmark_gpu_image: str = Field(
        "chipwise-benchmark-gpu:latest", description="Container image of the paired GPU baseline jobs."
    )
    benchmark_job_role_arn: str | None = Field(
        None, description="IAM role benchmark jobs run as (needs s3:PutObject on the artifacts bucket)."
    )
    artifacts_bucket: str = Field(
        "chipwise-artifacts", description="S3 bucket for neuron-monitor reports (neuron/) and benchmark results."
    )
    event_bus_name: str | None = Field(
        None, description="EventBridge bus ScanCompleted goes to (deployed: the stack's); none: scans publish nothing."
    )
    scan_queue_url: str | None = Field(None, description="SQS queue the dispatcher fans scans out to.")
    dead_letter_queue_url: str | None = Field(
        None,
        description="SQS queue a malformed event or record is put on at once, with its reason, instead of being "
        "retried (each function's own dead-letter queue); none: it fails and is retried as before.",
    )
    batch_queues: BatchQueues = Field(default_factory=BatchQueues)
    rules: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Rule thresholds by rule id ([rules.<rule_id>] in chipwise.toml); `chipwise rules` lists them.",
    )
    history_retention_days: int = Field(
        90,
        ge=63,
        le=3650,
        description="Days the store keeps scans (the latest of each account and region always stays), metric and "
        "Neuron rollups, Cost Explorer days, findings resolved that long ago and resources gone that long ago "
        "(at least the longest look-back, 63).",
    )
    message_retention_days: int = Field(
        30, ge=1, le=3650, description="Days sent or failed notifications (and notified scans) are kept."
    )
    audit_retention_days: int = Field(
        365, ge=30, le=3650, description="Days the remediation audit trail (applies, rollbacks) is kept."
    )
    intake_retention_days: int = Field(
        90, ge=1, le=3650, description="Intake submissions, contact data, plans and their links are deleted after this."
    )
    intake_submissions_per_client_per_hour: int = Field(
        10, ge=1, le=100_000, description="New intake submissions one client (source IP) may make an hour."
    )
    intake_submissions_per_address_per_day: int = Field(
        10, ge=1, le=100_000, description="New intake submissions naming one (normalised) email address a day."
    )
    intake_confirmation_emails_per_day: int = Field(
        200,
        ge=0,
        le=100_000,
        description="Confirmation emails the intake may send a day in all (every address, every client): past it the "
        "plan is shown and not mailed, and the advisory digest says so. Protects the SES identity's reputation.",
    )
    intake_resubmit_window_minutes: int = Field(
        30, ge=0, le=24 * 60, description="The same answers again within this window return the same plan."
    )
    intake_confirm_link_hours: int = Field(
        72, ge=1, le=24 * 14, description="How long the link confirming a founder's email address works."
    )
    incremental_metrics: bool = Field(
        True, description="Read only the metrics not stored yet (from the last read hour minus the overlap)."
    )
    metric_overlap_hours: int = Field(
        3, ge=0, le=48, description="Hours re-read before the last read hour, for datapoints CloudWatch adds late."
    )

    alert_max_per_run: int = Field(
        5,
        ge=0,
        le=100,
        description="Immediate alerts per notify run, at most; further new findings wait for the digest.",
    )
    owner_opt_in: bool = Field(
        False,
        description="Email every resource owner (owner tags) without asking; otherwise only owners of resources "
        "tagged chipwise:notify=yes. chipwise:notify=off always opts a resource out.",
    )
    digest_schedule: Literal["daily", "weekly"] = Field("daily", description="How often the digest goes out.")
    digest_scope: Literal["auto", "account", "team"] = Field(
        "auto",
        description="One digest per account, or per team (each team's top findings and total under the "
        "organisation's summary, teams from the resources' team tags); auto: per team when more than 10 accounts "
        "have findings and notify runs for every account.",
    )
    digest_weekday: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] = Field(
        "monday", description="The day of a weekly digest (UTC)."
    )
    report_base_url: str | None = Field(
        None,
        description="Where the HTML scan reports are published (chipwise report --output-dir); the digest links "
        "<report_base_url>/<report file>. Without it the digest names the `chipwise report` command.",
    )

    data_export_uri: str | None = Field(
        None,
        description="The AWS Data Exports export (CUR 2.0 or FOCUS 1.2) to read the bill from: "
        "s3://bucket/prefix/export-name (or a local directory laid out the same way).",
    )
    bill_engine: Literal["duckdb", "athena"] = Field(
        "duckdb", description="How the bill is read: DuckDB over the export's Parquet files, or Amazon Athena."
    )
    athena_database: str | None = Field(None, description="Glue database of the export's Athena table.")
    athena_table: str | None = Field(None, description="The export's Athena table (Data Exports integration).")
    athena_workgroup: str = Field("primary", description="Athena workgroup the bill query runs in.")
    athena_output_location: str | None = Field(
        None, description="s3:// location of Athena's query results (none: the workgroup's own)."
    )
    cost_source: Literal["auto", "bill", "cost_explorer"] = Field(
        "auto",
        description="Where a scan's costs come from: auto (the stored bill when it covers the window, else Cost "
        "Explorer), bill (only the bill), cost_explorer (only Cost Explorer).",
    )
    owner_tag_keys: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["owner", "user:owner"],
        description="Tag keys naming a resource's owner, first found wins (the bill's user: forms included).",
    )
    team_tag_keys: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["team", "user:team", "cost-center", "user:cost-center"],
        description="Tag keys naming a resource's team, first found wins (the bill's user: forms included).",
    )

    @field_validator("regions", "account_ids", "email_recipients", "owner_tag_keys", "team_tag_keys", mode="before")
    @classmethod
    def _csv(cls, value: object) -> object:
        return _split_csv(value)

    @field_validator("account_ids")
    @classmethod
    def _account_ids(cls, value: list[str]) -> list[str]:
        for account in value:
            if not is_account_id(account):
                raise ValueError(f"{account!r} is not a 12-digit AWS account id")
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        return normalise_database_url(value)

    @property
    def scan_regions(self) -> list[str]:
        return self.regions or [self.region]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get(CONFIG_FILE_ENV, "chipwise.toml"))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=toml_path))


_SUPPORTED_DATABASES = "PostgreSQL (postgresql+psycopg://user:password@host/db) or SQLite (sqlite:///chipwise.db)"


def normalise_database_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` (the forms Heroku, RDS consoles and psql print) as
    ``postgresql+psycopg://``; other databases are refused with the two that work. The error never repeats the
    URL, which may carry a password."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(f"not a database URL (expected {_SUPPORTED_DATABASES})")
    name = scheme.lower()
    if name in {"postgres", "postgresql", "postgresql+psycopg", "postgres+psycopg"}:
        return f"postgresql+psycopg://{rest}"
    if name.startswith(("postgresql+", "sqlite")):
        return url
    kind = name.split("+", 1)[0]
    raise ValueError(f"{kind}:// databases are not supported: use {_SUPPORTED_DATABASES}")


def _toml_settings() -> tuple[str, set[str]]:
    """The settings file's name and the top-level settings it sets (none when it is absent or unreadable)."""
    path = Path(os.environ.get(CONFIG_FILE_ENV, "chipwise.toml"))
    try:
        return str(path), set(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return str(path), set()


def describe_validation_error(exc: ValidationError) -> str:
    """One line naming each bad setting and where it came from: its environment variable, the settings file, or
    (the region only) the standard AWS environment."""
    toml_path, in_toml = _toml_settings()
    parts = []
    for error in exc.errors():
        path = ".".join(str(p) for p in error["loc"])
        env = "CHIPWISE_" + "__".join(str(p) for p in error["loc"]).upper()
        if not os.environ.get(env) and str(error["loc"][0]) in in_toml:
            env = f"{path} in {toml_path}"
        elif path == "region" and not os.environ.get(env):
            env = "from the AWS environment: AWS_REGION, AWS_DEFAULT_REGION or the profile"
        parts.append(f"{path} ({env}): {error['msg']}")
    return "invalid setting " + "; ".join(parts)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings, read once per process. Raises ConfigError naming the bad setting."""
    config = os.environ.get(CONFIG_FILE_ENV)
    if config and not Path(config).is_file():
        raise ConfigError(f"{CONFIG_FILE_ENV}={config}: no such file (unset it to use ./chipwise.toml)")
    try:
        settings = Settings()
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc)) from exc
    except tomllib.TOMLDecodeError as exc:
        path = config or "chipwise.toml"
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{config or 'chipwise.toml'} is not UTF-8 text") from exc
    if settings.database_secret_arn:
        from chipwise.database_secret import database_url_from_secret

        url = database_url_from_secret(
            settings.database_secret_arn, host=settings.database_host, region=settings.region
        )
        settings = settings.model_copy(update={"database_url": url})
    return settings
