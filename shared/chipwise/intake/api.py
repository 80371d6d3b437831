"""The intake HTTP API (API Gateway HTTP API + Lambda, or ``chipwise serve`` locally).

``GET /intake`` the form; ``POST /intake`` (form-encoded from the page, or JSON) -> 303 to the plan's permanent
link (the same answers again within a short window -> the same plan); ``GET /plans/{plan_id}`` the stored
plan (page or JSON); ``/plans/{plan_id}/confirm`` and ``/plans/{plan_id}/delete`` the signed links that confirm
the founder's address and delete the plan (a GET shows a button, the POST acts); ``GET /openapi.json``.

Every malformed request is a 4xx with a reason, checked before anything is parsed: the body's size, JSON
nesting depth, NUL and control characters, form field names the page never served. A JSON client gets 422 with
every invalid field's path; a browser gets the form again with each message beside its field. Submissions are
limited per client (the source IP from the request context, never a header) and per normalised address: 429.

``POST /intake`` reads its body itself rather than through a Powertools ``Body`` parameter: one route takes both
JSON and the page's form, and answers a browser with the form rather than a 422 document. Its request schema is
added to the generated OpenAPI document by hand; the other routes use Powertools' validation as they are.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
from chipwise.errors import InvalidInput, NotFound, StoreUnavailable
from chipwise.intake import guard, links, service, views
from chipwise.observability import logger
from chipwise.plan.document import PlanDocument
from chipwise.plan.intake import (
    HONEYPOT_FIELD,
    MAX_BODY_BYTES,
    FormError,
    IntakeRequest,
    api_error_detail,
    field_errors,
    form_to_raw,
    honeypot_filled,
)

HTML = "text/html; charset=utf-8"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
PLAN_ID_PATTERN = r"^[A-Za-z0-9_-]{32,64}$"
_MAX_FORM_FIELDS = 400
AUTOMATED = "Your submission looked automated, so it was not sent. Please check the form and submit it again."

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


@_handles(service.RateLimited)
def _rate_limited(exc: service.RateLimited) -> Response[str]:
    retry = str(exc.retry_after_seconds)
    if wants_json():
        return json_response(429, {"statusCode": 429, "message": str(exc)}, **{"Retry-After": retry})
    home = _path("/intake")
    return html_response(
        429,
        lambda nonce: views.message_page("Too many requests", str(exc), home=home, nonce=nonce),
        **{"Retry-After": retry},
    )


@_handles(InvalidInput)
def _unplannable(exc: InvalidInput) -> Response[str]:
    if wants_json():
        detail = [{"loc": ["body"], "type": "unplannable", "msg": str(exc)}]
        return json_response(422, {"statusCode": 422, "detail": detail})
    return _problem(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc))


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


class _Malformed(Exception):
    """A body that cannot be read at all (bad base64): a 400 with this reason."""


class _TooLarge(Exception):
    """A body over MAX_BODY_BYTES, seen before it is decoded: a 413."""


def _read_body() -> bytes:
    event = app.current_event
    raw = event.body or ""
    if len(raw) > MAX_BODY_BYTES * 4 // 3 + 4:
        raise _TooLarge
    if event.is_base64_encoded:
        try:
            return base64.b64decode(raw, validate=True)
        except ValueError as exc:
            raise _Malformed("the body is not valid base64") from exc
    return raw.encode("utf-8", errors="surrogatepass")


def _too_large() -> Response[str]:
    return _problem(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"The submission is larger than {MAX_BODY_BYTES} bytes.")


def _form_fields(body: bytes) -> dict[str, list[str]]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormError("the form is not UTF-8") from exc
    fields = parse_qs(text, keep_blank_values=True, max_num_fields=_MAX_FORM_FIELDS, errors="strict")
    for name, values in fields.items():
        for text_value in (name, *values):
            reason = guard.bad_character(text_value)
            if reason is not None:
                raise FormError(f"a field holds {reason}")
    return fields


def _unreadable(reason: str, loc: list[Any] | None = None) -> RequestValidationError:
    return RequestValidationError([{"loc": tuple(loc or ["body"]), "type": "json_invalid", "msg": reason}])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _json_body(body: bytes) -> Any:
    if guard.json_too_deep(body):
        raise _unreadable(f"The JSON nests deeper than {guard.MAX_JSON_DEPTH} levels; an intake needs 3.")
    try:
        parsed = json.loads(body or b"null", parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _unreadable(
            f"Invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", ["body", exc.pos]
        ) from exc
    except UnicodeDecodeError as exc:
        raise _unreadable("The body is not UTF-8 text.", ["body", exc.start]) from exc
    except (ValueError, RecursionError) as exc:  # NaN/Infinity, integers too long to convert
        raise _unreadable(f"Invalid JSON: {str(exc)[:120]}") from exc
    bad = guard.bad_characters(parsed)
    if bad:
        raise RequestValidationError(
            [
                {"loc": ("body", *path), "type": "bad_character", "msg": f"This field holds {reason}; remove it."}
                for path, reason in bad
            ]
        )
    return parsed


def _form_again(status: int, raw: Mapping[str, Any], errors: Mapping[str, str], message: str | None) -> Response[str]:
    values = views.flat_values(raw)
    action = _path("/intake")
    return html_response(
        status,
        lambda nonce: views.form_page(values=values, errors=errors, message=message, action=action, nonce=nonce),
    )


def _client() -> str | None:
    """The caller's address as API Gateway saw it (the TCP peer; X-Forwarded-For is never trusted)."""
    http = app.current_event.request_context.http
    return http.source_ip or None


