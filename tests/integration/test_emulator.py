"""The AWS emulator: plain boto3 via AWS_ENDPOINT_URL, SageMaker accelerator types, fast and faithful
GetMetricData (statistics, namespace isolation, bucket alignment, limits, paging), fault injection with
boto3's standard retries, CE paging, docker-less Batch and sent-mail read-back.

Every test uses the ``aws`` fixture (conftest): one session emulator, reset before each test, env applied.
"""

from __future__ import annotations

import json
import math
import time
from datetime import UTC, datetime, timedelta
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.retries.standard import ExponentialBackoff

from chipwise_devkit.emulator import Emulator, MetricPoint

NS = "AWS/SageMaker"
END = datetime(2026, 11, 20, tzinfo=UTC)
DIMS = {"EndpointName": "ep-a", "VariantName": "AllTraffic"}
NO_RETRY = Config(retries={"mode": "standard", "total_max_attempts": 1})


def _client(service: str, **kwargs: Any) -> Any:
    """A plain boto3 client (typed loosely: these tests build requests as plain dicts)."""
    return boto3.client(service, **kwargs)  # type: ignore[call-overload]


def _query(
    qid: str,
    stat: str,
    dims: dict[str, str],
    *,
    period: int = 3600,
    name: str = "CPUUtilization",
    namespace: str = NS,
    **extra: Any,
) -> dict[str, Any]:
    metric = {
        "Namespace": namespace,
        "MetricName": name,
        "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()],
    }
    return {"Id": qid, "MetricStat": {"Metric": metric, "Period": period, "Stat": stat}, **extra}


def _nearest_rank(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


# --- reaching it --------------------------------------------------------------------------------


def test_plain_boto3_with_env_vars_only(aws: Emulator) -> None:
    assert aws.url.startswith("http://127.0.0.1:")
    env = aws.env("eu-west-1")
    assert env == {
        "AWS_ENDPOINT_URL": aws.url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-west-1",
    }
    assert _client("sts").get_caller_identity()["Account"] == "123456789012"
    sqs = _client("sqs")
    sqs.create_queue(QueueName="emulator-probe")
    assert any(url.endswith("/emulator-probe") for url in sqs.list_queues()["QueueUrls"])


def test_reset_clears_state(aws: Emulator) -> None:
    _client("sqs").create_queue(QueueName="to-be-reset")
    aws.inject_fault("sqs", "ListQueues", "Throttling")
    aws.reset()
    assert _client("sqs").list_queues().get("QueueUrls", []) == []  # the fault was cleared too
    assert aws.fault_hits() == {}


# --- SageMaker ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "instance_type",
    [
        "ml.inf2.xlarge",
        "ml.inf2.48xlarge",
        "ml.trn1.2xlarge",
        "ml.trn2.48xlarge",
        "ml.g5.xlarge",
        "ml.g6e.2xlarge",
        "ml.p4d.24xlarge",
        "ml.p5.48xlarge",
    ],
)
def test_sagemaker_accepts_accelerator_instance_types(aws: Emulator, instance_type: str) -> None:
    sm = _client("sagemaker")
    sm.create_model(
        ModelName="m",
        ExecutionRoleArn="arn:aws:iam::123456789012:role/sm",
        PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:latest"},
    )
    sm.create_endpoint_config(
        EndpointConfigName="cfg",
        ProductionVariants=[
            {"VariantName": "AllTraffic", "ModelName": "m", "InitialInstanceCount": 1, "InstanceType": instance_type}
        ],
    )
    sm.create_endpoint(EndpointName="ep", EndpointConfigName="cfg")
    described = sm.describe_endpoint_config(EndpointConfigName="cfg")
    assert described["ProductionVariants"][0]["InstanceType"] == instance_type
    assert sm.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"


def test_sagemaker_notebook_accepts_g5_and_bad_types_still_fail(aws: Emulator) -> None:
    sm = _client("sagemaker", config=NO_RETRY)
    sm.create_notebook_instance(
        NotebookInstanceName="nb", InstanceType="ml.g5.xlarge", RoleArn="arn:aws:iam::123456789012:role/sm"
    )
    assert sm.describe_notebook_instance(NotebookInstanceName="nb")["InstanceType"] == "ml.g5.xlarge"
    with pytest.raises(ClientError) as err:
        sm.create_endpoint_config(
            EndpointConfigName="bad",
            ProductionVariants=[
                {"VariantName": "v", "ModelName": "m", "InitialInstanceCount": 1, "InstanceType": "inf2.xlarge"}
            ],
        )
    assert err.value.response["Error"]["Code"] == "ValidationException"


