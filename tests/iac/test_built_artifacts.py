"""The built application, run as Lambda runs it: ``sam build`` (SAM CLI from PyPI, no Docker; the layer built for
this machine's architecture so it can be imported here), then every function's handler imported and invoked in a
fresh interpreter that sees only its built folder and the built layer (``python -I -S``), with each of its sample
events, against the emulator and a SQLite store. A template, migration or data file missing from the package, a
dependency missing from the layer or an import of the CLI fails here."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from built_layer import ELF_MACHINES, ROOT, elf_machine, host_arch, install_tool
from cfnlint.decode import cfn_yaml

from chipwise.store.schema import code_revisions, schema_status
from chipwise.store.session import get_engine

pytestmark = pytest.mark.slow

TEMPLATE = ROOT / "iac" / "template.yaml"
EVENTS = ROOT / "events"
NEURON_REPORT = ROOT / "tests" / "unit" / "collect" / "data" / "inf2_xlarge.jsonl"

# Runs in the fresh interpreter: argv = function folder, layer python/, events file, results file.
RUNNER = r"""
import json, sys
function_dir, layer_dir, events_file, results_file = sys.argv[1:5]
sys.path[:0] = [function_dir, layer_dir]
import app
import chipwise

class Context:
    function_name = "chipwise-built"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:chipwise-built"
    aws_request_id = "00000000-0000-0000-0000-000000000001"

    @staticmethod
    def get_remaining_time_in_millis():
        return 300_000

answers = []
for name, event in json.load(open(events_file)):
    try:
        answers.append({"event": name, "answer": app.handler(event, Context())})
    except Exception as exc:
        answers.append({"event": name, "error": f"{type(exc).__name__}: {exc}"})
stdlib = sys.base_prefix
loaded = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
outside = sorted(
    f for f in loaded
    if f and not f.startswith((function_dir, layer_dir)) and (not f.startswith(stdlib) or "site-packages" in f)
)
json.dump({"answers": answers, "chipwise": chipwise.__file__, "outside": outside}, open(results_file, "w"), default=str)
"""


def _functions() -> dict[str, str]:
    """{functions/<name>: logical id} from the template."""
    resources = cfn_yaml.loads(TEMPLATE.read_text(), str(TEMPLATE))["Resources"]
    return {
        Path(str(r["Properties"]["CodeUri"])).name: name
        for name, r in resources.items()
        if r["Type"] == "AWS::Serverless::Function"
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``sam build`` of iac/template.yaml with the layer for this machine."""
    sam = install_tool(".venv/sam/bin/sam")
    out = tmp_path_factory.mktemp("sam") / "build"
    # SAM's own settings, telling it not to send telemetry nor look for a newer release on PyPI this week
    app_dir = tmp_path_factory.mktemp("sam-app")
    (app_dir / "metadata.json").write_text(json.dumps({"telemetryEnabled": False, "lastVersionCheck": time.time()}))
    env = {**os.environ, "LAYER_ARCH": host_arch(), "SAM_CLI_TELEMETRY": "0", "__SAM_CLI_APP_DIR": str(app_dir)}
    done = subprocess.run(
        [str(sam), "build", "--template-file", str(TEMPLATE), "--build-dir", str(out), "--parallel"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return out


def _invoke(built: Path, name: str, events: list[tuple[str, dict[str, Any]]], env: dict[str, str], tmp: Path) -> Any:
    function_dir, layer_dir = built / _functions()[name], built / "ChipwiseLayer" / "python"
    events_file, results_file = tmp / f"{name}-events.json", tmp / f"{name}-results.json"
    events_file.write_text(json.dumps(events))
    arguments = [str(function_dir), str(layer_dir), str(events_file), str(results_file)]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RUNNER, *arguments],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(results_file.read_text())
    assert results["chipwise"].startswith(str(layer_dir)), results["chipwise"]
    assert results["outside"] == [], f"{name} imported from outside its folder and the layer"
    return results


def _lambda_env(emulator: Any, database_url: str) -> dict[str, str]:
    sqs = boto3.client("sqs")
    return {
        "PATH": os.environ.get("PATH", ""),
        **emulator.env(),
        "AWS_LAMBDA_FUNCTION_NAME": "chipwise-built",
        "POWERTOOLS_SERVICE_NAME": "chipwise",
        "POWERTOOLS_METRICS_NAMESPACE": "Chipwise",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "CHIPWISE_DATABASE_URL": database_url,
        "CHIPWISE_EVENT_BUS_NAME": "chipwise",
        "CHIPWISE_ACCOUNT_IDS": "123456789012",
        "CHIPWISE_SCAN_QUEUE_URL": sqs.get_queue_url(QueueName="chipwise-scans")["QueueUrl"],
    }


@pytest.fixture
def stack(aws: Any) -> Any:
    """What the stack creates around the functions, in the emulator, and the neuron-monitor reports the sample
    S3 events name."""
    boto3.client("sqs").create_queue(QueueName="chipwise-scans")
    boto3.client("events").create_event_bus(Name="chipwise")
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="chipwise-artifacts")
    report = gzip.compress(NEURON_REPORT.read_bytes())
    for path in (EVENTS / "ingest_neuron").glob("*.json"):
        for key in set(re.findall(r'"key": "(neuron/[^"]+)"', path.read_text())):
            s3.put_object(Bucket="chipwise-artifacts", Key=key, Body=report)
    return aws


