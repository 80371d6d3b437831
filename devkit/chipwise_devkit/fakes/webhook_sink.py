"""A local stand-in for a Slack incoming webhook, for ``chipwise demo`` and the tests (never production).

It listens on 127.0.0.1 only, records every JSON body posted to it, and answers with scripted responses
(for example one HTTP 429 with a Retry-After header, then 200 "ok") so retry handling can be exercised.
It also checks what Slack would refuse (no ``text``, more than 50 blocks, a section over 3,000 characters)
and answers those with HTTP 400 ``invalid_blocks`` like Slack does.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from chipwise.notify.outbox import SLACK_MAX_BLOCKS, SLACK_MAX_SECTION_TEXT


@dataclass(frozen=True)
class Reply:
    """A scripted answer: status, body and headers (``Retry-After`` for 429)."""

    status: int = 200
    body: str = "ok"
    headers: dict[str, str] = field(default_factory=dict)


def slack_problems(body: Any) -> list[str]:
    """What Slack would reject in a webhook body (empty when it is acceptable)."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    problems = []
    if not isinstance(body.get("text"), str) or not body["text"]:
        problems.append("missing text fallback")
    blocks = body.get("blocks", [])
    if not isinstance(blocks, list):
        return [*problems, "blocks is not a list"]
    if len(blocks) > SLACK_MAX_BLOCKS:
        problems.append(f"{len(blocks)} blocks (limit {SLACK_MAX_BLOCKS})")
    for index, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "section":
            continue
        text = block.get("text")
        if isinstance(text, dict) and len(str(text.get("text", ""))) > SLACK_MAX_SECTION_TEXT:
            problems.append(f"block {index}: section text over {SLACK_MAX_SECTION_TEXT} characters")
    return problems


class WebhookSink:
    """``with WebhookSink() as sink: ... sink.url ... sink.received``."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        self.rejected: list[tuple[Any, list[str]]] = []
        self.requests = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the webhook sink is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/services/T000/B000/demo"

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies`` in order (then 200 "ok" again)."""
        with self._lock:
            self._script.extend(replies)

    def _answer(self, raw: bytes) -> Reply:
        with self._lock:
            self.requests += 1
            if self._script:
                return self._script.popleft()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return Reply(400, "invalid_payload")
        problems = slack_problems(body)
        with self._lock:
            if problems:
                self.rejected.append((body, problems))
                return Reply(400, "invalid_blocks")
            self.received.append(body)
        return Reply()

    def start(self) -> WebhookSink:
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                reply = sink._answer(self.rfile.read(length))
                data = reply.body.encode()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server = self._server
        self._thread = threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.05), name="webhook-sink", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> WebhookSink:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
