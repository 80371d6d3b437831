"""Who owns a resource, from its tags: the email addresses its owner tags name, and whether they may be emailed
(``chipwise:notify``, or the ``owner_opt_in`` setting)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import EmailStr, TypeAdapter, ValidationError

from chipwise.models.resources import WorkloadHints

OWNER_TAGS = ("chipwise:owner", "owner", "Owner", "OWNER")
NOTIFY_TAG = "chipwise:notify"  # "yes" opts a resource's owners in to email; "off" opts them out
OPT_IN_VALUES = {"yes", "true", "on", "1"}
OPT_OUT_VALUES = {"off", "no", "false", "0"}


def owners_opted_in(tags: Mapping[str, Any], *, opt_in_by_default: bool) -> bool:
    """Whether a resource's owners may be emailed: ``chipwise:notify=yes`` on it, or the ``owner_opt_in``
    setting (unless the resource says ``chipwise:notify=off``)."""
    value = str(tags.get(NOTIFY_TAG, "")).strip().lower()
    if value in OPT_OUT_VALUES:
        return False
    return value in OPT_IN_VALUES or opt_in_by_default


_SPLIT = re.compile(r"[\s,;]+")


@cache
def _email() -> TypeAdapter[str]:
    """The email address validator, built by the first owner routing."""
    return TypeAdapter(EmailStr)


def owner_emails(tags: Mapping[str, Any], hints: WorkloadHints) -> tuple[str, ...]:
    """The email addresses named by a resource's owner tags (or the collector's owner hint), in order.

    Values that are not email addresses (a team name) are ignored for routing: only mail can reach them.
    """
    values = [str(tags[key]) for key in OWNER_TAGS if tags.get(key)]
    if hints.owner:
        values.append(hints.owner)
    found: list[str] = []
    for value in values:
        for token in _SPLIT.split(value):
            try:
                address = str(_email().validate_python(token)).lower()
            except ValidationError:
                continue
            if address not in found:
                found.append(address)
    return tuple(found)
