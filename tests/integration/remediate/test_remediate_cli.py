"""``chipwise findings apply`` / ``rollback`` as a user runs them (the command line's entry point in this process,
the emulator, a SQLite store): what a dry run and an unapproved apply print, the audit in ``findings show``, and
one-line errors. ``chipwise.cli.main`` is what the console script runs; the script as its own process (start-up,
exit codes, one-line errors) is tested in ``tests/integration/test_cli_errors.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import boto3
import pytest
from remediate_factories import (
    REGION,
    add_finding,
    endpoint,
    gpu_instance,
    gpu_utilisation,
    idle_instance_finding,
    instance_state,
)

from chipwise.aws import base_session
from chipwise.cli import main
from chipwise.settings import get_settings
from chipwise.store.session import get_session_factory
from chipwise_devkit.emulator import Emulator


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def chipwise(
    sqlite_url: str, aws: Emulator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., Ran]:
    """``chipwise ARGS`` run through the command line's entry point with the environment a user's shell would give
    it (the emulator's AWS settings, the store, one attempt per AWS call, a 200-column page, USER=carol), its exit
    code and what it printed on stdout and stderr kept apart."""
    monkeypatch.setenv("CHIPWISE_DATABASE_URL", sqlite_url)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("USER", "carol")
    get_settings.cache_clear()
    base_session.cache_clear()

    def run(*args: str) -> Ran:
        capsys.readouterr()  # what the test printed before is not the command's
        code = main(list(args))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run


def test_apply_show_and_rollback_from_the_cli(sqlite_url: str, aws: Emulator, chipwise: Callable[..., Ran]) -> None:
    instance = gpu_instance()
    with get_session_factory(sqlite_url).begin() as session:
        finding = idle_instance_finding(session, instance)
    short = finding[:8]
    gpu_utilisation(aws, instance, 0.5)  # fresh and idle since the scan

    dry = chipwise("findings", "apply", short, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"dry run: instance {instance} ({short}) would get these calls:")
    assert f"  ec2.StopInstances(InstanceIds=['{instance}'])" in dry.stdout.splitlines()
    unapproved = chipwise("findings", "apply", short)
    assert unapproved.returncode == 0 and "add --yes to make the change" in unapproved.stdout
    assert instance_state(instance)[0] == "running"

    applied = chipwise("findings", "apply", short, "--yes")
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[0] == f"applied: instance {instance} ({short})"
    assert instance_state(instance)[0] == "stopped"

    again = chipwise("findings", "apply", short, "--yes")
    assert again.returncode == 1 and len(again.stderr.strip().splitlines()) <= 2 and "already applied" in again.stderr

    back = chipwise("findings", "rollback", short)
    assert back.returncode == 0, back.stderr
    assert instance_state(instance)[0] == "running"

    shown = json.loads(chipwise("findings", "show", short, "--json").stdout)
    operator = boto3.client("sts", region_name=REGION).get_caller_identity()["Arn"]  # the AWS caller, not $USER
    assert [(a["event"], a["status"], a["who"]) for a in shown["audit"]] == [
        ("apply", "applied", f"{operator} (cli)"),
        ("rollback", "rolled_back", f"{operator} (cli)"),
    ]
    assert shown["audit"][0]["calls"] == ["ec2.CreateTags", "ec2.StopInstances"]
    table = chipwise("findings", "show", short).stdout
    assert "audit" in table and "rolled_back" in table


def test_refusal_and_bad_ids_are_one_line_and_exit_1(
    sqlite_url: str, aws: Emulator, chipwise: Callable[..., Ran]
) -> None:
    instance = gpu_instance()
    with get_session_factory(sqlite_url).begin() as session:
        finding = idle_instance_finding(session, instance)
    gpu_utilisation(aws, instance, 71.0)
    refused = chipwise("findings", "apply", finding[:8], "--yes")
    assert refused.returncode == 1
    assert len(refused.stderr.strip().splitlines()) <= 2 and "became busy since the scan" in refused.stderr
    assert "Traceback" not in refused.stderr
    shown = json.loads(chipwise("findings", "show", finding[:8], "--json").stdout)
    assert [a["status"] for a in shown["audit"]] == ["refused"]  # the refusal is kept although the command failed
    for args in (("apply", "0badf00d", "--yes"), ("rollback", finding[:8])):
        done = chipwise("findings", *args)
        assert done.returncode == 1 and len(done.stderr.strip().splitlines()) <= 2, done.stderr
        assert "Traceback" not in done.stderr


def test_variant_off_hours_dry_run_prints_the_scaling_calls(
    sqlite_url: str, aws: Emulator, chipwise: Callable[..., Ran]
) -> None:

    arn = endpoint("chat-ep", count=2)
    with get_session_factory(sqlite_url).begin() as session:
        finding = add_finding(
            session,
            rule_id="accelerator_off_hours",
            arn=arn,
            kind="sagemaker_endpoint",
            name="chat-ep",
            instance_type="ml.inf2.xlarge",
            count=2,
            recommendation={"action": "schedule"},
            evidence={"off_stretches": "Sat 00:00 → Mon 06:00", "variant_name": "AllTraffic"},
        )
    short = finding[:8]
    dry = chipwise("findings", "apply", short, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0].startswith(f"dry run: variant chat-ep/AllTraffic ({short}) would get these calls:")
    target = (
        "ServiceNamespace='sagemaker', ResourceId='endpoint/chat-ep/variant/AllTraffic', "
        "ScalableDimension='sagemaker:variant:DesiredInstanceCount'"
    )
    assert f"  application-autoscaling.RegisterScalableTarget({target}, MinCapacity=2, MaxCapacity=2)" in lines
    assert (
        f"  application-autoscaling.PutScheduledAction({target}, ScheduledActionName='chipwise-{short}-1-off', "
        "Schedule='cron(0 0 ? * SAT *)', Timezone='UTC', ScalableTargetAction={'MinCapacity': 1, 'MaxCapacity': 1})"
    ) in lines
    client = boto3.client("application-autoscaling", region_name=REGION)
    assert client.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []
    assert client.describe_scheduled_actions(ServiceNamespace="sagemaker")["ScheduledActions"] == []
