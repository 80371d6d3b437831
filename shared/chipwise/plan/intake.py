"""The intake: what a founder tells us (JSON body of ``POST /intake``, the form, ``chipwise plan --input``).

Three things live here, all without I/O beyond the cached catalog:

* the pydantic model (:class:`IntakeRequest`) with its limits, so every bad field is named by its path;
* :func:`form_to_raw`, which turns the flat, dotted form fields (``workloads.0.name``) into the same nested
  shape as the JSON body, keeping every typed string so an invalid form can be shown again unchanged;
* :func:`field_errors`, which turns a ``ValidationError`` into one human message per field path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    EmailStr,
    Field,
    HttpUrl,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from chipwise.catalog import CompanyStage, get_catalog, get_regions
from chipwise.models.common import is_account_id

MAX_BODY_BYTES = 64 * 1024  # a full form with the maximum number of workloads is under 8 KiB
MAX_WORKLOADS = 10
MAX_ACCOUNT_IDS = 20
HONEYPOT_FIELD = "nickname"  # hidden from people (CSS + aria-hidden); bots fill every field they find

WorkloadStage = Literal["training", "inference"]
Traffic = Literal["steady", "spiky"]

STAGE_LABELS: dict[str, str] = {
    "bootstrapped": "Bootstrapped / self-funded",
    "pre_seed": "Pre-seed",
    "seed": "Seed",
    "series_a": "Series A",
    "series_b": "Series B",
    "later": "Series C or later",
}

_UNPRICED = (
    "{name} has no on-demand price in {region} (Capacity Blocks only, or not sold there); pick the closest priced type."
)
_WEBSITE = TypeAdapter(HttpUrl)

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]


def _website(value: str) -> str:
    """A web address; "example.com" is taken to mean https://example.com (nothing typed is refused for that)."""
    text = value.strip()
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        text = f"https://{text}"
    try:
        url = _WEBSITE.validate_python(text)
    except ValidationError:
        raise PydanticCustomError("url", "Enter a web address such as https://example.com.") from None
    if url.scheme not in ("http", "https") or not url.host or "." not in url.host:
        raise PydanticCustomError("url", "Enter a web address such as https://example.com.")
    return str(url)


def _country(value: str) -> str:
    code = value.strip().upper()
    if not re.fullmatch(r"[A-Z]{2}", code):
        raise PydanticCustomError("country", "Use the two-letter country code (ISO 3166), for example US or DE.")
    return code


def _account_ids(value: object) -> object:
    """Account ids typed into one box: "1234…, 5678…" or one per line."""
    if isinstance(value, str):
        return [part for part in re.split(r"[\s,;]+", value) if part]
    return value


def _account_id(value: str) -> str:
    if not is_account_id(value):
        raise PydanticCustomError("account_id", "An AWS account id is 12 digits.")
    return value


def _region(value: str) -> str:
    """A region whose prices the catalog knows (a plan in a region it cannot price would be a guess)."""
    code = value.strip().lower()
    known = get_regions().get(code)
    if known is None or known.multiplier is None:
        raise PydanticCustomError(
            "region", "Prices for region {code} are not known; choose one of the listed regions.", {"code": code}
        )
    return code


def _instance_type(value: str) -> str:
    """A type the catalog knows (it prices the plan); "ml." SageMaker names are accepted as well."""
    catalog = get_catalog()
    name = value.strip().lower()
    found = catalog.get(name)
    if found is None:
        raise PydanticCustomError(
            "instance_type", "Unknown instance type {name}: use an EC2 name such as g5.xlarge.", {"name": name}
        )
    if not found.accelerated:
        raise PydanticCustomError(
            "instance_type", "{name} has no accelerator: give the GPU or Neuron type the model runs on.", {"name": name}
        )
    if catalog.price(name, catalog.region) is None:
        raise PydanticCustomError("unpriced_instance_type", _UNPRICED, {"name": name, "region": catalog.region})
    return name


Website = Annotated[str, StringConstraints(max_length=255), AfterValidator(_website)]
Country = Annotated[str, StringConstraints(max_length=8), AfterValidator(_country)]
AccountId = Annotated[str, StringConstraints(strip_whitespace=True), AfterValidator(_account_id)]
InstanceTypeName = Annotated[str, StringConstraints(max_length=40), AfterValidator(_instance_type)]
OrgId = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9_-]{3,64}$")]
Region = Annotated[str, StringConstraints(max_length=32), AfterValidator(_region)]


