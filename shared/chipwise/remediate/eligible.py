"""Which findings can have a mechanical next step at all, by resource kind and recommended action: what a message
offers an Apply button for (the apply itself checks the rest, :func:`chipwise.remediate.steps.mechanical_action`).

Apart from :mod:`chipwise.remediate.steps`, which reads resources and their metrics again (and imports the
collectors and rule thresholds that do), so building a message imports none of that.
"""

from __future__ import annotations

# (resource kind, action) pairs with a mechanical step: ec2_stop, component_copies, variant_capacity,
# endpoint_delete, ec2_schedule and variant_schedule.
_MECHANICAL = frozenset(
    {
        ("ec2_instance", "stop"),
        ("sagemaker_inference_component", "delete"),
        ("sagemaker_endpoint", "rightsize"),
        ("sagemaker_endpoint", "delete"),
        ("ec2_instance", "schedule"),
        ("sagemaker_endpoint", "schedule"),
    }
)


OFF_HOURS_CAPACITY = 1  # a variant without inference components keeps one instance: one of 1 has no schedule step


def may_apply(resource_kind: str, action: str, instance_count: int | None = None) -> bool:
    """Whether a finding of this kind and action (and, when given, instance count) can have a mechanical step (the
    apply checks the rest)."""
    if (resource_kind, action) == ("sagemaker_endpoint", "schedule") and instance_count is not None:
        return instance_count > OFF_HOURS_CAPACITY
    return (resource_kind, action) in _MECHANICAL