def _see_plan(submitted: service.Submitted) -> Response[str]:
    """303 to the plan's permanent link: a reload of the plan page is a GET, never a second submission."""
    location = _path(f"/plans/{submitted.plan.plan_id}")
    body = ""
    if wants_json():
        body = json.dumps({"plan_id": submitted.plan.plan_id, "location": location, "created": submitted.created})
    return Response(
        status_code=303,
        content_type=content_types.APPLICATION_JSON if body else HTML,
        body=body,
        headers={**_security_headers(), "Location": location},
    )


def _submit(raw: Any, *, from_form: bool) -> Response[str]:
    if not from_form and isinstance(raw, dict) and str(raw.get(HONEYPOT_FIELD) or "").strip():
        logger().warning("intake honeypot filled (JSON): not stored, not sent")
        return _problem(HTTPStatus.BAD_REQUEST, AUTOMATED)
    try:
        intake = IntakeRequest.model_validate(raw)
    except ValidationError as exc:
        logger().info("intake rejected", fields=sorted(field_errors(exc)))
        if from_form and not wants_json():
            return _form_again(422, raw, field_errors(exc), None)
        raise RequestValidationError(api_error_detail(exc)) from None
    try:
        submitted = service.submit_intake(intake, client=_client())
    except service.RateLimited as exc:
        if from_form and not wants_json():
            return _form_again(429, raw, {}, str(exc))
        raise
    logger().info(
        "plan made" if submitted.created else "same answers again: the plan already made",
        workloads=len(submitted.plan.workloads),
    )
    return _see_plan(submitted)


@app.post(
    "/intake",
    summary="Submit the intake; get the credits-and-migration plan's address",
    description=(
        "Accepts the intake as JSON (schema IntakeRequest) or form-encoded from the page, with dotted field names "
        "(company.name, workloads.0.stage). Answers 303 to the plan's permanent link (GET it for the plan; JSON "
        "clients also get {plan_id, location, created}). The same answers from the same client within a short "
        "window answer with the same plan. Invalid input: 422 with every field's path (JSON) or the form again "
        "with messages (HTML); too many submissions from one client or for one address: 429."
    ),
    status_code=303,
    responses={
        303: {"description": "The plan is made (or was already); Location is its address."},
        400: {"description": "Malformed form (a field the page never served, a control character)."},
        413: {"description": f"Body larger than {MAX_BODY_BYTES} bytes."},
        415: {"description": "Neither JSON nor a form."},
        422: {"description": "Invalid fields, each named by its path, or unreadable JSON."},
        429: {"description": "Too many submissions from this client or for this address; see Retry-After."},
    },
    tags=["intake"],
)
def post_intake() -> Response[str]:
    try:
        body = _read_body()
    except _TooLarge:
        return _too_large()
    except _Malformed as exc:
        return _problem(HTTPStatus.BAD_REQUEST, f"The request could not be read: {exc}.")
    if len(body) > MAX_BODY_BYTES:
        return _too_large()
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
        logger().info("malformed intake form", reason=str(exc)[:200])
        return _problem(
            HTTPStatus.BAD_REQUEST,
            f"This form could not be read ({str(exc)[:200]}); please reload the page and try again.",
        )
    if honeypot_filled(fields):
        logger().warning("intake honeypot filled: not stored, not sent")
        return _form_again(400, raw, {}, AUTOMATED)
    return _submit(raw, from_form=True)


PlanId = Annotated[str, Path(description="The unguessable id from the plan's link.", pattern=PLAN_ID_PATTERN)]


