"""Application Auto Scaling scheduled actions as the service keeps them, where moto (5.2.5) is looser.

moto has the calls (RegisterScalableTarget, DescribeScalableTargets, DeregisterScalableTarget, PutScheduledAction,
DescribeScheduledActions, DeleteScheduledAction), but:

- PutScheduledAction on a resource that is not a registered scalable target succeeds; the service answers
  ``ObjectNotFoundException`` (a scheduled action belongs to a scalable target);
- DeleteScheduledAction of an action that does not exist succeeds; the service answers ``ObjectNotFoundException``;
- DeregisterScalableTarget leaves the target's scheduled actions; the service deletes them with the target
  ("Deregistering a scalable target deletes the scaling policies and the scheduled actions that are associated
  with it", DeregisterScalableTarget in the Application Auto Scaling API Reference).

``install()`` wraps those three methods of moto's backend (the errors are serialized by moto's JSON responses as
the service's are: ``__type`` and ``message``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from moto.core.exceptions import JsonRESTError

_installed = False


class ObjectNotFound(JsonRESTError):
    def __init__(self, message: str) -> None:
        super().__init__("ObjectNotFoundException", message)


def _target_exists(backend: Any, resource_id: str, dimension: str) -> bool:
    return bool(backend._scalable_target_exists(resource_id, dimension))


def _put(original: Callable[..., None]) -> Callable[..., None]:
    @wraps(original)
    def put_scheduled_action(self: Any, service_namespace: str, *args: Any, **kwargs: Any) -> None:
        resource_id, dimension = kwargs.get("resource_id"), kwargs.get("scalable_dimension")
        if resource_id is not None and not _target_exists(self, str(resource_id), str(dimension)):
            raise ObjectNotFound(
                f"No scalable target registered for service namespace: {service_namespace}, "
                f"resource ID: {resource_id}, scalable dimension: {dimension}"
            )
        original(self, service_namespace, *args, **kwargs)

    return put_scheduled_action


def _delete(original: Callable[..., None]) -> Callable[..., None]:
    @wraps(original)
    def delete_scheduled_action(
        self: Any, service_namespace: str, scheduled_action_name: str, resource_id: str, scalable_dimension: str
    ) -> None:
        found = [
            a
            for a in self.scheduled_actions
            if (a.service_namespace, a.scheduled_action_name, a.resource_id, a.scalable_dimension)
            == (service_namespace, scheduled_action_name, resource_id, scalable_dimension)
        ]
        if not found:
            raise ObjectNotFound(
                f"No scheduled action found for service namespace: {service_namespace}, resource ID: {resource_id}, "
                f"scalable dimension: {scalable_dimension}, scheduled action name: {scheduled_action_name}"
            )
        original(self, service_namespace, scheduled_action_name, resource_id, scalable_dimension)

    return delete_scheduled_action


def _deregister(original: Callable[..., None]) -> Callable[..., None]:
    @wraps(original)
    def deregister_scalable_target(self: Any, namespace: str, r_id: str, dimension: str) -> None:
        original(self, namespace, r_id, dimension)
        self.scheduled_actions = [
            a
            for a in self.scheduled_actions
            if (a.service_namespace, a.resource_id, a.scalable_dimension) != (namespace, r_id, dimension)
        ]

    return deregister_scalable_target


def install() -> None:
    """Patch moto's Application Auto Scaling backend (idempotent; ``patches.install`` holds the lock)."""
    global _installed
    if _installed:
        return
    from moto.applicationautoscaling.models import ApplicationAutoscalingBackend as Backend

    Backend.put_scheduled_action = _put(Backend.put_scheduled_action)  # type: ignore[method-assign]
    Backend.delete_scheduled_action = _delete(Backend.delete_scheduled_action)  # type: ignore[method-assign]
    Backend.deregister_scalable_target = _deregister(Backend.deregister_scalable_target)  # type: ignore[method-assign]
    _installed = True
