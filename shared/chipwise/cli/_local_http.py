"""What ``chipwise serve`` runs: the intake API on http://127.0.0.1:8000, through the very resolver Lambda runs.

A small adapter turns each local HTTP request into an API Gateway HTTP API (payload v2) event, calls the
resolver, and writes its response back; nothing about the routes is duplicated here. The resolver keeps the
current event on itself, so requests are resolved one at a time (connections are still accepted in threads).
"""

from __future__ import annotations

import base64
import socketserver
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from chipwise.cli.common import err

API_GATEWAY_MAX_BODY = 10 * 1024 * 1024  # what API Gateway itself accepts; the API applies its own, lower limit
_TEXT_TYPES = ("text/", "application/json", "application/x-www-form-urlencoded", "application/xml")

Resolver = Callable[[dict[str, Any], Any], dict[str, Any]]


class LocalContext:
    """The few Lambda context attributes Powertools reads."""

    function_name = "chipwise-intake-local"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:chipwise-intake-local"

    def __init__(self) -> None:
        self.aws_request_id = str(uuid.uuid4())

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 30_000


def _is_text(content_type: str) -> bool:
    return not content_type or content_type.lower().startswith(_TEXT_TYPES)


def to_event(
    *, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str, host: str
) -> dict[str, Any]:
    """An API Gateway HTTP API (v2) event for one request, shaped like the real one."""
    url = urlsplit(target)
    lowered = {key.lower(): value for key, value in headers.items()}
    query: dict[str, str] = {}
    for key, value in parse_qsl(url.query, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value  # v2 joins repeated keys with commas
    text = _is_text(lowered.get("content-type", ""))
    now = datetime.now(UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": url.path or "/",
        "rawQueryString": url.query,
        "headers": lowered,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": host,
            "domainPrefix": host.split(".")[0],
            "http": {
                "method": method,
                "path": url.path or "/",
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": lowered.get("user-agent", ""),
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": not text,
    }
    if query:
        event["queryStringParameters"] = query
    if "cookie" in lowered:
        event["cookies"] = [c.strip() for c in lowered["cookie"].split(";") if c.strip()]
    if body:
        event["body"] = body.decode("utf-8", errors="replace") if text else base64.b64encode(body).decode()
    return event


def response_body(response: dict[str, Any]) -> bytes:
    body = response.get("body") or ""
    if response.get("isBase64Encoded"):
        return base64.b64decode(body)
    return str(body).encode("utf-8")


def _handler_class(resolve: Resolver, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class IntakeRequestHandler(BaseHTTPRequestHandler):
        server_version = "chipwise-serve"
        protocol_version = "HTTP/1.1"

        def _dispatch(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > API_GATEWAY_MAX_BODY:
                self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
                return
            body = self.rfile.read(length) if length else b""
            event = to_event(
                method=self.command,
                target=self.path,
                headers={k: ", ".join(self.headers.get_all(k) or []) for k in self.headers},
                body=body,
                source_ip=self.client_address[0],
                host=self.headers.get("Host") or "{}:{}".format(*address(self.server)),
            )
            event["headers"].setdefault("x-forwarded-proto", "http")
            with lock:
                response = resolve(event, LocalContext())
            self._write(response)

        def _write(self, response: dict[str, Any]) -> None:
            payload = response_body(response)
            self.send_response(int(response.get("statusCode", 200)))
            for key, value in (response.get("headers") or {}).items():
                if key.lower() not in ("content-length", "connection"):
                    self.send_header(key, str(value))
            for cookie in response.get("cookies") or []:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _dispatch

        def log_message(self, format: str, *args: Any) -> None:
            err.print(f"[dim]{self.address_string()} {format % args}[/]", highlight=False)

    return IntakeRequestHandler


def address(server: socketserver.BaseServer) -> tuple[str, int]:
    """(host, port) the server listens on (the port ``make_server`` picked when given 0)."""
    bound: Any = server.server_address  # typeshed allows str/bytes addresses; AF_INET ones are (host, port)
    return str(bound[0]), int(bound[1])


def make_server(host: str = "127.0.0.1", port: int = 8000, resolve: Resolver | None = None) -> ThreadingHTTPServer:
    """A local HTTP server over the intake resolver (port 0 picks a free port: read ``server_address``)."""
    server = ThreadingHTTPServer((host, port), _handler_class(resolve or intake_resolver(), threading.Lock()))
    server.daemon_threads = True
    return server


def intake_resolver() -> Resolver:
    """The intake API as the Lambda answers it: the request parsed with the HTTP API model, then the resolver."""
    from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

    from chipwise.pipeline.intake import resolve_request

    def resolve(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return resolve_request(APIGatewayProxyEventV2Model.model_validate(event), context)

    return resolve