@app.get(
    "/plans/<plan_id>",
    summary="A stored plan",
    responses={
        200: {
            "description": "The plan: JSON for Accept: application/json, otherwise an HTML page.",
            "content": {"application/json": {"model": PlanDocument}, "text/html": {"schema": {"type": "string"}}},
        },
        404: {"description": "No plan has this id (or it has expired or been deleted)."},
    },
    tags=["plans"],
)
def get_plan(plan_id: PlanId) -> Response[str]:
    view = service.load_plan(plan_id)
    if wants_json():
        return json_response(200, view.plan.model_dump(mode="json"))
    link, home = _path(f"/plans/{plan_id}"), _path("/intake")
    token = view.delete_token
    return html_response(
        200,
        lambda nonce: views.plan_page(
            view.plan,
            permalink=link,
            home=home,
            nonce=nonce,
            email=view.email,
            delete_action=_path(f"/plans/{plan_id}/delete") if token else None,
            delete_fields={"expires": str(token.expires), "signature": token.signature} if token else None,
            expires_at=view.expires_at,
        ),
    )


def _link_fields() -> tuple[str, str]:
    """(expires, signature) of a signed link: from the query string (GET) or the button's form (POST)."""
    event = app.current_event
    if event.request_context.http.method.upper() == "POST":
        try:
            fields = _form_fields(_read_body()[:4096])
        except (FormError, ValueError, _TooLarge, _Malformed):
            fields = {}
        expires, signature = fields.get("expires", [""])[-1], fields.get("signature", [""])[-1]
    else:
        expires = event.get_query_string_value("expires", "") or ""
        signature = event.get_query_string_value("signature", "") or ""
    if len(expires) > 16 or len(signature) > 64:
        raise NotFound("This link has expired or is not valid. The plan's own page has a fresh one.")
    return expires, signature


_LINK_RESPONSES: dict[int, Any] = {
    200: {"description": "A page with a button (GET) or the outcome (POST).", "content": {"text/html": {}}},
    404: {"description": "The link is expired, tampered with, or its plan is gone."},
}


@dataclass(frozen=True)
class _LinkPage:
    """What a signed link's "are you sure?" page says, and the OpenAPI summary of its route."""

    summary: str
    title: str
    message: str
    button: str


_LINK_PAGES: dict[links.Purpose, _LinkPage] = {
    "confirm": _LinkPage(
        summary="Confirm the founder's address",
        title="Confirm your email address",
        message="Press the button to confirm this address; we then email you the plan (once).",
        button="Confirm and email me the plan",
    ),
    "delete": _LinkPage(
        summary="Delete the plan and its answers",
        title="Delete this plan?",
        message="This deletes the plan, your answers and your contact details for good; its link stops working.",
        button="Delete the plan and my answers",
    ),
}


def _link_route(purpose: links.Purpose) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The route of a signed link: GET shows the page asking "are you sure?", POST acts."""
    summary = _LINK_PAGES[purpose].summary
    path = f"/plans/<plan_id>/{purpose}"
    return app.route(path, method=["GET", "POST"], summary=summary, responses=_LINK_RESPONSES, tags=["plans"])


def _signed_link(
    plan_id: str, purpose: links.Purpose, act: Callable[[str, str, str], tuple[str, str]]
) -> Response[str]:
    """A signed link's two steps: on GET the page asking "are you sure?" (its link checked first), whose button
    POSTs the same fields back; on POST ``act(plan_id, expires, signature)``, its (title, message) shown."""
    expires, signature = _link_fields()
    home = _path("/intake")
    if app.current_event.request_context.http.method.upper() == "POST":
        title, message = act(plan_id, expires, signature)
        return html_response(200, lambda nonce: views.message_page(title, message, home=home, nonce=nonce))
    service.check_link(plan_id, purpose, expires, signature)
    page = _LINK_PAGES[purpose]
    return html_response(
        200,
        lambda nonce: views.confirm_page(
            title=page.title,
            message=page.message,
            action=_path(f"/plans/{plan_id}/{purpose}"),
            fields={"expires": expires, "signature": signature},
            button=page.button,
            home=home,
            nonce=nonce,
        ),
    )


def _confirmed(plan_id: str, expires: str, signature: str) -> tuple[str, str]:
    if service.confirm_address(plan_id, expires, signature):
        return "Address confirmed", "Thank you: your address is confirmed and the plan is on its way."
    return "Address confirmed", "This address was already confirmed for this plan; the plan was emailed then."


def _deleted(plan_id: str, expires: str, signature: str) -> tuple[str, str]:
    service.delete_plan(plan_id, expires, signature)
    return "Deleted", "The plan, your answers and your contact details are deleted."


@_link_route("confirm")
def confirm(plan_id: PlanId) -> Response[str]:
    return _signed_link(plan_id, "confirm", _confirmed)


@_link_route("delete")
def delete(plan_id: PlanId) -> Response[str]:
    return _signed_link(plan_id, "delete", _deleted)


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
