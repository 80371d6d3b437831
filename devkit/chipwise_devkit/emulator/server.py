"""The in-process AWS emulator: a moto server on 127.0.0.1 with Chipwise's patches, plus test helpers.

Code under test talks to it with plain boto3 through ``AWS_ENDPOINT_URL`` (see ``Emulator.env``), the same
code path as production. Helpers that seed or read state (metrics, sent mail) work in-process for speed.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from collections.abc import Iterable
from datetime import datetime
from email import message_from_string
from email.message import Message as EmailMessage
from types import TracebackType
from typing import Any, NamedTuple

DEFAULT_ACCOUNT_ID = "123456789012"
_BATCH_CONFIG: dict[str, Any] = {"batch": {"use_docker": False}}


class MetricPoint(NamedTuple):
    """One CloudWatch datapoint for ``Emulator.seed_metrics``."""

    namespace: str
    metric_name: str
    dimensions: dict[str, str]
    timestamp: datetime  # tz-aware UTC (naive is taken as UTC)
    value: float
    unit: str = "None"


class Emulator:
    """moto ThreadedMotoServer on 127.0.0.1, free port, with Chipwise's patches installed."""

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self._server: Any = None
        self._url = ""
        self._config: dict[str, Any] = dict(_BATCH_CONFIG)
        self._lock = threading.Lock()
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
        self._resets = 0

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def resets(self) -> int:
        """How many times ``reset`` has run (a fixture that seeds once can tell whether its seeding is still there)."""
        return self._resets

    @property
    def url(self) -> str:
        """The server's base URL, e.g. ``http://127.0.0.1:54321``."""
        if not self._url:
            raise RuntimeError("the emulator is not started")
        return self._url

    def start(self) -> Emulator:
        """Install the patches, start the server and switch Batch to its docker-less backend."""
        with self._lock:
            if self._server is not None:
                return self
            from moto.server import ThreadedMotoServer

            from chipwise_devkit.emulator import patches

            patches.install()
            werkzeug_log = logging.getLogger("werkzeug")
            if werkzeug_log.level == logging.NOTSET:  # one access-log line per request otherwise
                werkzeug_log.setLevel(logging.WARNING)
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=self._port, verbose=False)
            server.start()
            host, port = server.get_host_and_port()
            self._server = server
            self._url = f"http://{host}:{port}"
        self._apply_config()
        return self

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        with self._lock:
            server, self._server = self._server, None
            self._url = ""
        if server is not None:
            server.stop()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def env(self, region: str = "us-east-1") -> dict[str, str]:
        """Environment variables that point boto3 at the emulator (callers apply them to ``os.environ``)."""
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": region,
            "AWS_REGION": region,
        }

    def reset(self) -> None:
        """Empty every backend (CE queue and mail included), clear faults, re-apply the moto config."""
        self._post("/moto-api/reset", None)
        self._resets += 1
        from chipwise_devkit.emulator.faults import REGISTRY

        REGISTRY.clear()
        self._apply_config()

    def configure(self, config: dict[str, Any]) -> None:
        """POST ``/moto-api/config``, e.g. ``{"stepfunctions": {"execute_state_machine": True}}``; kept on reset."""
        for key, value in config.items():
            self._config[key] = value
        self._post("/moto-api/config", config)

    def _apply_config(self) -> None:
        self._post("/moto-api/config", self._config)

    def _post(self, path: str, payload: Any) -> bytes:
        data = b"" if payload is None else json.dumps(payload, default=str).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        with self._opener.open(request, timeout=30) as response:
            body: bytes = response.read()
            return body

    # --- seeding -----------------------------------------------------------------------------

    def inject_cost_and_usage(self, pages: list[dict[str, Any]], account_id: str = DEFAULT_ACCOUNT_ID) -> None:
        """Queue GetCostAndUsage responses: each distinct request body takes the next page (moto.md §1)."""
        self._post("/moto-api/static/ce/cost-and-usage-results", {"account_id": account_id, "results": pages})

    def inject_athena_results(
        self, results: list[dict[str, Any]], account_id: str = DEFAULT_ACCOUNT_ID, region: str = "us-east-1"
    ) -> None:
        """Queue GetQueryResults answers (``{"rows": [...], "column_info": [...]}``): each new query execution takes
        the next one (moto does not run queries)."""
        self._post(
            "/moto-api/static/athena/query-results", {"account_id": account_id, "region": region, "results": results}
        )

    def seed_metrics(
        self, points: Iterable[MetricPoint], account_id: str = DEFAULT_ACCOUNT_ID, region: str = "us-east-1"
    ) -> int:
        """Append datapoints straight into moto's CloudWatch backend (no HTTP); returns how many."""
        from moto.cloudwatch.models import Dimension, MetricDatum, cloudwatch_backends

        from chipwise_devkit.emulator.fast_cloudwatch import naive_utc

        self.url  # noqa: B018 - raises if not started
        shared: dict[tuple[tuple[str, str], ...], list[Any]] = {}  # one Dimension list per series, not per datum
        datums: list[Any] = []
        for p in points:
            key = tuple(p.dimensions.items())
            dimensions = shared.get(key)
            if dimensions is None:
                dimensions = shared[key] = [Dimension(k, v) for k, v in key]
            datum = MetricDatum(p.namespace, p.metric_name, float(p.value), [], naive_utc(p.timestamp), p.unit)
            datum.dimensions = dimensions
            datums.append(datum)
        cloudwatch_backends[account_id][region].metric_data.extend(datums)
        return len(datums)

    # --- faults ------------------------------------------------------------------------------

    def inject_fault(
        self,
        service: str,
        operation: str,
        code: str,
        message: str = "injected fault",
        times: int = 1,
        status: int = 400,
    ) -> None:
        """Make the next ``times`` calls of ``service.operation`` (boto3 names) fail with ``code``."""
        from chipwise_devkit.emulator.faults import REGISTRY

        REGISTRY.inject(service, operation, code, message, times, status)

    def clear_faults(self) -> None:
        """Drop pending faults and the hit counters."""
        from chipwise_devkit.emulator.faults import REGISTRY

        REGISTRY.clear()

    def fault_hits(self) -> dict[str, int]:
        """``"service.Operation"`` -> how many injected faults were served."""
        from chipwise_devkit.emulator.faults import REGISTRY

        return REGISTRY.hits()

    # --- reading state -----------------------------------------------------------------------

    def sent_emails(self) -> list[dict[str, Any]]:
        """SES v1/v2 sent messages from every account and region, oldest first per backend.

        Each is a dict: kind (simple/raw/template), account_id, region, source, destinations, subject, body
        (the HTML part when both were sent, as moto keeps it), raw_data for raw messages, template fields.
        """
        from moto.ses.models import BulkTemplateMessage, Message, RawMessage, TemplateMessage, ses_backends

        out: list[dict[str, Any]] = []
        for account_id, regional in list(ses_backends.items()):
            for region, backend in list(regional.items()):
                for msg in list(backend.sent_messages):
                    item: dict[str, Any] = {
                        "account_id": account_id,
                        "region": region,
                        "source": msg.source,
                        "destinations": msg.destinations,
                        "subject": None,
                        "body": None,
                    }
                    if isinstance(msg, Message):
                        item.update(kind="simple", id=msg.id, subject=msg.subject, body=msg.body)
                    elif isinstance(msg, RawMessage):
                        subject, body = _parse_raw(msg.raw_data)
                        item.update(kind="raw", id=msg.id, subject=subject, body=body, raw_data=msg.raw_data)
                    elif isinstance(msg, TemplateMessage | BulkTemplateMessage):
                        item.update(kind="template", template=msg.template, template_data=msg.template_data)
                    out.append(item)
        return out


def _parse_raw(raw: str) -> tuple[str | None, str | None]:
    """Subject and first HTML (else plain-text) body of a raw MIME message."""
    parsed: EmailMessage = message_from_string(raw)
    subject = parsed["Subject"]
    bodies: dict[str, str] = {}
    for part in parsed.walk():
        ctype = part.get_content_type()
        if ctype in ("text/html", "text/plain") and ctype not in bodies:
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                bodies[ctype] = payload.decode(part.get_content_charset() or "utf-8", errors="replace")
    return (str(subject) if subject is not None else None), bodies.get("text/html") or bodies.get("text/plain")
