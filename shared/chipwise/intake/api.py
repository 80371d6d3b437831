"""The intake HTTP API (API Gateway HTTP API + Lambda, or ``chipwise serve`` locally).

``GET /intake`` the form; ``POST /intake`` (form-encoded from the page, or JSON) -> 201 with the plan, as a page
for browsers or JSON for ``Accept: application/json``; ``GET /plans/{plan_id}`` the stored plan;
``GET /openapi.json`` the OpenAPI document.

Bad input never loses what was typed: a JSON client gets 422 with every invalid field's path, a browser gets
the form again with each message beside its field and every value as typed.

``POST /intake`` reads its body itself rather than through a Powertools ``Body`` parameter: one route takes both
JSON and the page's form, and answers a browser with the form rather than a 422 document. Its request schema is
added to the generated OpenAPI document by hand; the other routes use Powertools' validation as they are.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable, Mapping
from functools import lru_cache
from http import HTTPStatus
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import ValidationError

import chipwise
from chipwise.errors import NotFound, StoreUnavailable
from chipwise.intake import service, views
from chipwise.observability import logger
from chipwise.plan.document import PlanDocument
from chipwise.plan.intake import (
    MAX_BODY_BYTES,
    FormError,
    IntakeRequest,
    api_error_detail,
    field_errors,
    form_to_raw,
    honeypot_filled,
)
from chipwise.settings import get_settings

HTML = "text/html; charset=utf-8"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
PLAN_ID_PATTERN = r"^[A-Za-z0-9_-]{32,64}$"
_MAX_FORM_FIELDS = 400

app = APIGatewayHttpResolver(enable_validation=True)

_Handler = TypeVar("_Handler", bound=Callable[..., Any])


def _handles(exc: type[Exception]) -> Callable[[_Handler], _Handler]:
    """``app.exception_handler``, typed (Powertools' decorator is not)."""
    register: Callable[[_Handler], _Handler] = app.exception_handler(exc)
    return register


# --- content negotiation and responses ---------------------------------------------------------------------


def _header(name: str) -> str:
    headers: Mapping[str, str] = app.current_event.headers or {}
    return next((value for key, value in headers.items() if key.lower() == name), "")


def _media_quality(accept: str, media: str) -> float:
    """The q value ``accept`` gives ``media`` (exact match only; wildcards count as no preference)."""
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        if fields[0].lower() == media:
            q = next((f[2:] for f in fields[1:] if f.startswith("q=")), "1")
            try:
                return float(q)
            except ValueError:
                return 0.0
    return -1.0


def wants_json() -> bool:
    """JSON when the client asks for it over HTML; with no preference, answer in the request's own kind."""
    accept = _header("accept")
    json_q, html_q = _media_quality(accept, "application/json"), _media_quality(accept, "text/html")
    if json_q >= 0 or html_q >= 0:
        return json_q >= html_q
    return not _header("content-type").lower().startswith(FORM_CONTENT_TYPE)


def _security_headers(nonce: str | None = None) -> dict[str, str]:
    sources = f"'nonce-{nonce}'" if nonce else "'none'"
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src {sources}; script-src {sources}; img-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",  # a plan's address is its key: never leak it to other sites
        "Cache-Control": "no-store",
    }


def html_response(status: int, render: Callable[[str], str], **headers: str) -> Response[str]:
    """A page rendered with a fresh CSP nonce (``render`` takes the nonce and returns the HTML)."""
    nonce = secrets.token_urlsafe(16)
    return Response(
        status_code=status, content_type=HTML, body=render(nonce), headers={**_security_headers(nonce), **headers}
    )


def json_response(status: int, body: Any, **headers: str) -> Response[str]:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(body, default=str),
        headers={**_security_headers(), **headers},
    )


def _problem(status: HTTPStatus, message: str) -> Response[str]:
    if wants_json():
        return json_response(status.value, {"statusCode": status.value, "message": message})
    home = _path("/intake")
    return html_response(status.value, lambda nonce: views.message_page(status.phrase, message, home=home, nonce=nonce))


def _prefix() -> str:
    """The stage's path prefix ("/prod"), or "" for the default stage and ``chipwise serve``."""
    stage = app.current_event.request_context.stage
    return f"/{stage}" if stage and stage != "$default" else ""