# --- CloudWatch GetMetricData ---------------------------------------------------------------------


def test_get_metric_data_statistics_isolation_and_buckets(aws: Emulator) -> None:
    start = END - timedelta(hours=6, minutes=30)  # not hour-aligned: buckets follow StartTime
    # 12 samples per hour for 6 hours, in the queried series; hour 3 left empty
    samples: dict[int, list[float]] = {}
    points: list[MetricPoint] = []
    for hour in range(6):
        if hour == 3:
            continue
        for k in range(12):
            value = float((hour * 7 + k * 13) % 50 + hour)
            samples.setdefault(hour, []).append(value)
            points.append(
                MetricPoint(NS, "CPUUtilization", DIMS, start + timedelta(hours=hour, minutes=5 * k), value, "Percent")
            )
    at = start + timedelta(minutes=1)
    # series that must NOT leak in: other namespace (same name and dimensions), superset and subset of dimensions
    points.append(MetricPoint("Other/Namespace", "CPUUtilization", DIMS, at, 10_000.0))
    points.append(MetricPoint(NS, "CPUUtilization", {**DIMS, "Extra": "x"}, at, 20_000.0))
    points.append(MetricPoint(NS, "CPUUtilization", {"EndpointName": "ep-a"}, at, 30_000.0))
    points.append(MetricPoint(NS, "CPUUtilization", {}, at, 40_000.0))
    points.append(MetricPoint(NS, "CPUUtilization", DIMS, start - timedelta(seconds=1), 50_000.0))  # before start
    points.append(MetricPoint(NS, "CPUUtilization", DIMS, END - timedelta(minutes=30), 60_000.0))  # at/after end
    assert aws.seed_metrics(points) == len(points)

    cw = _client("cloudwatch")
    stats = ["Average", "Maximum", "Minimum", "Sum", "SampleCount", "p95", "p99.9"]
    queries = [_query(f"q{i}", stat, DIMS) for i, stat in enumerate(stats)]
    queries.append(_query("nodims", "Maximum", {}))
    end = start + timedelta(hours=6)
    resp = cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=end, ScanBy="TimestampAscending")
    assert "NextToken" not in resp
    by_id = {r["Id"]: r for r in resp["MetricDataResults"]}
    hours = sorted(samples)
    expected_stamps = [start + timedelta(hours=h) for h in hours]
    expect = {
        "Average": [sum(samples[h]) / len(samples[h]) for h in hours],
        "Maximum": [max(samples[h]) for h in hours],
        "Minimum": [min(samples[h]) for h in hours],
        "Sum": [sum(samples[h]) for h in hours],
        "SampleCount": [float(len(samples[h])) for h in hours],
        "p95": [_nearest_rank(samples[h], 95) for h in hours],
        "p99.9": [_nearest_rank(samples[h], 99.9) for h in hours],
    }
    for i, stat in enumerate(stats):
        result = by_id[f"q{i}"]
        assert result["Timestamps"] == expected_stamps, stat  # empty hour 3 omitted, aligned on StartTime
        assert result["Values"] == pytest.approx(expect[stat]), stat
        assert result["Label"] == f"CPUUtilization {stat}"
        assert result["StatusCode"] == "Complete"
    assert by_id["nodims"]["Values"] == [40_000.0]  # no Dimensions = only the dimensionless series

    # default ScanBy is TimestampDescending
    resp = cw.get_metric_data(MetricDataQueries=queries[:1], StartTime=start, EndTime=end)
    assert resp["MetricDataResults"][0]["Timestamps"] == list(reversed(expected_stamps))


def test_get_metric_data_sees_put_metric_data_and_math_identity(aws: Emulator) -> None:
    cw = _client("cloudwatch")
    start = END - timedelta(hours=2)
    cw.put_metric_data(
        Namespace=NS,
        MetricData=[
            {
                "MetricName": "Invocations",
                "Dimensions": [{"Name": k, "Value": v} for k, v in DIMS.items()],
                "Timestamp": start + timedelta(minutes=10),
                "Value": 4.0,
                "Unit": "Count",
            }
        ],
    )
    queries = [_query("inv", "Sum", DIMS, name="Invocations", ReturnData=False), {"Id": "same", "Expression": "inv"}]
    first = cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=END)["MetricDataResults"]
    assert [(r["Id"], r["Values"]) for r in first] == [("same", [4.0])]
    cw.put_metric_data(
        Namespace=NS,
        MetricData=[  # appended after the index was built
            {
                "MetricName": "Invocations",
                "Dimensions": [{"Name": k, "Value": v} for k, v in DIMS.items()],
                "Timestamp": start + timedelta(minutes=20),
                "StatisticValues": {"SampleCount": 3, "Sum": 6, "Minimum": 1, "Maximum": 3},
                "Unit": "Count",
            }
        ],
    )
    queries[0]["ReturnData"] = True
    second = cw.get_metric_data(MetricDataQueries=queries[:1], StartTime=start, EndTime=END)["MetricDataResults"]
    assert second[0]["Values"] == [10.0]
    counted = cw.get_metric_data(
        MetricDataQueries=[_query("n", "SampleCount", DIMS, name="Invocations")], StartTime=start, EndTime=END
    )["MetricDataResults"]
    assert counted[0]["Values"] == [4.0]


