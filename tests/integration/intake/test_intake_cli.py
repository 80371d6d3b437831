"""``chipwise plan`` offline and ``chipwise serve``'s adapter over real local HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from plan_factories import intake_dict

from chipwise.cli import main
from chipwise.cli.serve import address, make_server, to_event
from chipwise.store import ensure_schema

SAMPLE = Path(__file__).resolve().parents[3] / "devkit" / "chipwise_devkit" / "demo" / "intake.json"


@pytest.fixture
def intake_file(tmp_path: Path) -> Path:
    path = tmp_path / "intake.json"
    path.write_text(json.dumps(intake_dict()))
    return path


def test_plan_as_json_is_the_plan_document(intake_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--input", str(intake_file), "--format", "json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["workloads"][0]["recommended_instance_type"] == "inf2.xlarge"
    assert document["total_monthly_savings_usd"] == "2745.82"
    assert "$2,745.82 a month to save" in captured.err


@pytest.mark.parametrize("fmt, marker", [("md", "# Credits-and-migration plan: Acme AI"), ("html", "<!doctype html>")])
def test_plan_as_markdown_or_html(intake_file: Path, capsys: pytest.CaptureFixture[str], fmt: str, marker: str) -> None:
    assert main(["plan", "-i", str(intake_file), "-f", fmt]) == 0
    assert marker in capsys.readouterr().out


def test_plan_writes_a_file_and_reads_the_shipped_sample(tmp_path: Path) -> None:
    out = tmp_path / "plan.md"
    assert main(["plan", "-i", str(SAMPLE), "-o", str(out)]) == 0
    text = out.read_text()
    assert "Lumen Labs" in text and "AWS Trainium" in text and "Amazon Bedrock" in text and "Stay on GPU" in text


def test_an_invalid_intake_file_is_one_line_naming_the_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = intake_dict(country="USA")
    bad["contact"]["email"] = "nope"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert main(["plan", "-i", str(path)]) == 1
    error = capsys.readouterr().err
    assert "company.country" in error and "contact.email" in error
    path.write_text("{oops")
    assert main(["plan", "-i", str(path)]) == 1
    assert "not JSON" in capsys.readouterr().err


def test_the_adapter_builds_api_gateway_v2_events() -> None:
    event = to_event(
        method="POST",
        target="/intake?a=1&a=2",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": "x=1; y=2"},
        body=b"company.name=Acme",
        source_ip="127.0.0.1",
        host="127.0.0.1:8000",
    )
    assert event["version"] == "2.0" and event["rawPath"] == "/intake"
    assert event["queryStringParameters"] == {"a": "1,2"}
    assert event["cookies"] == ["x=1", "y=2"]
    assert event["body"] == "company.name=Acme" and event["isBase64Encoded"] is False
    binary = to_event(
        method="POST",
        target="/",
        headers={"content-type": "image/png"},
        body=b"\x89PNG",
        source_ip="127.0.0.1",
        host="h",
    )
    assert binary["isBase64Encoded"] is True


@pytest.fixture
def server(use_db: str) -> Iterator[str]:
    """``chipwise serve``'s server on a free 127.0.0.1 port, in a thread."""
    ensure_schema(use_db)
    httpd = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = address(httpd)
    yield f"http://{host}:{port}"
    httpd.shutdown()
    httpd.server_close()


def test_serve_answers_local_http_through_the_same_resolver(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as client:
        form = client.get("/intake", headers={"accept": "text/html"})
        assert form.status_code == 200 and "Add another workload" in form.text
        created = client.post("/intake", json=intake_dict(), headers={"accept": "application/json"})
        assert created.status_code == 303
        plan_id = created.json()["plan_id"]
        assert client.get(created.headers["location"]).status_code == 200
        assert client.get(f"/plans/{plan_id}", headers={"accept": "application/json"}).json()["plan_id"] == plan_id
        assert client.get("/plans/nope").status_code == 404
        invalid = client.post("/intake", json={"company": {}}, headers={"accept": "application/json"})
        assert invalid.status_code == 422
