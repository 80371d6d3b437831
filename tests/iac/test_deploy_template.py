"""What a real deploy relies on, read from the template, the Makefile and pyproject: the layer is built for the
functions' architecture from pinned runtime wheels, every asynchronous function keeps its failures, data at rest
is encrypted, the public API is bounded and logged, and the schema is migrated once per deploy, first."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml
from built_layer import pinned
from cfnlint.decode import cfn_yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "iac" / "template.yaml"
MAKEFILE = (ROOT / "Makefile").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SYNCHRONOUS_EVENTS = {"SQS", "HttpApi"}  # polled by Lambda, or a request waiting for its answer


def _template() -> dict[str, Any]:
    loaded: dict[str, Any] = cfn_yaml.loads(TEMPLATE.read_text(), str(TEMPLATE))
    return loaded


def _make_variable(name: str) -> str:
    match = re.search(rf"^{name}\s*[:?]?=\s*(.+)$", MAKEFILE, re.M)
    assert match, f"Makefile sets no {name}"
    return match.group(1).strip()


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: r for n, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def test_the_layer_is_built_for_the_functions_architecture_and_runtime() -> None:
    # Given the functions' architecture and runtime
    template = _template()
    globals_ = template["Globals"]["Function"]
    layer = template["Resources"]["ChipwiseLayer"]
    (architecture,) = globals_["Architectures"]
    # Then the layer declares the same, and the Makefile builds for them by default
    assert layer["Properties"]["CompatibleArchitectures"] == [architecture]
    assert layer["Metadata"]["BuildArchitecture"] == architecture
    assert layer["Properties"]["CompatibleRuntimes"] == [globals_["Runtime"]]
    assert _make_variable("LAYER_ARCH") == architecture
    assert "python" + _make_variable("LAYER_PYTHON_VERSION") == globals_["Runtime"]
    # And make runs at the repository root (the Makefile there), so SAM never copies a local .venv
    assert layer["Metadata"]["BuildMethod"] == "makefile"
    assert (TEMPLATE.parent / layer["Metadata"]["WorkingDirectory"]).resolve() == ROOT
    assert (TEMPLATE.parent / layer["Metadata"]["ContextPath"]).resolve() == ROOT


def test_the_botocore_models_kept_cover_every_client_the_code_makes() -> None:
    # Given every service a client is made for: AwsContext.client's overloads and literal client("...") calls
    sources = [*(ROOT / "shared" / "chipwise").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    text = "\n".join(p.read_text() for p in sources)
    used = set(re.findall(r"""client\(\s*["']([a-z0-9-]+)["']""", text))
    used |= set(re.findall(r'def client\(self, service: Literal\["([a-z0-9-]+)"\]', text))
    if "tracer().capture_lambda_handler" in text:
        used.add("xray")  # Powertools' Tracer (the X-Ray SDK) makes its own client
    # Then the layer keeps each of their models
    kept = set(_make_variable("BOTOCORE_SERVICES").split())
    assert used and used <= kept, f"add {sorted(used - kept)} to BOTOCORE_SERVICES in the Makefile"


def test_the_runtime_is_pinned_within_pyproject_s_ranges() -> None:
    pins = pinned()
    for spec in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not pinned: run `make layer-constraints`"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is outside {requirement.specifier}"


def test_the_command_line_is_not_in_the_runtime() -> None:
    # The layer installs `dependencies`: the CLI's libraries are an extra that the Makefile's installs add
    runtime = {canonicalize_name(Requirement(s).name) for s in PYPROJECT["project"]["dependencies"]}
    cli = {canonicalize_name(Requirement(s).name) for s in PYPROJECT["project"]["optional-dependencies"]["cli"]}
    assert {"typer", "rich"} <= cli and not cli & runtime
    assert not {"typer", "rich", "moto", "click", "pygments"} & set(pinned())
    installs = re.findall(r"pip install --quiet -e '\.\[([a-z,]+)\]'", MAKEFILE)
    assert installs and all("cli" in extras.split(",") for extras in installs)


def test_every_asynchronously_invoked_function_keeps_its_failures() -> None:
    # Schedules, EventBridge, S3 and CloudFormation (custom resources) invoke asynchronously
    for name, function in _functions(_template()).items():
        props = function["Properties"]
        kinds = {e["Type"] for e in props.get("Events", {}).values()}
        if kinds and kinds <= SYNCHRONOUS_EVENTS:
            continue
        assert props.get("DeadLetterQueue", {}).get("Type") == "SQS", f"{name} loses failed asynchronous events"


def test_queues_topic_secret_and_access_logs_are_encrypted_at_rest() -> None:
    resources = _template()["Resources"]
    for name, resource in resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::SQS::Queue":
            assert props.get("KmsMasterKeyId"), f"{name} is not KMS-encrypted"
        if resource["Type"] == "AWS::SNS::Topic":
            assert props.get("KmsMasterKeyId") == {"Ref": "ChipwiseKey"}, f"{name} cannot take alarms encrypted"
        if resource["Type"] in ("AWS::SecretsManager::Secret", "AWS::Logs::LogGroup"):
            assert props.get("KmsKeyId"), f"{name} is not under the stack's key"
    assert resources["ChipwiseKey"]["Properties"]["EnableKeyRotation"] is True


def test_the_key_serves_aws_services_only_for_this_account() -> None:
    statements = _template()["Resources"]["ChipwiseKey"]["Properties"]["KeyPolicy"]["Statement"]
    for statement in statements:
        principal = statement["Principal"]
        if "Service" in principal:  # CloudWatch alarms, CloudWatch Logs: scoped by a condition
            assert statement.get("Condition"), f"{statement['Sid']} lets the service use the key for anyone"
            assert all(not a.endswith("*") for a in statement["Action"])
        else:
            assert principal == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}


def test_the_public_intake_is_bounded_and_logged() -> None:
    template = _template()
    intake = template["Resources"]["IntakeFunction"]["Properties"]
    condition, reserved, _none = intake["ReservedConcurrentExecutions"]["Fn::If"]
    assert reserved == {"Ref": "IntakeReservedConcurrency"}
    assert int(template["Parameters"]["IntakeReservedConcurrency"]["Default"]) > 0
    assert condition in template["Conditions"]
    api = template["Resources"]["IntakeApi"]["Properties"]
    logs = api["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0]
    assert template["Resources"][logs]["Properties"]["RetentionInDays"] >= 365
    assert "$context.identity.sourceIp" in api["AccessLogSettings"]["Format"]


def test_the_schema_is_migrated_once_per_deploy_before_any_function() -> None:
    template = _template()
    resources = template["Resources"]
    migration = resources["SchemaMigration"]["Properties"]
    # A new layer (new code and migrations) or another database triggers it, through the migrate function
    assert migration["ServiceToken"] == {"Fn::GetAtt": ["MigrateFunction", "Arn"]}
    assert migration["Layer"] == {"Ref": "ChipwiseLayer"}
    assert migration["Database"]["Fn::If"][1:] == [{"Ref": "DatabaseInstance"}, {"Ref": "DatabaseSecretArn"}]
    # Every other function waits for it
    for name, function in _functions(template).items():
        if name != "MigrateFunction":
            assert function.get("DependsOn") == "SchemaMigration", f"{name} may run before its schema exists"
    assert template["Outputs"]["SchemaRevision"]["Value"] == {"Fn::GetAtt": ["SchemaMigration", "Revision"]}


def test_deployed_functions_publish_to_the_stack_s_bus() -> None:
    # Settings publish ScanCompleted only when a bus is configured (a local run has none)
    env = _template()["Globals"]["Function"]["Environment"]["Variables"]
    assert env["CHIPWISE_EVENT_BUS_NAME"] == {"Ref": "EventBus"}


def test_every_check_checkov_skips_is_explained() -> None:
    skipped = yaml.safe_load((ROOT / "iac" / "checkov.yaml").read_text())["skip-check"]
    readme = (ROOT / "iac" / "README.md").read_text()
    explained = set(re.findall(r"^\| `(CKV_AWS_\d+)` \|", readme, re.M))
    assert skipped and set(skipped) == explained