class _IntakeModel(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)


class CompanyIn(_IntakeModel):
    name: Name
    website: Website | None = None
    country: Country = "US"
    stage: CompanyStage = "seed"
    institutional_funding: bool = Field(False, description="Raised money from a VC, accelerator or angel group.")
    activate_provider_org_id: OrgId | None = Field(
        None, description="The Org ID an AWS Activate Provider (your VC or accelerator) gave you."
    )
    ai_first: bool = Field(True, description="The product is built on machine learning.")


def _nfkc(value: Any) -> Any:
    """One form of an address: a fullwidth or compatibility form ("ａｄａ@ｅｘａｍｐｌｅ.com") is the address it
    stands for (NFKC), so it is mailed and counted as that address."""
    return unicodedata.normalize("NFKC", value) if isinstance(value, str) else value


def _no_percent_routing(value: str) -> str:
    """``user%other.example@relay.example`` asks a mail server to relay to another host: never accepted."""
    if "%" in value.rpartition("@")[0]:
        raise ValueError("An address with % in it routes mail through another host; enter your own address.")
    return value


class ContactIn(_IntakeModel):
    name: Name
    email: Annotated[
        EmailStr,
        BeforeValidator(_nfkc),
        StringConstraints(max_length=254),
        AfterValidator(_no_percent_routing),
    ]


class AwsIn(_IntakeModel):
    monthly_spend_usd: Decimal | None = Field(None, ge=0, le=Decimal("100000000"), max_digits=15, decimal_places=2)
    account_ids: Annotated[list[AccountId], BeforeValidator(_account_ids)] = Field(
        default_factory=list, max_length=MAX_ACCOUNT_IDS
    )
    region: Region = "us-east-1"


class WorkloadIn(_IntakeModel):
    """One workload. Optional fields may be left out: the planner names every assumption it makes for them."""

    name: ShortText
    stage: WorkloadStage = "inference"
    model_family: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
    parameters_billion: Decimal | None = Field(None, gt=0, le=Decimal("10000"), max_digits=15, decimal_places=3)
    custom_cuda_kernels: bool = False
    traffic: Traffic = "steady"
    current_instance_type: InstanceTypeName | None = None
    instance_count: int | None = Field(None, ge=1, le=10000)
    hours_per_month: Decimal | None = Field(
        None, gt=0, le=Decimal("744"), max_digits=15, decimal_places=2, description="Default 730."
    )
    requests_per_day: Decimal | None = Field(None, ge=0, le=Decimal("1000000000000"), max_digits=15, decimal_places=2)
    current_throughput_per_instance: Decimal | None = Field(
        None,
        gt=0,
        le=Decimal("1000000"),
        max_digits=15,
        decimal_places=3,
        description="Requests a second one current instance sustains.",
    )
    latency_ms_target: int | None = Field(None, gt=0, le=600000)
    tokens_per_request: int | None = Field(None, ge=1, le=1000000, description="Input plus output tokens.")
    runs_per_month: Decimal | None = Field(
        None, gt=0, le=Decimal("1000"), max_digits=15, decimal_places=2, description="Training runs a month."
    )
    one_off: bool = Field(False, description="A single job that will not be repeated.")
    foundation_model_only: bool = Field(False, description="A standard foundation model would do.")
    serve_on_trainium: bool = Field(
        False, description="Keep one chip family for training and serving (for example reserved Trainium)."
    )
    runs_outside_aws: bool = Field(
        False, description="Runs on another cloud or on premises today (the instance type is the closest AWS one)."
    )


