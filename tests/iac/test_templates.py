"""The SAM application is tested like code: it lints clean, its IAM is least-privilege, and every function's
handler accepts every sample event of its own (the files `sam local invoke -e` uses)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cfnlint.decode import cfn_yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "iac" / "template.yaml"
MEMBER_ROLE = ROOT / "iac" / "member-role.yaml"
REMEDIATION_ROLE = ROOT / "iac" / "remediation-role.yaml"
FUNCTIONS = (
    "scan_dispatch",
    "scan_account",
    "ingest_neuron",
    "ingest_bill",
    "benchmark_dispatch",
    "benchmark_result",
    "notify",
    "intake",
    "migrate",
    "slack_actions",
)
# Actions whose API takes no resource-level permission (or only "*"): the only place "*" may appear.
STAR_RESOURCE_ACTIONS = {
    "application-autoscaling:DescribeScalableTargets",  # Describe* take no resource-level permissions
    "application-autoscaling:DescribeScheduledActions",
    "autoscaling:DescribeAutoScalingGroups",  # as are Auto Scaling's
    "ce:GetCostAndUsage",
    "cloudwatch:GetMetricData",
    "cloudwatch:ListMetrics",
    "ec2:DescribeInstances",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeCapacityReservations",
    "sagemaker:ListEndpoints",
    "sagemaker:ListNotebookInstances",
    "sagemaker:ListClusters",
    "bedrock:ListProvisionedModelThroughputs",
    "sagemaker:ListApps",
    "sagemaker:DescribeApp",
    "sagemaker:DescribeCluster",
    "sagemaker:ListTrainingJobs",
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:DescribeModel",
    "sagemaker:DescribeTrainingJob",
    "sagemaker:ListTags",
    "sagemaker:ListInferenceComponents",
    "sagemaker:DescribeInferenceComponent",
    "batch:DescribeComputeEnvironments",
    "batch:DescribeJobQueues",
    "batch:DescribeJobDefinitions",
    "batch:ListJobs",
    "batch:DescribeJobs",
    "organizations:ListAccounts",
    "sts:GetCallerIdentity",
}


def _template(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = cfn_yaml.loads(path.read_text(), str(path))
    return loaded


@pytest.mark.parametrize("path", [TEMPLATE, MEMBER_ROLE, REMEDIATION_ROLE], ids=lambda p: p.name)
def test_cfn_lint_reports_no_errors(path: Path) -> None:
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    done = subprocess.run(
        [str(cfn_lint), "--format", "parseable", str(path)], capture_output=True, text=True, check=False
    )
    # parseable lines: file:line:col:end_line:end_col:RULE:message; errors are rules E0000-E9999
    errors = [line for line in done.stdout.splitlines() if line.split(":")[5:6] and line.split(":")[5][0] == "E"]
    assert errors == [], "\n".join(errors)
    assert done.returncode in (0, 4), done.stderr  # 4: warnings only


def _statements(template: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every IAM statement in the template: SAM function policies, IAM role policies, role trust policies and
    resource policies (the bucket's)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for name, resource in template["Resources"].items():
        props = resource.get("Properties", {})
        for key in ("AssumeRolePolicyDocument", "PolicyDocument"):
            found.extend((name, s) for s in _branches(props.get(key, {}).get("Statement", [])))
        policies = props.get("Policies", [])
        for policy in policies if isinstance(policies, list) else [policies]:
            if isinstance(policy, dict):
                document = policy.get("PolicyDocument", policy)
                found.extend((name, s) for s in _branches(document.get("Statement", [])))
    return found


def _branches(statements: list[Any]) -> list[dict[str, Any]]:
    """Statements with every ``Fn::If`` unfolded into both branches (``AWS::NoValue`` dropped): a conditional
    grant is still a grant."""
    unfolded: list[dict[str, Any]] = []
    for statement in statements:
        if "Fn::If" in statement:
            _condition, *choices = statement["Fn::If"]
            unfolded.extend(_branches([c for c in choices if c != {"Ref": "AWS::NoValue"}]))
        else:
            unfolded.append(statement)
    return unfolded


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("path", [TEMPLATE, MEMBER_ROLE, REMEDIATION_ROLE], ids=lambda p: p.name)
def test_iam_is_least_privilege(path: Path) -> None:
    statements = _statements(_template(path))
    assert statements
    for owner, statement in statements:
        if statement.get("Effect") == "Deny":
            continue
        actions = [str(a) for a in _as_list(statement["Action"])]
        assert all("*" not in a for a in actions), f"{owner}: wildcard action in {actions}"
        if statement.get("Principal") == "*":  # anyone, but only from our organization
            condition = statement.get("Condition", {}).get("StringEquals", {})
            assert "aws:PrincipalOrgID" in condition, f"{owner}: trusts anyone"
        if "*" in _as_list(statement.get("Resource", [])):
            assert set(actions) <= STAR_RESOURCE_ACTIONS, f"{owner}: '*' resource for {actions}"


def test_every_function_is_in_the_template_with_its_own_role() -> None:
    resources = _template(TEMPLATE)["Resources"]
    code_uris = {
        Path(str(r["Properties"]["CodeUri"])).name: name
        for name, r in resources.items()
        if r["Type"] == "AWS::Serverless::Function"
    }
    assert set(code_uris) == set(FUNCTIONS)
    for name in code_uris.values():
        assert resources[name]["Properties"].get("Policies"), f"{name} has no policy of its own"
    scan = resources["ScanAccountFunction"]["Properties"]["Events"]["Queue"]["Properties"]
    assert scan["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_member_role_grants_exactly_what_the_configuration_page_lists() -> None:
    # Given the permissions docs/configuration.md promises a scan needs ("iac/member-role.yaml grants exactly these")
    readme = (ROOT / "docs" / "configuration.md").read_text()
    section = readme.split("## Running it against a real AWS account", 1)[1].split("\n## ", 1)[0]
    promised = set(re.findall(r"`([a-z0-9]+:[A-Za-z]+)`", section))
    # When we collect every action the member role allows
    granted = {a for _, s in _statements(_template(MEMBER_ROLE)) if "Resource" in s for a in _as_list(s["Action"])}
    # Then they are the same list
    assert promised and granted == promised


def test_event_driven_failures_are_kept_and_alarmed() -> None:
    resources = _template(TEMPLATE)["Resources"]
    for name, resource in resources.items():
        props = resource.get("Properties", {})
        kinds = {e["Type"] for e in props.get("Events", {}).values()}
        if kinds & {"S3", "EventBridgeRule", "ScheduleV2"}:
            assert props.get("DeadLetterQueue", {}).get("Type") == "SQS", f"{name} loses failed async events"
    alarms = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    queues = {a["Dimensions"][0]["Value"]["Fn::GetAtt"][0] for a in alarms if a["Namespace"] == "AWS/SQS"}
    assert queues == {"ScanDeadLetterQueue", "AsyncDeadLetterQueue"}
    # and notifications that stay undelivered (the notify function's EMF metric)
    assert {a["MetricName"] for a in alarms if a["Namespace"] == "Chipwise"} == {"MessagesUndelivered"}
    assert all(a["AlarmActions"] == [{"Ref": "AlarmTopic"}] for a in alarms)


def test_benchmark_jobs_get_the_stack_s_image_role_and_queues() -> None:
    template = _template(TEMPLATE)
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["CHIPWISE_BENCHMARK_IMAGE"] == {"Ref": "BenchmarkImage"}
    assert env["CHIPWISE_BENCHMARK_JOB_ROLE_ARN"]["Fn::If"][1] == {"Fn::GetAtt": ["BenchmarkJobRole", "Arn"]}
    queues = {r["Properties"]["JobQueueName"] for r in template["Resources"].values() if r["Type"].endswith("JobQueue")}
    configured = {env[f"CHIPWISE_BATCH_QUEUES__{k}"]["Fn::If"][1] for k in ("INF2", "TRN1")}
    assert configured == queues and env["CHIPWISE_BATCH_QUEUES__TRN2"] == ""


def test_slack_is_off_unless_a_webhook_is_given() -> None:
    # An empty secret would make every Slack message fail; without a URL there is no secret and no Slack channel.
    template = _template(TEMPLATE)
    assert template["Resources"]["SlackWebhookSecret"]["Condition"] == "SlackEnabled"
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["CHIPWISE_SLACK_WEBHOOK_SECRET_NAME"] == {"Fn::If": ["SlackEnabled", {"Ref": "SlackWebhookSecret"}, ""]}


def test_member_role_requires_the_external_id_and_trusts_only_the_scan_function() -> None:
    role = _template(MEMBER_ROLE)["Resources"]["ChipwiseReadOnlyRole"]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert "sts:ExternalId" in trust["Condition"]["StringEquals"]
    principal = trust["Condition"]["ArnLike"]["aws:PrincipalArn"]["Fn::Sub"]
    assert principal.endswith(":role/${ChipwiseStackName}-ScanAccountFunctionRole-*")


def test_the_scan_function_assumes_member_roles_only_in_its_organization_or_listed_accounts() -> None:
    template = _template(TEMPLATE)
    statements = template["Resources"]["ScanAccountFunction"]["Properties"]["Policies"][0]["Statement"]
    (assume,) = [s for s in statements if s["Action"] == "sts:AssumeRole"]
    condition, in_org, in_list = assume["Condition"]["Fn::If"]
    assert condition == "NoAccountList"
    assert in_org == {"StringEquals": {"aws:ResourceOrgID": "${aws:PrincipalOrgID}"}}
    assert in_list == {"StringEquals": {"aws:ResourceAccount": {"Fn::Split": [",", {"Ref": "ScanAccountIds"}]}}}


def test_only_the_scan_function_has_the_external_id() -> None:
    template = _template(TEMPLATE)
    assert "CHIPWISE_EXTERNAL_ID" not in template["Globals"]["Function"]["Environment"]["Variables"]
    for name, resource in template["Resources"].items():
        env = resource.get("Properties", {}).get("Environment", {}).get("Variables", {})
        if "CHIPWISE_EXTERNAL_ID" in env:
            assert name == "ScanAccountFunction"
    scan_env = template["Resources"]["ScanAccountFunction"]["Properties"]["Environment"]["Variables"]
    assert scan_env["CHIPWISE_EXTERNAL_ID"] == {"Ref": "ExternalId"}


def _handler(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"chipwise_contract_{name}", ROOT / "functions" / name / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


EVENT_FILES = sorted((ROOT / "events").glob("*/*.json"))


def test_every_function_has_sample_events() -> None:
    for name in FUNCTIONS:
        assert list((ROOT / "events" / name).glob("*.json")), f"events/{name}/ has no sample event"


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_sample_event_is_handled_by_its_function(
    path: Path, aws: Any, use_db: str, lambda_context: Any, monkeypatch: pytest.MonkeyPatch, cfn_responses: Any
) -> None:
    # Given the function's own sample event, the emulator and an empty store
    import boto3

    boto3.client("sqs").create_queue(QueueName="chipwise-scans")
    boto3.client("events").create_event_bus(Name="chipwise")
    boto3.client("s3").create_bucket(Bucket="chipwise-artifacts")
    monkeypatch.setenv("CHIPWISE_ACCOUNT_IDS", "123456789012")
    monkeypatch.setenv(
        "CHIPWISE_SCAN_QUEUE_URL", boto3.client("sqs").get_queue_url(QueueName="chipwise-scans")["QueueUrl"]
    )
    from chipwise.settings import get_settings

    get_settings.cache_clear()
    event = json.loads(path.read_text())
    if "ResponseURL" in event:  # a CloudFormation custom resource answers on 127.0.0.1
        event["ResponseURL"] = cfn_responses.url
    # When its handler is invoked, Then it answers (invalid events are rejected in the answer, never a crash)
    result = _handler(path.parent.name)(event, lambda_context)
    assert isinstance(result, dict)
    if "invalid" in path.stem or "malformed" in path.stem:
        rejected = result.get("batchItemFailures") or result.get("rejected") or result.get("statusCode", 200) >= 400
        assert rejected or result.get("status") in {"rejected", "ignored"} or result.get("errors"), result


def test_the_intake_function_has_only_what_it_uses_and_runs_retention_daily() -> None:
    intake = _template(TEMPLATE)["Resources"]["IntakeFunction"]["Properties"]
    actions = {a for s in intake["Policies"][0]["Statement"] for a in _as_list(s["Action"])}
    assert actions == {"secretsmanager:GetSecretValue"}  # no SES: its mail goes through the outbox
    schedule = intake["Events"]["Retention"]
    assert schedule["Type"] == "ScheduleV2" and '"intake_retention"' in schedule["Properties"]["Input"]
    assert intake["Environment"]["Variables"]["CHIPWISE_PUBLIC_BASE_URL"] == {"Ref": "IntakePublicBaseUrl"}
    api = _template(TEMPLATE)["Resources"]["IntakeApi"]["Properties"]
    assert (
        api["RouteSettings"]["POST /intake"]["ThrottlingRateLimit"]
        <= api["DefaultRouteSettings"]["ThrottlingRateLimit"]
    )


def test_the_remediation_role_is_opt_in_tag_conditioned_and_the_scan_role_stays_read_only() -> None:
    # Given the member account's two roles
    remediation = _statements(_template(REMEDIATION_ROLE))
    scan = {a for _, s in _statements(_template(MEMBER_ROLE)) if "Resource" in s for a in _as_list(s["Action"])}
    # Then the scan role changes nothing (only reads)
    assert all(a.split(":")[1].startswith(("Get", "List", "Describe")) for a in scan), scan
    # And the remediation role grants only the mechanical steps, each change conditioned on the mark tag or its key
    allowed = {
        a for _, s in remediation if s.get("Effect") == "Allow" and "Resource" in s for a in _as_list(s["Action"])
    }
    changes = {a for a in allowed if not a.split(":")[1].startswith(("Get", "List", "Describe"))}
    assert changes == {
        "ec2:CreateTags",
        "ec2:DeleteTags",
        "ec2:StopInstances",
        "ec2:StartInstances",
        "sagemaker:AddTags",
        "sagemaker:DeleteTags",
        "sagemaker:UpdateEndpointWeightsAndCapacities",
        "sagemaker:DeleteEndpoint",
        "sagemaker:UpdateInferenceComponentRuntimeConfig",
        "sagemaker:CreateEndpoint",
        "sagemaker:CreateEndpointConfig",
        "scheduler:CreateSchedule",
        "scheduler:DeleteSchedule",
        "iam:PassRole",
        "application-autoscaling:RegisterScalableTarget",
        "application-autoscaling:DeregisterScalableTarget",
        "application-autoscaling:PutScheduledAction",
        "application-autoscaling:DeleteScheduledAction",
        "iam:CreateServiceLinkedRole",
        "eks:TagResource",
        "eks:UntagResource",
        "eks:UpdateNodegroupConfig",
        "autoscaling:CreateOrUpdateTags",
        "autoscaling:DeleteTags",
        "autoscaling:UpdateAutoScalingGroup",
    }
    for _, statement in remediation:
        actions = set(_as_list(statement["Action"]))
        resizes = {"ec2:StopInstances", "sagemaker:DeleteEndpoint", "eks:UpdateNodegroupConfig"}
        if statement.get("Effect") == "Allow" and actions & (resizes | {"autoscaling:UpdateAutoScalingGroup"}):
            assert "aws:ResourceTag/chipwise:remediation" in statement["Condition"]["StringLike"]
        if statement.get("Effect") == "Allow" and actions & {
            "ec2:CreateTags",
            "sagemaker:AddTags",
            "eks:TagResource",
            "autoscaling:CreateOrUpdateTags",
        }:
            assert statement["Condition"]["ForAllValues:StringEquals"]["aws:TagKeys"] == ["chipwise:remediation"]
        if statement.get("Effect") == "Allow" and any(a.startswith("application-autoscaling:Put") for a in actions):
            assert statement["Condition"]["StringEquals"] == {
                "application-autoscaling:service-namespace": "sagemaker",
                "application-autoscaling:scalable-dimension": "sagemaker:variant:DesiredInstanceCount",
            }
        if statement.get("Effect") == "Allow" and "iam:CreateServiceLinkedRole" in actions:
            assert statement["Condition"]["StringEquals"] == {
                "iam:AWSServiceName": "sagemaker.application-autoscaling.amazonaws.com"
            }
    denies = [s for _, s in remediation if s.get("Effect") == "Deny"]
    for deny in denies:
        assert deny["Condition"]["StringEqualsIgnoreCase"] == {"aws:ResourceTag/chipwise:protect": ["true", "yes", "1"]}
    trust = _template(REMEDIATION_ROLE)["Resources"]["ChipwiseRemediationRole"]["Properties"][
        "AssumeRolePolicyDocument"
    ]
    assert "SlackActionsFunctionRole" in json.dumps(trust) and "sts:ExternalId" in json.dumps(trust)
