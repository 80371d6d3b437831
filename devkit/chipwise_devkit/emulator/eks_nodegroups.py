"""EKS managed node groups take tags, as AWS's TagResource, UntagResource and ListTagsForResource document for a
node group's ARN (moto 5.2.5 tags clusters only: "It does not tag a managed node group").

``install()`` wraps the three backend methods: a node group's ARN is served here, any other goes to moto."""

from __future__ import annotations

from typing import Any

_installed = False


def _nodegroup(backend: Any, arn: str) -> Any | None:
    for cluster in backend.clusters.values():
        for nodegroup in cluster.nodegroups.values():
            if nodegroup.arn == arn:
                return nodegroup
    return None


def install() -> None:
    """Patch moto's EKS backend (idempotent; ``patches.install`` holds the lock)."""
    global _installed
    if _installed:
        return
    from moto.eks.models import EKSBackend

    tag, untag, listed = EKSBackend.tag_resource, EKSBackend.untag_resource, EKSBackend.list_tags_for_resource

    def tag_resource(self: Any, resource_arn: str, tags: dict[str, str]) -> None:
        found = _nodegroup(self, resource_arn)
        if found is None:
            return tag(self, resource_arn, tags)
        found.tags.update(tags)
        return None

    def untag_resource(self: Any, resource_arn: str, tag_keys: list[str] | str) -> None:
        keys = [tag_keys] if isinstance(tag_keys, str) else list(tag_keys)
        found = _nodegroup(self, resource_arn)
        if found is None:
            return untag(self, resource_arn, keys)
        for key in keys:
            found.tags.pop(key, None)
        return None

    def list_tags_for_resource(self: Any, resource_arn: str) -> dict[str, str]:
        found = _nodegroup(self, resource_arn)
        return listed(self, resource_arn) if found is None else dict(found.tags)

    EKSBackend.tag_resource = tag_resource  # type: ignore[method-assign]
    EKSBackend.untag_resource = untag_resource  # type: ignore[method-assign]
    EKSBackend.list_tags_for_resource = list_tags_for_resource  # type: ignore[method-assign]
    _installed = True