def test_get_metric_data_rejects_more_than_500_queries(aws: Emulator) -> None:
    cw = _client("cloudwatch", config=NO_RETRY)
    queries = [_query(f"q{i}", "Average", {"EndpointName": f"ep{i}"}) for i in range(501)]
    start = END - timedelta(days=1)
    with pytest.raises(ClientError) as err:
        cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=END)
    assert err.value.response["Error"]["Code"] == "ValidationError"
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert (
        len(cw.get_metric_data(MetricDataQueries=queries[:500], StartTime=start, EndTime=END)["MetricDataResults"])
        == 500
    )
    for bad in (
        [_query("Upper", "Average", DIMS)],
        [_query("a", "Average", DIMS)] * 2,
        [_query("a", "Average", DIMS, period=90)],
        [_query("a", "tm99", DIMS)],
    ):
        with pytest.raises(ClientError) as err:
            cw.get_metric_data(MetricDataQueries=bad, StartTime=start, EndTime=END)
        assert err.value.response["Error"]["Code"] == "ValidationError"


def test_get_metric_data_pages_with_next_token(aws: Emulator) -> None:
    start = END - timedelta(days=5)
    aws.seed_metrics(
        MetricPoint(NS, "CPUUtilization", {"EndpointName": f"ep{e}"}, start + timedelta(hours=h), float(e * 1000 + h))
        for e in range(3)
        for h in range(120)
    )
    cw = _client("cloudwatch", config=NO_RETRY)
    queries = [_query(f"q{e}", "Maximum", {"EndpointName": f"ep{e}"}) for e in range(3)]
    full = cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=END, ScanBy="TimestampAscending")
    assert "NextToken" not in full
    expected = {r["Id"]: r["Values"] for r in full["MetricDataResults"]}
    assert [len(v) for v in expected.values()] == [120, 120, 120]

    collected: dict[str, list[float]] = {}
    kwargs: dict[str, Any] = {}
    pages = 0
    while True:
        resp = cw.get_metric_data(
            MetricDataQueries=queries,
            StartTime=start,
            EndTime=END,
            MaxDatapoints=100,
            ScanBy="TimestampAscending",
            **kwargs,
        )
        pages += 1
        assert sum(len(r["Values"]) for r in resp["MetricDataResults"]) <= 100
        for r in resp["MetricDataResults"]:
            collected.setdefault(r["Id"], []).extend(r["Values"])
        if "NextToken" not in resp:
            break
        # a result cut by the page is PartialData; its rest comes first on the next page
        assert resp["MetricDataResults"][-1]["StatusCode"] == "PartialData"
        kwargs = {"NextToken": resp["NextToken"]}
    assert pages == 4
    assert collected == expected

    # the default MaxDatapoints (100,800) pages too, and boto3's paginator follows the token
    aws.seed_metrics(
        MetricPoint(NS, "ModelLatency", {"EndpointName": f"ep{e}"}, start + timedelta(minutes=m), 1.0)
        for e in range(15)
        for m in range(7200)
    )
    minutely = [
        _query(f"m{e}", "Maximum", {"EndpointName": f"ep{e}"}, period=60, name="ModelLatency") for e in range(15)
    ]
    page_sizes = [
        sum(len(r["Values"]) for r in page["MetricDataResults"])
        for page in cw.get_paginator("get_metric_data").paginate(
            MetricDataQueries=minutely, StartTime=start, EndTime=END
        )
    ]
    assert page_sizes == [100_800, 15 * 7200 - 100_800]

    with pytest.raises(ClientError) as err:
        cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=END, NextToken="bogus")
    assert err.value.response["Error"]["Code"] == "InvalidNextToken"


# --- faults ---------------------------------------------------------------------------------------