def _path(path: str) -> str:
    """An absolute path on this API (links in pages work under any stage)."""
    return f"{_prefix()}{path}"


def _base_url() -> str:
    """Where this API is reachable, for links in emails: the setting, or the address the request came to."""
    configured = get_settings().public_base_url
    if configured:
        return configured.rstrip("/")
    scheme = _header("x-forwarded-proto") or "https"
    return f"{scheme}://{app.current_event.request_context.domain_name}{_prefix()}"


# --- errors ------------------------------------------------------------------------------------------------


@_handles(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response[str]:
    """422 with every field path; a malformed plan id is simply a plan that does not exist (404)."""
    errors = list(exc.errors())
    if errors and all(error["loc"] and error["loc"][0] == "path" for error in errors):
        return _problem(HTTPStatus.NOT_FOUND, "No plan has this address.")
    detail = [
        {"loc": list(error["loc"]), "type": error["type"], "msg": error.get("msg", error["type"])} for error in errors
    ]
    return json_response(422, {"statusCode": 422, "detail": detail})


@_handles(NotFound)
def _not_found(exc: NotFound) -> Response[str]:
    return _problem(HTTPStatus.NOT_FOUND, str(exc))


@_handles(StoreUnavailable)
def _store_down(exc: StoreUnavailable) -> Response[str]:
    logger().error("store unavailable", reason=str(exc))
    return _problem(HTTPStatus.SERVICE_UNAVAILABLE, "Plans cannot be stored right now; please try again shortly.")


def _no_route(_exc: Exception) -> Response[str]:
    return _problem(HTTPStatus.NOT_FOUND, "There is nothing at this address.")


_handles(NotFoundError)(_no_route)


# --- routes ------------------------------------------------------------------------------------------------


@app.get("/", include_in_schema=False)
def root() -> Response[str]:
    return Response(status_code=303, headers={"Location": _path("/intake")}, body="")


@app.get(
    "/intake",
    summary="The intake form",
    responses={200: {"description": "The form page.", "content": {"text/html": {"schema": {"type": "string"}}}}},
    tags=["intake"],
)
def get_intake() -> Response[str]:
    action = _path("/intake")
    return html_response(200, lambda nonce: views.form_page(action=action, nonce=nonce))


def _read_body() -> bytes:
    event = app.current_event
    raw = event.body or ""
    if event.is_base64_encoded:
        return base64.b64decode(raw)
    return raw.encode("utf-8")


def _form_fields(body: bytes) -> dict[str, list[str]]:
    return parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True, max_num_fields=_MAX_FORM_FIELDS)


