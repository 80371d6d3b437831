"""Application Auto Scaling scheduled actions on the emulator (chipwise_devkit.emulator.application_autoscaling):
an action needs a registered scalable target, deleting a missing action is ObjectNotFoundException, and
deregistering a target deletes its scheduled actions (as the service documents), leaving other targets' alone."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from chipwise_devkit.emulator import Emulator

DIMENSION = "sagemaker:variant:DesiredInstanceCount"


def target(endpoint: str) -> dict[str, str]:
    return {
        "ServiceNamespace": "sagemaker",
        "ResourceId": f"endpoint/{endpoint}/variant/AllTraffic",
        "ScalableDimension": DIMENSION,
    }


def client() -> Any:
    config = Config(retries={"mode": "standard", "total_max_attempts": 1})
    return boto3.client("application-autoscaling", region_name="us-east-1", config=config)


def names() -> set[tuple[str, str]]:
    actions = client().describe_scheduled_actions(ServiceNamespace="sagemaker")["ScheduledActions"]
    return {(a["ResourceId"].split("/")[1], a["ScheduledActionName"]) for a in actions}


def test_a_scheduled_action_needs_a_registered_target(aws: Emulator) -> None:
    with pytest.raises(ClientError) as caught:
        client().put_scheduled_action(**target("a-ep"), ScheduledActionName="night", Schedule="cron(0 19 ? * MON *)")
    assert caught.value.response["Error"]["Code"] == "ObjectNotFoundException"
    assert names() == set()


def test_deleting_a_missing_action_is_not_found(aws: Emulator) -> None:
    client().register_scalable_target(**target("a-ep"), MinCapacity=1, MaxCapacity=2)
    with pytest.raises(ClientError) as caught:
        client().delete_scheduled_action(**target("a-ep"), ScheduledActionName="night")
    assert caught.value.response["Error"]["Code"] == "ObjectNotFoundException"


def test_deregistering_a_target_deletes_its_scheduled_actions_only(aws: Emulator) -> None:
    for endpoint in ("a-ep", "b-ep"):
        client().register_scalable_target(**target(endpoint), MinCapacity=1, MaxCapacity=2)
        client().put_scheduled_action(
            **target(endpoint),
            ScheduledActionName="night",
            Schedule="cron(0 19 ? * MON *)",
            ScalableTargetAction={"MinCapacity": 1, "MaxCapacity": 1},
        )
    assert names() == {("a-ep", "night"), ("b-ep", "night")}
    client().deregister_scalable_target(**target("a-ep"))
    assert names() == {("b-ep", "night")}
    client().delete_scheduled_action(**target("b-ep"), ScheduledActionName="night")
    assert names() == set()
