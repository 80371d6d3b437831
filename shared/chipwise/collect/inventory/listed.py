"""The describe-failure policy, in one place for every source that lists resources and then describes each one.

A listed resource is remembered as listed before it is described, so that it is never marked gone because of a
call that failed: when the describe call fails (denied, throttled past the retries, an AWS error, no answer) the
resource is a problem of its own (a per-resource error in the scan document, the scan ``partial``), its stored
record is kept as it is and its findings stay open; the other resources of the source go on. Only a resource that
the describe call says no longer exists (deleted between the listing and the call) is forgotten, to be marked gone
like any resource the listing no longer names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from botocore.exceptions import ClientError

from chipwise.collect.inventory.answers import CALL_ERRORS, gone, problem
from chipwise.models.records import Inventory

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Listed:
    """A resource as its listing names it: the ARN when the listing gives it ("" when only the describe call does,
    as for a Studio app; it is then kept by kind and name)."""

    kind: str
    name: str
    arn: str = ""


def describe_listed(
    result: Inventory, listed: Listed, describe: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T | None:
    """``describe(*args, **kwargs)`` for one listed resource, under the policy above: its answer, or None when the
    resource is to be skipped this scan (gone, or a problem recorded in ``result`` and the resource kept)."""
    if listed.arn:
        result.listed_arns.add(listed.arn)
    try:
        return describe(*args, **kwargs)
    except CALL_ERRORS as exc:
        if isinstance(exc, ClientError) and gone(exc):
            result.listed_arns.discard(listed.arn)
            return None
        result.problems.append(problem(listed.arn, listed.name, exc, recorded=False))
        if not listed.arn:
            result.undescribed_names.add((listed.kind, listed.name))
        return None