def _json_body(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        position = exc.pos if isinstance(exc, json.JSONDecodeError) else exc.start
        raise RequestValidationError(
            [{"loc": ("body", position), "type": "json_invalid", "msg": f"Invalid JSON: {exc}"}]
        ) from exc


def _form_again(status: int, raw: Mapping[str, Any], errors: Mapping[str, str], message: str | None) -> Response[str]:
    values = views.flat_values(raw)
    action = _path("/intake")
    return html_response(
        status,
        lambda nonce: views.form_page(values=values, errors=errors, message=message, action=action, nonce=nonce),
    )


def _plan_page(status: int, plan: PlanDocument, **headers: str) -> Response[str]:
    link, home = _path(f"/plans/{plan.plan_id}"), _path("/intake")
    return html_response(status, lambda nonce: views.plan_page(plan, permalink=link, home=home, nonce=nonce), **headers)


def _created(plan: PlanDocument) -> Response[str]:
    location = _path(f"/plans/{plan.plan_id}")
    if wants_json():
        return json_response(201, plan.model_dump(mode="json"), Location=location)
    return _plan_page(201, plan, Location=location)


def _submit(raw: Any, *, from_form: bool) -> Response[str]:
    try:
        intake = IntakeRequest.model_validate(raw)
    except ValidationError as exc:
        logger().info("intake rejected", fields=sorted(field_errors(exc)))
        if from_form and not wants_json():
            return _form_again(422, raw, field_errors(exc), None)
        raise RequestValidationError(api_error_detail(exc)) from exc
    plan = service.submit_intake(intake, base_url=_base_url())
    logger().info("plan created", workloads=len(plan.workloads), savings=str(plan.total_monthly_savings_usd))
    return _created(plan)


@app.post(
    "/intake",
    summary="Submit the intake; get the credits-and-migration plan",
    description=(
        "Accepts the intake as JSON (schema IntakeRequest) or form-encoded from the page, with dotted field names "
        "(company.name, workloads.0.stage). Answers 201 with the plan: JSON for Accept: application/json, otherwise "
        "an HTML page. Invalid input: 422 with every field's path (JSON) or the form again with messages (HTML)."
    ),
    status_code=201,
    responses={
        201: {
            "description": "The plan (stored, emailed); Location is its address.",
            "content": {"application/json": {"model": PlanDocument}, "text/html": {"schema": {"type": "string"}}},
        },
        400: {"description": "Malformed form."},
        413: {"description": f"Body larger than {MAX_BODY_BYTES} bytes."},
        415: {"description": "Neither JSON nor a form."},
        422: {"description": "Invalid fields, each named by its path."},
    },
    tags=["intake"],
)
def post_intake() -> Response[str]:
    body = _read_body()
    if len(body) > MAX_BODY_BYTES:
        return _problem(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"The submission is larger than {MAX_BODY_BYTES} bytes.")
    content_type = _header("content-type").lower()
    if content_type.startswith(FORM_CONTENT_TYPE):
        return _post_form(body)
    if not content_type or content_type.startswith("application/json"):
        return _submit(_json_body(body), from_form=False)
    return _problem(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Send the intake as JSON or as the form does.")


def _post_form(body: bytes) -> Response[str]:
    try:
        fields = _form_fields(body)
        raw = form_to_raw(fields)
    except (FormError, ValueError) as exc:
        logger().info("malformed intake form", reason=str(exc))
        return _problem(HTTPStatus.BAD_REQUEST, "This form could not be read; please reload the page and try again.")
    if honeypot_filled(fields):
        logger().warning("intake honeypot filled: not stored, not sent")
        message = "Your submission looked automated, so it was not sent. Please check the form and submit it again."
        return _form_again(400, raw, {}, message)
    return _submit(raw, from_form=True)


@app.get(
    "/plans/<plan_id>",
    summary="A stored plan",
    responses={
        200: {
            "description": "The plan: JSON for Accept: application/json, otherwise an HTML page.",
            "content": {"application/json": {"model": PlanDocument}, "text/html": {"schema": {"type": "string"}}},
        },
        404: {"description": "No plan has this id."},
    },
    tags=["plans"],
)
def get_plan(
    plan_id: Annotated[str, Path(description="The unguessable id from the plan's link.", pattern=PLAN_ID_PATTERN)],
) -> Response[str]:
    plan = service.load_plan(plan_id)
    if wants_json():
        return json_response(200, plan.model_dump(mode="json"))
    return _plan_page(200, plan)


# --- OpenAPI -----------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    """Powertools' generated document, plus the request body of ``POST /intake`` (read by hand, so added here)."""
    document: dict[str, Any] = app.get_openapi_schema(
        title="Chipwise intake API",
        version=chipwise.__version__,
        description="A startup's answers become a credits-and-migration plan for AWS AI accelerators.",
    ).model_dump(mode="json", by_alias=True, exclude_none=True)
    schema = IntakeRequest.model_json_schema(ref_template="#/components/schemas/{model}")
    components = document.setdefault("components", {}).setdefault("schemas", {})
    components.update(schema.pop("$defs", {}))
    components["IntakeRequest"] = schema
    document["paths"]["/intake"]["post"]["requestBody"] = {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/IntakeRequest"}},
            FORM_CONTENT_TYPE: {
                "schema": {
                    "type": "object",
                    "description": "The same fields with dotted names (company.name, workloads.0.model_family).",
                    "additionalProperties": {"type": "string"},
                }
            },
        },
    }
    return document


@app.get("/openapi.json", include_in_schema=False)
def get_openapi() -> Response[str]:
    return json_response(200, openapi_document())