def test_the_built_layer_is_this_machine_s(built: Path) -> None:
    machines = {elf_machine(p) for p in (built / "ChipwiseLayer").rglob("*") if p.is_file()} - {None}
    assert machines == {ELF_MACHINES[host_arch()]}


def test_the_built_migrate_function_migrates_and_answers(
    built: Path, stack: Any, cfn_responses: Any, tmp_path: Path
) -> None:
    # Given a new, empty database and CloudFormation's Create, Update and Delete requests
    url = f"sqlite:///{tmp_path / 'deployed.db'}"
    events = []
    for path in sorted((EVENTS / "migrate").glob("*.json")):
        event = json.loads(path.read_text())
        events.append((path.stem, {**event, "ResponseURL": cfn_responses.url}))
    # When the built function handles them
    results = _invoke(built, "migrate", events, _lambda_env(stack, url), tmp_path)
    # Then each was answered SUCCESS, and the schema is at the head of the migrations in this checkout
    assert [r.get("error") for r in results["answers"]] == [None] * len(events)
    assert [r["Status"] for r in cfn_responses.received] == ["SUCCESS"] * len(events)
    revisions = {r["Data"].get("Revision") for r in cfn_responses.received} - {None}
    assert revisions == {code_revisions().head}
    assert schema_status(url).state == "current"
    get_engine(url).dispose()


@pytest.mark.parametrize("name", sorted(set(_functions()) - {"migrate"}))
def test_each_built_function_handles_its_sample_events(
    name: str, built: Path, stack: Any, sqlite_url: str, tmp_path: Path
) -> None:
    # Given the function's sample events, the emulator and a migrated store
    paths = sorted((EVENTS / name).glob("*.json"))
    events = [(p.stem, json.loads(p.read_text())) for p in paths]
    assert events, f"events/{name}/ is empty"
    # When the built handler is imported and invoked in a fresh interpreter
    results = _invoke(built, name, events, _lambda_env(stack, sqlite_url), tmp_path)
    # Then each event is answered: a valid one handled, an invalid one rejected in the answer, never a crash
    for result in results["answers"]:
        assert "error" not in result, result
        answer = result["answer"]
        assert isinstance(answer, dict)
        rejected = bool(answer.get("batchItemFailures") or answer.get("rejected") or answer.get("failed"))
        rejected = rejected or answer.get("statusCode", 200) >= 400 or answer.get("status") == "rejected"
        invalid = "invalid" in result["event"] or "malformed" in result["event"]
        if name == "ingest_bill":  # no export is in the emulator: the manifest is not found, and the answer says so
            invalid = invalid or any("not found" in e for e in answer.get("errors", []))
        assert rejected == invalid, (result["event"], answer)


TRANSLATE = r"""
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

class NoManagedPolicies:
    def load(self):
        return {}

template = yaml_parse(open(sys.argv[1]).read())
for resource in template["Resources"].values():  # what `sam package` puts there
    key = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}.get(resource["Type"])
    if key:
        resource["Properties"][key] = "s3://artifacts/code.zip"
print(json.dumps(transform(template, {}, NoManagedPolicies())["Resources"]))
"""


def test_a_new_layer_version_triggers_the_migration() -> None:
    # Given the template as CloudFormation receives it (SAM renames the layer per content hash)
    python = install_tool(".venv/sam/bin/sam").with_name("python")
    env = {"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    done = subprocess.run(
        [str(python), "-c", TRANSLATE, str(TEMPLATE)], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    resources = json.loads(done.stdout)
    [layer] = [name for name, r in resources.items() if r["Type"] == "AWS::Lambda::LayerVersion"]
    # Then SchemaMigration names that layer version: new code, new properties, an Update that migrates
    assert resources["SchemaMigration"]["Properties"]["Layer"] == {"Ref": layer}
    assert {"Ref": layer} in resources["MigrateFunction"]["Properties"]["Layers"]
