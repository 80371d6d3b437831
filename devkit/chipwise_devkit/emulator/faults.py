"""Error injection for moto: the next N calls of a service operation fail with a chosen AWS error code.

``install()`` wraps ``moto.core.responses.BaseResponse.call_action``. The error is serialized by moto's own
serializer for the service's protocol (query, json, rest-json, ec2, smithy-rpc-v2-cbor), so boto3 parses it
like a real one. The exception class lives here, outside ``moto.*``: moto derives a service model from an
exception's module and would otherwise look up a service called 'core'. S3 has its own dispatch and is not
covered.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from moto.core import errors as moto_errors
from moto.core.exceptions import ServiceException
from moto.core.responses import ActionResult, BaseResponse
from moto.core.utils import get_service_model

_installed = False
_install_lock = threading.Lock()
_original_call_action: Callable[[BaseResponse], Any] | None = None


class InjectedFault(ServiceException):
    """An error chosen by a test; serialized with the calling service's model."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)


@dataclass
class _Fault:
    code: str
    message: str
    status: int
    remaining: int


def _norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


class FaultRegistry:
    """Pending faults per (service, operation) and how many were served; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], list[_Fault]] = {}
        self._hits: Counter[str] = Counter()

    def inject(self, service: str, operation: str, code: str, message: str, times: int, status: int) -> None:
        if times < 1:
            raise ValueError("times must be at least 1")
        operations = _operation_names(service)
        if not operations:
            raise ValueError(f"unknown service {service!r} (use the boto3 client name, e.g. 'cloudwatch')")
        if _norm(operation) not in operations:
            raise ValueError(f"{service} has no operation {operation!r}")
        if code not in moto_errors.COMMON_ERROR_CODES:  # keeps moto from warning about codes outside the model
            moto_errors.COMMON_ERROR_CODES.append(code)
        with self._lock:
            key = (_norm(service), _norm(operation))
            self._pending.setdefault(key, []).append(_Fault(code, message, status, times))

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
            self._hits.clear()

    def hits(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._hits.items()))

    def take(self, service: str, operation: str) -> _Fault | None:
        """Consume one pending fault for this call, if any."""
        if not self._pending:  # unlocked fast path: the common case is no faults at all
            return None
        key = (_norm(service), _norm(operation))
        with self._lock:
            queue = self._pending.get(key)
            if not queue:
                return None
            fault = queue[0]
            fault.remaining -= 1
            if fault.remaining <= 0:
                queue.pop(0)
                if not queue:
                    del self._pending[key]
            self._hits[f"{service}.{_canonical_operation(service, operation)}"] += 1
            return fault


REGISTRY = FaultRegistry()


@lru_cache(maxsize=64)
def _operation_names(service: str) -> dict[str, str]:
    try:
        names = get_service_model(service).operation_names
    except Exception:  # not a botocore service name
        return {}
    return {_norm(name): name for name in names}


def _canonical_operation(service: str, action: str) -> str:
    """The API operation name (``DescribeJobs``) for moto's action spelling (``describejobs`` for some)."""
    return _operation_names(service).get(_norm(action), action)


def _serve(response: BaseResponse, fault: _Fault) -> tuple[int, dict[str, str], Any]:
    _status, headers, body = response.serialized(ActionResult(InjectedFault(fault.code, fault.message)))
    headers = dict(headers)
    headers["status"] = str(fault.status)
    headers, body = response._enrich_response(headers, body)
    return fault.status, headers, body


def _call_action(self: BaseResponse) -> Any:
    if REGISTRY._pending:
        try:
            service = self.boto3_service_name
            action = self._get_action()
        except Exception:  # an unparseable request: let moto answer it
            action = None
        if action:
            fault = REGISTRY.take(service, action)
            if fault is not None:
                return _serve(self, fault)
    assert _original_call_action is not None
    return _original_call_action(self)


def install() -> None:
    """Wrap ``BaseResponse.call_action`` (idempotent, process-wide)."""
    global _installed, _original_call_action
    with _install_lock:
        if _installed:
            return
        _original_call_action = BaseResponse.call_action
        BaseResponse.call_action = _call_action  # type: ignore[method-assign]
        _installed = True
