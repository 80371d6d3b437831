"""Events for the intake API, built from the sample events in events/intake/ (the files sam local uses)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

Invoke = Callable[[dict[str, Any]], dict[str, Any]]
EVENTS = Path(__file__).resolve().parents[3] / "events" / "intake"


def load_event(name: str) -> dict[str, Any]:
    """A sample event from events/intake/ (the root conftest's loader, without importing a conftest by name)."""
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return event


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def request(
    method: str,
    path: str,
    *,
    body: str | bytes = "",
    headers: dict[str, str] | None = None,
    base64_body: bool = False,
    source_ip: str | None = None,
    query: str = "",
) -> dict[str, Any]:
    """An API Gateway v2 event like the sample ones, for another method, path, body, headers or client."""
    event = copy.deepcopy(load_event("get_form"))
    event["rawPath"] = path
    if source_ip:
        event["requestContext"]["http"]["sourceIp"] = source_ip
    if query:
        from urllib.parse import parse_qsl

        event["rawQueryString"] = query
        event["queryStringParameters"] = dict(parse_qsl(query))
    event["requestContext"]["http"]["method"] = method
    event["requestContext"]["http"]["path"] = path
    event["headers"] = {**event["headers"], **{k.lower(): v for k, v in (headers or {}).items()}}
    raw = body.encode() if isinstance(body, str) else body
    if raw:
        event["body"] = base64.b64encode(raw).decode() if base64_body else raw.decode()
        event["isBase64Encoded"] = base64_body
    return event


def post_json(data: Any, accept: str = "application/json", source_ip: str | None = None) -> dict[str, Any]:
    return request(
        "POST",
        "/intake",
        body=json.dumps(data),
        headers={"content-type": "application/json", "accept": accept},
        source_ip=source_ip,
    )


def post_form(fields: dict[str, str], *, base64_body: bool = False, source_ip: str | None = None) -> dict[str, Any]:
    return request(
        "POST",
        "/intake",
        body=urlencode(fields),
        base64_body=base64_body,
        headers={"content-type": "application/x-www-form-urlencoded", "accept": BROWSER},
        source_ip=source_ip,
    )


def get(path: str, accept: str = BROWSER) -> dict[str, Any]:
    return request("GET", path, headers={"accept": accept})


def sample_form() -> dict[str, str]:
    """The fields of the sample form-encoded event (one workload, the worked example)."""
    from urllib.parse import parse_qsl

    return dict(parse_qsl(load_event("post_form")["body"], keep_blank_values=True))
