"""One way in (issue 22): every Lambda handler parses its event with a Powertools parser model at the edge, makes
one call into ``chipwise.pipeline`` and answers; it reaches neither the feature rooms (``notify``, ``remediate``,
``report``, ``benchmarks``, ``drafts``), ``intake`` nor ``store``, and stays short. The sample events in events/
parse with the handler's own model; a malformed event is rejected with a reason that names where it is wrong,
never what it carries."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch import BatchProcessor
from pydantic import BaseModel

from chipwise.edges import parse_event
from chipwise.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = sorted(p.parent.name for p in (ROOT / "functions").glob("*/app.py"))
EVENTS = ROOT / "events"
MAX_LINES = 40
FORBIDDEN = (
    "chipwise.benchmarks",
    "chipwise.drafts",
    "chipwise.notify",
    "chipwise.remediate",
    "chipwise.report",
    "chipwise.intake",
    "chipwise.store",
)
# Handlers whose malformed event fails the invocation (Lambda retries it, then the dead-letter queue keeps it)
# instead of being answered "rejected": an S3 event that cannot be read, a custom resource that cannot be answered.
RAISES = {"ingest_neuron", "migrate"}
# The events/ samples that are malformed on purpose (every other sample parses).
MALFORMED = {"benchmark_dispatch/malformed", "benchmark_result/malformed", "notify/scan_completed_malformed"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"chipwise_edge_{name}", ROOT / "functions" / name / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _model(module: ModuleType) -> type[BaseModel]:
    """The parser model the handler's edge parses with: its ``parsed_event`` model, or its batch processor's."""
    processor = getattr(module, "processor", None)
    model = processor.model if isinstance(processor, BatchProcessor) else None
    handler: Any = module.handler
    while model is None and handler is not None:
        model = getattr(handler, "event_model", None)
        handler = getattr(handler, "__wrapped__", None)
    assert isinstance(model, type) and issubclass(model, BaseModel), f"{module.__name__} parses with no model"
    return model


def _samples(name: str) -> list[Path]:
    return sorted((EVENTS / name).glob("*.json"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_there_are_ten_handlers_each_with_sample_events() -> None:
    assert FUNCTIONS == [
        "benchmark_dispatch",
        "benchmark_result",
        "ingest_bill",
        "ingest_neuron",
        "intake",
        "migrate",
        "notify",
        "scan_account",
        "scan_dispatch",
        "slack_actions",
    ]
    assert all(_samples(name) for name in FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_handler_is_short_and_goes_through_the_pipeline_only(name: str) -> None:
    path = ROOT / "functions" / name / "app.py"
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES
    imports = _imports(path)
    assert [i for i in imports if i.startswith(FORBIDDEN)] == []
    pipeline_modules = {i for i in imports if i.startswith("chipwise.pipeline.") and i.count(".") == 2}
    assert len(pipeline_modules) == 1, f"{name} calls into {pipeline_modules or 'no pipeline module'}"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_handler_parses_with_a_powertools_parser_model(name: str) -> None:
    model = _model(_load(name))
    assert model.__module__ == "chipwise.models.events" or model.__module__.startswith(
        "aws_lambda_powertools.utilities.parser"
    )


@pytest.mark.parametrize(
    ("name", "sample"),
    [(n, p.stem) for n in FUNCTIONS for p in _samples(n) if f"{n}/{p.stem}" not in MALFORMED and n != "scan_account"],
)
def test_each_sample_event_parses_with_its_handlers_model(name: str, sample: str) -> None:
    event = json.loads((EVENTS / name / f"{sample}.json").read_text(encoding="utf-8"))
    parsed = parse_event(event, _model(_load(name)), "the sample")
    assert isinstance(parsed, BaseModel)


def test_each_scan_message_parses_alone_and_the_malformed_ones_fail() -> None:
    model = _model(_load("scan_account"))
    for sample, expected in [
        ("home_account", [True]),
        ("member_accounts", [True, True, True]),
        ("malformed_records", [True, False, False]),
    ]:
        records = json.loads((EVENTS / "scan_account" / f"{sample}.json").read_text(encoding="utf-8"))["Records"]
        outcomes = []
        for record in records:
            try:
                parse_event(record, model, "a scan request")
                outcomes.append(True)
            except InvalidInput as exc:
                assert str(exc).startswith("not a scan request: body")
                outcomes.append(False)
        assert outcomes == expected, sample


@pytest.mark.parametrize("sample", sorted(MALFORMED))
def test_a_malformed_sample_is_rejected_with_where_it_is_wrong(sample: str, lambda_context: Any) -> None:
    name = sample.split("/")[0]
    event = json.loads((EVENTS / f"{sample}.json").read_text(encoding="utf-8"))
    answer = _load(name).handler(event, lambda_context)
    assert answer["status"] == "rejected"
    assert answer["reason"].startswith("not a ") and "detail." in answer["reason"]


SECRET = "SENTINEL-SECRET-4711"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_an_event_of_another_shape_is_rejected_without_its_values(name: str, lambda_context: Any) -> None:
    # Given an event no handler takes, carrying a secret-looking value
    event = {"Records": [{"unexpected": SECRET}], "detail-type": SECRET, "chipwise_job": SECRET}
    handler = _load(name).handler
    if name == "scan_account":  # a batch: the record fails alone (partial batch response), not the invocation
        event = {"Records": [{"messageId": "m-1", "body": json.dumps({"account_id": SECRET})}]}
        assert handler(event, lambda_context) == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}
        return
    if name in RAISES:
        with pytest.raises(InvalidInput) as raised:
            handler(event, lambda_context)
        reason = str(raised.value)
    else:
        answer = handler(event, lambda_context)
        assert answer["status"] == "rejected"
        reason = answer["reason"]
    # Then the reason says it is not the expected shape, and where, never the value
    assert reason.startswith("not ") and ": " in reason
    assert SECRET not in reason