def test_throttling_fault_then_standard_retry_succeeds(aws: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    # standard mode as in production, minus the randomized backoff sleeps (up to 1 s, 2 s, ...)
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.0)
    aws.seed_metrics([MetricPoint(NS, "CPUUtilization", DIMS, END - timedelta(minutes=30), 7.0)])
    aws.inject_fault("cloudwatch", "GetMetricData", "Throttling", "Rate exceeded", times=2)
    cw = _client("cloudwatch", config=Config(retries={"mode": "standard", "total_max_attempts": 3}))
    resp = cw.get_metric_data(
        MetricDataQueries=[_query("q", "Average", DIMS)], StartTime=END - timedelta(hours=1), EndTime=END
    )
    assert resp["MetricDataResults"][0]["Values"] == [7.0]
    assert resp["ResponseMetadata"]["RetryAttempts"] == 2
    assert aws.fault_hits() == {"cloudwatch.GetMetricData": 2}

    aws.inject_fault("cloudwatch", "GetMetricData", "Throttling", "Rate exceeded", times=3)
    with pytest.raises(ClientError) as err:
        cw.get_metric_data(
            MetricDataQueries=[_query("q", "Average", DIMS)], StartTime=END - timedelta(hours=1), EndTime=END
        )
    assert err.value.response["Error"]["Code"] == "Throttling"
    assert err.value.response["Error"]["Message"] == "Rate exceeded"
    assert aws.fault_hits() == {"cloudwatch.GetMetricData": 5}
    cw.list_metrics()  # other operations are untouched
    with pytest.raises(ValueError, match="no operation"):
        aws.inject_fault("cloudwatch", "GetMetricsData", "Throttling")  # a typo would otherwise never fire


@pytest.mark.parametrize(
    ("service", "operation", "call", "code", "status"),
    [
        (
            "ce",
            "GetCostAndUsage",
            lambda c: c.get_cost_and_usage(
                TimePeriod={"Start": "2026-11-01", "End": "2026-11-02"}, Granularity="DAILY", Metrics=["UnblendedCost"]
            ),
            "LimitExceededException",
            400,
        ),
        ("ec2", "DescribeInstances", lambda c: c.describe_instances(), "RequestLimitExceeded", 503),
        ("sagemaker", "ListEndpoints", lambda c: c.list_endpoints(), "ThrottlingException", 400),
        (
            "sesv2",
            "SendEmail",
            lambda c: c.send_email(
                FromEmailAddress="a@example.com",
                Destination={"ToAddresses": ["b@example.com"]},
                Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}}},
            ),
            "TooManyRequestsException",
            429,
        ),
        ("batch", "DescribeJobs", lambda c: c.describe_jobs(jobs=["x"]), "ServerException", 500),
    ],
)
def test_faults_serialize_for_every_protocol(
    aws: Emulator, service: str, operation: str, call: Any, code: str, status: int
) -> None:
    aws.inject_fault(service, operation, code, "nope", status=status)
    client = _client(service, config=NO_RETRY)
    with pytest.raises(ClientError) as err:
        call(client)
    assert err.value.response["Error"]["Code"] == code
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert aws.fault_hits() == {f"{service}.{operation}": 1}


# --- Cost Explorer, Batch, SES --------------------------------------------------------------------


def test_cost_and_usage_pages_follow_next_page_token(aws: Emulator) -> None:
    def page(day: str, amount: str, token: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ResultsByTime": [
                {
                    "TimePeriod": {"Start": day, "End": day},
                    "Total": {},
                    "Estimated": False,
                    "Groups": [
                        {"Keys": ["Amazon SageMaker"], "Metrics": {"UnblendedCost": {"Amount": amount, "Unit": "USD"}}}
                    ],
                }
            ],
            "GroupDefinitions": [{"Type": "DIMENSION", "Key": "SERVICE"}],
            "DimensionValueAttributes": [],
        }
        if token:
            body["NextPageToken"] = token
        return body

    aws.inject_cost_and_usage([page("2026-11-01", "12.50", "tok-2"), page("2026-11-02", "7.25", None)])
    ce = _client("ce")
    amounts: list[str] = []
    kwargs: dict[str, Any] = {}
    while True:
        resp = ce.get_cost_and_usage(
            TimePeriod={"Start": "2026-11-01", "End": "2026-11-03"},
            Granularity="DAILY",
            Metrics=["UnblendedCost"],
            GroupBy=[{"Type": "DIMENSION", "Key": "SERVICE"}],
            **kwargs,
        )
        amounts += [g["Metrics"]["UnblendedCost"]["Amount"] for r in resp["ResultsByTime"] for g in r["Groups"]]
        if "NextPageToken" not in resp:
            break
        kwargs = {"NextPageToken": resp["NextPageToken"]}
    assert amounts == ["12.50", "7.25"]
    aws.reset()
    assert (
        _client("ce").get_cost_and_usage(
            TimePeriod={"Start": "2026-11-01", "End": "2026-11-03"}, Granularity="DAILY", Metrics=["UnblendedCost"]
        )["ResultsByTime"]
        == []
    )