class IntakeRequest(_IntakeModel):
    """The JSON body of ``POST /intake`` and the file ``chipwise plan --input`` reads."""

    company: CompanyIn
    contact: ContactIn
    aws: AwsIn = Field(default_factory=AwsIn)
    workloads: list[WorkloadIn] = Field(min_length=1, max_length=MAX_WORKLOADS)
    partner_referral: bool = Field(
        False,
        description="Ask for an introduction to an AWS partner: only then do the answers go into a partner-referral "
        "draft, which our advisory team reviews before anything is shared.",
    )
    nickname: str = Field(
        "",
        max_length=200,
        exclude=True,
        description="Leave empty. A trap for bots (the form hides it from people): a submission that fills it is "
        "not stored and nothing is sent.",
    )

    @model_validator(mode="after")
    def _priced(self) -> IntakeRequest:
        """Each current instance type must have an on-demand price in the region, or nothing can be compared."""
        catalog = get_catalog()
        errors: list[InitErrorDetails] = [
            InitErrorDetails(
                type=PydanticCustomError(
                    "unpriced_instance_type",
                    _UNPRICED,
                    {"name": w.current_instance_type, "region": self.aws.region},
                ),
                loc=("workloads", index, "current_instance_type"),
                input=w.current_instance_type,
            )
            for index, w in enumerate(self.workloads)
            if w.current_instance_type and catalog.price(w.current_instance_type, self.aws.region) is None
        ]
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


# --- the HTML form -----------------------------------------------------------------------------------------

BOOLEAN_FIELDS: dict[str, tuple[str, ...]] = {
    "company": tuple(n for n, f in CompanyIn.model_fields.items() if f.annotation is bool),
    "workloads": tuple(n for n, f in WorkloadIn.model_fields.items() if f.annotation is bool),
}
# Fields that only mean something for one stage: the page shows them for that stage only, and a form post drops
# the other stage's (a hidden field's stale value must not change the plan).
SERVING_ONLY = (
    "requests_per_day",
    "current_throughput_per_instance",
    "latency_ms_target",
    "tokens_per_request",
    "traffic",
    "foundation_model_only",
    "serve_on_trainium",
)
TRAINING_ONLY = ("runs_per_month", "one_off")
TOP_LEVEL_FIELDS = ("partner_referral",)
_SECTIONS: dict[str, tuple[str, ...]] = {
    "company": tuple(CompanyIn.model_fields),
    "contact": tuple(ContactIn.model_fields),
    "aws": tuple(AwsIn.model_fields),
}
_INDEX_LIMIT = 1000  # form indices are renumbered; anything beyond this is not a form we served


class FormError(ValueError):
    """The form body itself is malformed (not a field problem): a field name we never served."""


def _form_path(name: str) -> tuple[str, ...]:
    """The intake path of a form field we serve ("workloads.0.name"); FormError for any other name."""
    parts = tuple(name.split("."))
    if len(parts) == 1 and parts[0] in TOP_LEVEL_FIELDS:
        return parts
    if len(parts) == 2 and parts[1] in _SECTIONS.get(parts[0], ()):
        return parts
    if (
        len(parts) == 3
        and parts[0] == "workloads"
        and parts[1].isdigit()
        and len(parts[1]) <= 3
        and int(parts[1]) < _INDEX_LIMIT
        and parts[2] in WorkloadIn.model_fields
    ):
        return parts
    raise FormError("the form has a field it was not served with")


def other_stage_fields(stage: object) -> tuple[str, ...]:
    """The fields that mean nothing for a workload of this stage."""
    return SERVING_ONLY if stage == "training" else TRAINING_ONLY


def _stage_fields(workload: dict[str, Any]) -> dict[str, Any]:
    """The workload without the other stage's fields."""
    drop = other_stage_fields(workload.get("stage"))
    return {key: value for key, value in workload.items() if key not in drop}


