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


def may_apply(resource_kind: str, action: str) -> bool:
    """Whether a finding of this kind and action can have a mechanical step (the apply checks the rest)."""
    return (resource_kind, action) in _MECHANICAL
