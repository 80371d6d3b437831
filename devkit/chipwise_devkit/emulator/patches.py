"""Chipwise's patches to moto, installed once per process by ``install()`` (``Emulator.start`` calls it).

1. SageMaker accepts every ``ml.*`` instance type (moto's allow-list predates inf2, trn1/trn2, g5/g6, p4d/p5).
2. CloudWatch GetMetricData is indexed, namespace-exact, has percentiles, the 500-query limit and paging
   (:mod:`chipwise_devkit.emulator.fast_cloudwatch`).
3. Any service operation can be made to fail (:mod:`chipwise_devkit.emulator.faults`).
4. SageMaker has inference components (Create, Describe, List, Delete, UpdateInferenceComponentRuntimeConfig),
   and an endpoint config's variant may name no model, as one for inference components does
   (:mod:`chipwise_devkit.emulator.inference_components`).
5. EC2 has capacity reservations and Capacity Blocks (:mod:`chipwise_devkit.emulator.capacity_reservations`).
6. Bedrock has Provisioned Throughput (:mod:`chipwise_devkit.emulator.bedrock_provisioned`).
7. SageMaker has Studio apps (:mod:`chipwise_devkit.emulator.studio_apps`).
8. Application Auto Scaling refuses a scheduled action on an unregistered target or the delete of a missing one,
   and deregistering a target deletes its scheduled actions (:mod:`chipwise_devkit.emulator.application_autoscaling`).
9. EKS managed node groups take tags (:mod:`chipwise_devkit.emulator.eks_nodegroups`).
"""

from __future__ import annotations

import re
import threading
from typing import Any

_ML_INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9-]+$")
_lock = threading.Lock()
_installed = False


def _validate_ml_instance_type(self: Any, instance_type: str) -> None:
    from moto.sagemaker.exceptions import ValidationError

    if not _ML_INSTANCE_TYPE.match(str(instance_type)):
        raise ValidationError(
            message=f"Value '{instance_type}' at 'instanceType' failed to satisfy constraint: "
            "Member must be an ml.* instance type"
        )


def install_sagemaker() -> None:
    """Let endpoint configs and notebook instances use any ``ml.<family>.<size>`` type."""
    import moto.sagemaker.models as sagemaker_models

    sagemaker_models.FakeEndpointConfig.validate_instance_type = _validate_ml_instance_type  # type: ignore[method-assign]
    sagemaker_models.FakeSagemakerNotebookInstance.validate_instance_type = _validate_ml_instance_type  # type: ignore[method-assign]


def install() -> None:
    """Install every patch (idempotent, process-wide)."""
    global _installed
    with _lock:
        if _installed:
            return
        from chipwise_devkit.emulator import (
            application_autoscaling,
            bedrock_provisioned,
            capacity_reservations,
            eks_nodegroups,
            fast_cloudwatch,
            faults,
            inference_components,
            studio_apps,
        )

        install_sagemaker()
        inference_components.install()
        capacity_reservations.install()
        bedrock_provisioned.install()
        studio_apps.install()
        application_autoscaling.install()
        eks_nodegroups.install()
        fast_cloudwatch.install()
        faults.install()
        _installed = True