def form_to_raw(fields: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The nested intake (string values, as typed) from dotted form fields; empty fields are left out.

    Only the names the page serves are read (anything else is a FormError: a 400, never a crash). Unchecked
    checkboxes are not sent by browsers, so the form's boolean fields become "false" explicitly; otherwise a
    default of true (``ai_first``) could never be turned off.
    """
    raw: dict[str, Any] = {"company": {}, "contact": {}, "aws": {}}
    workloads: dict[int, dict[str, Any]] = {}
    for name, values in fields.items():
        if name == HONEYPOT_FIELD or not values:
            continue
        path = _form_path(name)
        value = values[-1].strip()
        if not value:
            continue
        if len(path) == 1:
            raw[path[0]] = value
        elif len(path) == 2:
            raw[path[0]][path[1]] = value
        else:
            workloads.setdefault(int(path[1]), {})[path[2]] = value
    for flag in BOOLEAN_FIELDS["company"]:
        raw["company"].setdefault(flag, "false")
    blocks = [_stage_fields(workloads[index]) for index in sorted(workloads)]  # gaps closed
    for workload in blocks:
        drop = other_stage_fields(workload.get("stage"))
        for flag in BOOLEAN_FIELDS["workloads"]:
            if flag not in drop:
                workload.setdefault(flag, "false")
    raw["workloads"] = blocks or [{}]
    raw.setdefault("partner_referral", "false")
    return raw


def honeypot_filled(fields: Mapping[str, Sequence[str]]) -> bool:
    return any(v.strip() for v in fields.get(HONEYPOT_FIELD, []))


# --- errors ------------------------------------------------------------------------------------------------

_FRIENDLY = {
    "missing": "This field is required.",
    "string_too_short": "This field is required.",
    "bool_parsing": "Choose yes or no.",
    "bool_type": "Choose yes or no.",
    "decimal_parsing": "Enter a number.",
    "decimal_type": "Enter a number.",
    "finite_number": "Enter a number.",
    "int_parsing": "Enter a whole number.",
    "int_type": "Enter a whole number.",
    "int_from_float": "Enter a whole number.",
    "int_parsing_size": "Enter a smaller whole number.",
    "decimal_max_places": "Use at most {decimal_places} decimal places.",
    "decimal_max_digits": "Use a plainer number: at most {max_digits} digits.",
    "decimal_whole_digits": "Use a plainer number: fewer digits before the decimal point.",
    "literal_error": "Choose one of the listed options.",
    "extra_forbidden": "This field is not part of the intake.",
    "greater_than": "Enter a number above {gt}.",
    "greater_than_equal": "Enter a number of at least {ge}.",
    "less_than": "Enter a number below {lt}.",
    "less_than_equal": "Enter a number no larger than {le}.",
    "string_too_long": "Use at most {max_length} characters.",
    "too_long": "Give at most {max_length} of these.",
    "too_short": "Give at least {min_length}.",
    "string_type": "Enter text here.",
    "string_pattern_mismatch": "Use letters, digits, '-' or '_' only (3 to 64 characters).",
    "model_type": "This part of the intake should be an object with named fields.",
    "model_attributes_type": "This part of the intake should be an object with named fields.",
    "dict_type": "This part of the intake should be an object with named fields.",
    "list_type": "Give a list here.",
    "enum": "Choose one of the listed options.",
}


def _friendly(error: Mapping[str, Any]) -> str | None:
    template = _FRIENDLY.get(str(error["type"]))
    if template is None:
        return None
    try:
        return template.format(**{k: str(v) for k, v in (error.get("ctx") or {}).items()})
    except (KeyError, IndexError, ValueError):
        return None


_EMAIL_PREFIX = "value is not a valid email address:"


def error_path(loc: Sequence[str | int]) -> str:
    """ "workloads.0.name" from ("workloads", 0, "name"): the form field's name and the JSON path."""
    return ".".join(str(part) for part in loc)


def error_message(error: Mapping[str, Any]) -> str:
    if error["type"] == "string_too_short" and error.get("ctx", {}).get("min_length", 1) > 1:
        return str(error["msg"])
    friendly = _friendly(error)
    if friendly:
        return friendly
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith(_EMAIL_PREFIX):
        reason = message.removeprefix(_EMAIL_PREFIX).strip()
        return f"Enter an email address like name@example.com. {reason}".strip()
    return message


def field_errors(exc: ValidationError) -> dict[str, str]:
    """One message per field path (the first one, when a field breaks two rules)."""
    messages: dict[str, str] = {}
    for error in exc.errors():
        messages.setdefault(error_path(error["loc"]), error_message(error))
    return messages


def api_error_detail(exc: ValidationError) -> list[dict[str, Any]]:
    """The 422 body's ``detail`` list, shaped like Powertools' own (``loc`` starts with "body")."""
    return [
        {"loc": ["body", *error["loc"]], "type": error["type"], "msg": error_message(error)} for error in exc.errors()
    ]
