"""SageMaker training jobs that ran during the look-back window, with their hosts (the ``Host`` dimension their
metrics are published under) and what they trained."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from chipwise.aws import AwsContext
from chipwise.collect.hints import workload_hints
from chipwise.collect.inventory.answers import tags as tag_map
from chipwise.collect.inventory.instance_types import TypeFactsReader, typed_resource
from chipwise.collect.inventory.listed import Listed, describe_listed
from chipwise.collect.inventory.registry import register
from chipwise.models.records import CollectedResource, Inventory
from chipwise.models.resources import TrainingJobDetails

# How long a SageMaker training job may run (its MaxRuntimeInSeconds ceiling): older jobs cannot overlap.
MAX_TRAINING_DAYS = 28


@register(
    name="inventory.sagemaker_training_jobs",
    kinds=("sagemaker_training_job",),
    listing_calls=("sagemaker.ListTrainingJobs",),
    detail_calls=("sagemaker.DescribeTrainingJob", "sagemaker.ListTags"),
)
def collect_training_jobs(aws: AwsContext, _account_id: str, window_start: datetime) -> Inventory:
    """Training jobs that ran during the window (still running, or ended after it started); a job that cannot be
    described is a problem of its own, the others go on."""
    sm = aws.client("sagemaker")
    types = TypeFactsReader(aws)
    oldest = window_start - timedelta(days=MAX_TRAINING_DAYS)
    result = Inventory()
    found = result.resources
    pages = sm.get_paginator("list_training_jobs").paginate(SortBy="CreationTime", SortOrder="Descending")
    for page in pages:
        summaries = page.get("TrainingJobSummaries", [])
        for summary in summaries:
            if summary["CreationTime"] < oldest:
                result.problems.extend(types.problems)
                return result
            ended = summary.get("TrainingEndTime")
            if summary.get("TrainingJobStatus") != "InProgress" and ended is not None and ended < window_start:
                continue
            name, arn = str(summary["TrainingJobName"]), str(summary.get("TrainingJobArn") or "")
            listed = Listed("sagemaker_training_job", name, arn)
            described = describe_listed(result, listed, _describe, sm, name)
            if described is not None:
                found.append(_training_resource(*described, types))
    result.problems.extend(types.problems)
    return result


def _describe(sm: Any, name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """DescribeTrainingJob and its tags."""
    job: dict[str, Any] = dict(sm.describe_training_job(TrainingJobName=name))
    return job, tag_map(sm.list_tags(ResourceArn=job["TrainingJobArn"]).get("Tags"))


def training_hosts(job_name: str, count: int) -> list[str]:
    """The ``Host`` dimension values SageMaker publishes training metrics under."""
    return [f"{job_name}/algo-{n}" for n in range(1, max(1, count) + 1)]


def _training_resource(
    job: dict[str, Any], tags: dict[str, str], types: TypeFactsReader | None = None
) -> CollectedResource:
    config = job.get("ResourceConfig") or {}
    groups = config.get("InstanceGroups") or []
    instance_type = config.get("InstanceType") or (groups[0].get("InstanceType") if groups else None)
    count = int(config.get("InstanceCount") or sum(int(g.get("InstanceCount", 0)) for g in groups) or 1)
    image = (job.get("AlgorithmSpecification") or {}).get("TrainingImage")
    environment = dict(job.get("Environment") or {})
    hyperparameters = {str(k): str(v) for k, v in (job.get("HyperParameters") or {}).items()}
    typ = (types or TypeFactsReader(None)).facts(instance_type)
    name = str(job["TrainingJobName"])
    details = TrainingJobDetails(
        status=job.get("TrainingJobStatus"),
        hosts=list(training_hosts(name, count)),
        training_start=job.get("TrainingStartTime"),
        training_end=job.get("TrainingEndTime"),
        billable_seconds=job.get("BillableTimeInSeconds"),
        training_seconds=job.get("TrainingTimeInSeconds"),
        max_runtime_seconds=(job.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds"),
        spot=bool(job.get("EnableManagedSpotTraining")),
        image=image,
        environment=environment,
        hyperparameters=hyperparameters,
        catalog=typ.facts,
    )
    return typed_resource(
        typ,
        arn=str(job["TrainingJobArn"]),
        kind="sagemaker_training_job",
        name=name,
        instance_type=instance_type,
        instance_count=count,
        state=job.get("TrainingJobStatus"),
        launched_at=job.get("TrainingStartTime") or job.get("CreationTime"),
        ended_at=job.get("TrainingEndTime"),
        tags=tags,
        hints=workload_hints(
            tags=tags,
            kind="sagemaker_training_job",
            image=image,
            environment=environment,
            model_data_url=_training_model_input(job),
            hyperparameters=hyperparameters,
        ),
        details=details,
    )


def _training_model_input(job: Mapping[str, Any]) -> str | None:
    """The S3 URI of a training channel named ``model`` (JumpStart fine-tunes read the base model from it)."""
    for channel in job.get("InputDataConfig") or []:
        if str(channel.get("ChannelName", "")).lower() == "model":
            return ((channel.get("DataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
    return None