def test_batch_jobs_succeed_without_docker(aws: Emulator) -> None:
    iam = _client("iam")
    role = iam.create_role(
        RoleName="batch", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []})
    )["Role"]["Arn"]
    batch = _client("batch")
    env_arn = batch.create_compute_environment(computeEnvironmentName="neuron", type="UNMANAGED", serviceRole=role)[
        "computeEnvironmentArn"
    ]
    queue = batch.create_job_queue(
        jobQueueName="q",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": env_arn}],
    )
    batch.register_job_definition(
        jobDefinitionName="scan",
        type="container",
        containerProperties={
            "image": "chipwise:latest",
            "vcpus": 1,
            "memory": 512,
            "command": ["true"],
            "linuxParameters": {"devices": [{"hostPath": "/dev/neuron0"}]},
        },
    )
    job_id = batch.submit_job(jobName="scan-1", jobQueue=queue["jobQueueArn"], jobDefinition="scan")["jobId"]
    deadline = time.monotonic() + 5
    while (status := batch.describe_jobs(jobs=[job_id])["jobs"][0]["status"]) not in ("SUCCEEDED", "FAILED"):
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    assert status == "SUCCEEDED"


def test_sent_emails_v1_and_v2(aws: Emulator) -> None:
    ses = _client("ses")
    ses.verify_email_identity(EmailAddress="finops@example.com")
    ses.send_email(
        Source="finops@example.com",
        Destination={"ToAddresses": ["team@example.com"], "CcAddresses": ["lead@example.com"]},
        Message={
            "Subject": {"Data": "Weekly idle Inferentia report"},
            "Body": {"Html": {"Data": "<h1>3 idle endpoints</h1>"}},
        },
    )
    raw = MIMEMultipart("alternative")
    raw["Subject"] = "Raw report"
    raw["From"] = "finops@example.com"
    raw["To"] = "ops@example.com"
    raw.attach(MIMEText("plain body", "plain"))
    raw.attach(MIMEText("<p>html body</p>", "html"))
    _client("sesv2").send_email(
        FromEmailAddress="finops@example.com",
        Destination={"ToAddresses": ["ops@example.com"]},
        Content={"Raw": {"Data": raw.as_bytes()}},
    )
    mails = aws.sent_emails()
    assert len(mails) == 2
    simple, rawmail = mails
    assert simple["source"] == "finops@example.com"
    assert simple["subject"] == "Weekly idle Inferentia report"
    assert simple["body"] == "<h1>3 idle endpoints</h1>"
    assert simple["destinations"]["ToAddresses"] == ["team@example.com"]
    assert (simple["account_id"], simple["region"]) == ("123456789012", "us-east-1")
    assert rawmail["subject"] == "Raw report"
    assert rawmail["body"] == "<p>html body</p>"
    assert "ops@example.com" in rawmail["destinations"]
    assert "multipart/alternative" in rawmail["raw_data"]
    aws.reset()
    assert aws.sent_emails() == []


def test_list_metrics_lists_each_series_once(aws: Emulator) -> None:
    # Given two GPUs of one instance with a day of hourly points each (3 dimensions: stock moto repeats them)
    start = END - timedelta(days=1)
    aws.seed_metrics(
        MetricPoint(
            "CWAgent",
            "nvidia_smi_utilization_gpu",
            {"InstanceId": "i-1", "index": str(g), "name": "A10G"},
            start + timedelta(hours=h),
            50.0,
        )
        for g in range(2)
        for h in range(24)
    )
    # When the series are listed, filtered by one dimension
    pages = (
        _client("cloudwatch")
        .get_paginator("list_metrics")
        .paginate(
            Namespace="CWAgent",
            MetricName="nvidia_smi_utilization_gpu",
            Dimensions=[{"Name": "InstanceId", "Value": "i-1"}],
        )
    )
    metrics = [m for page in pages for m in page["Metrics"]]
    # Then each series appears once
    assert sorted(next(d["Value"] for d in m["Dimensions"] if d["Name"] == "index") for m in metrics) == ["0", "1"]
    assert (
        _client("cloudwatch").list_metrics(Namespace="CWAgent", Dimensions=[{"Name": "InstanceId", "Value": "i-2"}])[
            "Metrics"
        ]
        == []
    )
