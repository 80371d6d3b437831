"""SageMaker Studio apps for moto, which has none (5.2.5): CreateApp, DescribeApp and ListApps, shaped as
botocore's SageMaker service model says (``AppDetails``, ``DescribeAppResponse``).

An app is ``InService`` from the start. ``LastUserActivityTimestamp`` (what Studio records of a user's activity)
is absent until a test or the demo sets it with :func:`set_last_user_activity` (in-process, as
``Emulator.seed_metrics`` writes CloudWatch). The domain, user profile and space are not checked. Apps live on
moto's SageMaker backend of the account and region, so ``/moto-api/reset`` empties them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.sagemaker.exceptions import ValidationError
from moto.sagemaker.models import sagemaker_backends
from moto.sagemaker.responses import SageMakerResponse

_STATE_ATTRIBUTE = "chipwise_studio_apps"
_lock = threading.Lock()
_installed = False


@dataclass
class StudioApp:
    arn: str
    domain_id: str
    user_profile: str | None
    space: str | None
    app_type: str
    name: str
    resource_spec: dict[str, Any]
    created: datetime
    last_user_activity: datetime | None = None
    tags: list[dict[str, str]] = field(default_factory=list)

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"DomainId": self.domain_id}
        if self.user_profile:
            out["UserProfileName"] = self.user_profile
        if self.space:
            out["SpaceName"] = self.space
        out.update(
            AppType=self.app_type,
            AppName=self.name,
            Status="InService",
            CreationTime=self.created,
            ResourceSpec=self.resource_spec,
        )
        return out

    def describe(self) -> dict[str, Any]:
        out = {"AppArn": self.arn, **self.details()}
        if self.last_user_activity is not None:
            out["LastUserActivityTimestamp"] = self.last_user_activity
        return out


def apps_of(backend: Any) -> dict[tuple[str, str, str], StudioApp]:
    state: dict[tuple[str, str, str], StudioApp] | None = getattr(backend, _STATE_ATTRIBUTE, None)
    if state is None:
        state = {}
        setattr(backend, _STATE_ATTRIBUTE, state)
    return state


def _backend(response: SageMakerResponse) -> Any:
    return sagemaker_backends[response.current_account][response.region]


def _key(domain: str, owner: str | None, app_type: str, name: str) -> tuple[str, str, str]:
    return (domain, owner or "", f"{app_type}/{name}")


def create_app(self: SageMakerResponse) -> ActionResult:
    domain = str(self._get_param("DomainId"))
    user, space = self._get_param("UserProfileName"), self._get_param("SpaceName")
    app_type, name = str(self._get_param("AppType")), str(self._get_param("AppName"))
    if not user and not space:
        raise ValidationError(message="Either UserProfileName or SpaceName is required.")
    owner = user or space
    kind = "user-profile" if user else "space"
    arn = f"arn:aws:sagemaker:{self.region}:{self.current_account}:app/{domain}/{owner}/{app_type.lower()}/{name}"
    app = StudioApp(
        arn=arn,
        domain_id=domain,
        user_profile=user,
        space=space,
        app_type=app_type,
        name=name,
        resource_spec=dict(self._get_param("ResourceSpec") or {}),
        created=utcnow(),
        tags=list(self._get_param("Tags") or []),
    )
    with _lock:
        apps = apps_of(_backend(self))
        key = _key(domain, owner, app_type, name)
        if key in apps:
            raise ValidationError(message=f"App {name} already exists for {kind} {owner}.")
        apps[key] = app
    return ActionResult({"AppArn": arn})


def describe_app(self: SageMakerResponse) -> ActionResult:
    owner = self._get_param("UserProfileName") or self._get_param("SpaceName")
    key = _key(
        str(self._get_param("DomainId")), owner, str(self._get_param("AppType")), str(self._get_param("AppName"))
    )
    with _lock:
        app = apps_of(_backend(self)).get(key)
    if app is None:
        raise ValidationError(message=f"Could not find app {key[2]}.")
    return ActionResult(app.describe())


def list_apps(self: SageMakerResponse) -> ActionResult:
    domain = self._get_param("DomainIdEquals")
    with _lock:
        apps = sorted(apps_of(_backend(self)).values(), key=lambda a: a.created, reverse=True)
    found = [a.details() for a in apps if domain is None or a.domain_id == domain]
    return ActionResult({"Apps": found})


def set_last_user_activity(account_id: str, region: str, app_arn: str, when: datetime) -> None:
    """Record a user's last activity on an app (what Studio would record), as naive UTC."""
    backend = sagemaker_backends[account_id][region]
    with _lock:
        for app in apps_of(backend).values():
            if app.arn == app_arn:
                app.last_user_activity = when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when
                return
    raise KeyError(app_arn)


_ACTIONS = {"create_app": create_app, "describe_app": describe_app, "list_apps": list_apps}


def install() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        for action, method in _ACTIONS.items():
            setattr(SageMakerResponse, action, method)
        _installed = True
