"""SageMaker Studio apps on accelerator types that are InService, with the user activity Studio records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.listed import Listed, describe_listed
from chipwise.collect.inventory.registry import register
from chipwise.models.records import Inventory
from chipwise.models.resources import StudioAppDetails


@register(
    name="inventory.sagemaker_studio_apps",
    kinds=("sagemaker_studio_app",),
    listing_calls=("sagemaker.ListApps",),
    detail_calls=("sagemaker.DescribeApp", "ec2.DescribeInstanceTypes"),
)
def collect_studio_apps(aws: AwsContext, _account_id: str, _window_start: datetime) -> Inventory:
    """Studio apps (ListApps) on accelerator types that are InService, each described for its ARN and the user
    activity Studio records (DescribeApp ``LastUserActivityTimestamp``); an app that cannot be described is a
    problem of its own, the others go on."""
    sm = aws.client("sagemaker")
    listed: list[dict[str, Any]] = []
    for page in sm.get_paginator("list_apps").paginate():
        listed.extend(dict(a) for a in page.get("Apps", []))
    types = TypeFactsReader(aws)
    wanted = [a for a in listed if a.get("Status") == "InService" and (a.get("ResourceSpec") or {}).get("InstanceType")]
    types.prefetch(str(a["ResourceSpec"]["InstanceType"]) for a in wanted)
    result = Inventory()
    for app in wanted:
        instance_type = str(app["ResourceSpec"]["InstanceType"])
        typ = types.facts(instance_type)
        if typ.platform == "cpu":
            continue
        owner = {"UserProfileName": app["UserProfileName"]} if app.get("UserProfileName") else {}
        if app.get("SpaceName"):
            owner = {"SpaceName": app["SpaceName"]}
        key = {"DomainId": app["DomainId"], "AppType": app["AppType"], "AppName": app["AppName"], **owner}
        name = f"{app['DomainId']}/{app.get('SpaceName') or app.get('UserProfileName')}/{app['AppName']}"
        # ListApps gives no ARN: an app DescribeApp cannot answer for is kept by its name (never marked gone)
        described = describe_listed(result, Listed("sagemaker_studio_app", name), sm.describe_app, **key)
        if described is None:
            continue
        details = StudioAppDetails(
            domain_id=str(app["DomainId"]),
            user_profile=app.get("UserProfileName"),
            space_name=app.get("SpaceName"),
            app_type=app.get("AppType"),
            app_name=str(app["AppName"]),
            status=app.get("Status"),
            last_user_activity=described.get("LastUserActivityTimestamp"),
            lifecycle_config_arn=(app.get("ResourceSpec") or {}).get("LifecycleConfigArn"),
            catalog=typ.facts,
        )
        result.resources.append(
            typed_resource(
                typ,
                arn=str(described["AppArn"]),
                kind="sagemaker_studio_app",
                name=name,
                instance_type=instance_type,
                instance_count=1,
                state=app.get("Status"),
                launched_at=app.get("CreationTime"),
                details=details,
            )
        )
    result.problems.extend(types.problems)
    return result
