"""Profiles from the store: the account's effective rate, signals by meaning, telemetry missing vs idle, run
hours; built with the same few statements whatever the number of resources."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from analyse_factories import (
    HOURS,
    NOW,
    REGION,
    WINDOW_END,
    WINDOW_START,
    add_account,
    add_cost,
    add_coverage,
    add_neuron,
    add_resource,
    add_rollups,
    neuron_rows,
    rollup_rows,
)
from sqlalchemy.orm import Session

from chipwise.analyse.metric_keys import (
    CWAGENT_GPU,
    EKS_GPU,
    EKS_GPU_MEMORY,
    EKS_GPU_REQUESTED,
    EKS_NEURONCORE,
    INVOCATIONS,
    METRIC_SOURCE_ORDER,
    NEURON_CORE,
    NEURON_MONITOR,
    OTEL_GPU,
    OTEL_GPU_MEMORY,
    OTEL_GPU_POWER,
    OTEL_NEURONCORE,
    TRAINING_GPU,
)
from chipwise.analyse.profile_builder import build_profiles
from chipwise.analyse.profiles import ResourceProfile
from chipwise.catalog import get_catalog
from chipwise.store.repositories.profile_inputs import ProfileInputRepository

GIB = 2**30


def _profiles(session: Session) -> dict[str, ResourceProfile]:
    found = build_profiles(
        ProfileInputRepository(session, account_id="123456789012", region=REGION),
        start=WINDOW_START,
        end=WINDOW_END,
        catalog=get_catalog(),
    )
    return {p.name: p for p in found}


def test_the_effective_rate_comes_from_cost_explorer_else_the_catalog(session: Session) -> None:
    # Given a trn1.2xlarge under a Savings Plan (amortized 72 % of unblended) and a g5.xlarge CE never billed
    add_account(session)
    add_resource(session, "sp", instance_type="trn1.2xlarge", platform="trainium")
    add_resource(session, "gpu", instance_type="g5.xlarge", platform="nvidia")
    for offset in range(3):
        day = (NOW - timedelta(days=offset + 1)).date()
        add_cost(session, day, "BoxUsage:trn1.2xlarge", "trn1.2xlarge", "32.25", "23.22", "24")
    add_cost(session, (NOW - timedelta(days=40)).date(), "BoxUsage:g5.xlarge", "g5.xlarge", "1", "1", "1")  # old
    # When the profiles are built
    profiles = _profiles(session)
    # Then the trn1 pays 69.66 / 72 h = $0.9675/h with a 28 % commitment discount; the g5 the catalog's $1.006
    sp, gpu = profiles["sp"].cost, profiles["gpu"].cost
    assert (sp.hourly_rate, sp.rate_source, sp.commitment_discount) == (
        Decimal("0.967500"),
        "cost_explorer",
        Decimal("0.280000"),
    )
    assert sp.commitment_covered and sp.catalog_rate == Decimal("1.343750")
    assert (gpu.hourly_rate, gpu.rate_source, gpu.commitment_covered) == (Decimal("1.006000"), "catalog", False)
    assert profiles["sp"].monthly_cost == Decimal("706.28")


def test_signals_are_read_by_meaning_whatever_their_source(session: Session) -> None:
    # Given an endpoint with invocations, an EC2 GPU box with the CloudWatch agent, an EC2 inf2 reporting to S3
    # through two runtimes, and an EKS node with Container Insights only
    add_account(session)
    endpoint = add_resource(
        session,
        "ep",
        kind="sagemaker_endpoint",
        instance_type="ml.inf2.xlarge",
        state="InService",
        details={"variants": [{"variant_name": "AllTraffic", "instance_type": "ml.inf2.xlarge"}]},
    )
    gpu = add_resource(session, "gpu", instance_type="g5.xlarge", platform="nvidia")
    add_resource(session, "inf", instance_type="inf2.24xlarge")
    eks = add_resource(session, "eks", details={"eks_cluster": "prod"})
    add_rollups(session, rollup_rows(endpoint, INVOCATIONS, [None, 100.0, None, 300.0], column="sum"))
    add_coverage(session, endpoint, INVOCATIONS, True, 2)
    add_rollups(session, rollup_rows(gpu, CWAGENT_GPU, [10.0, 90.0, 20.0]))
    add_neuron(session, neuron_rows("i-inf", [30.0, 20.0], memory=18 * GIB, executions=12, cores=6))
    # a row an earlier version wrote per runtime: not read (the instance rows already combine the runtimes)
    add_neuron(session, neuron_rows("i-inf", [99.0, 99.0], tag="bert", memory=99 * GIB, executions=99, cores=9))
    add_neuron(session, neuron_rows("i-other", [99.0]))  # an instance the inventory does not know
    add_rollups(session, rollup_rows(eks, EKS_NEURONCORE, [40.0, 60.0]))
    # When the profiles are built
    p = _profiles(session)
    # Then requests are the hourly sums (absent hours are no traffic), the GPU is the busiest GPU,
    # the S3 instance rows give busiest core, memory and executions (per-runtime rows ignored), EKS counts as Neuron
    invocations = p["ep"].signals.invocations
    assert invocations is not None and (invocations.total, invocations.hours, invocations.maximum) == (400, 2, 300)
    assert p["gpu"].signals.gpu_util is not None and p["gpu"].signals.gpu_util.maximum == 90.0
    assert p["gpu"].signals.gpu_source == "CWAgent"
    inf = p["inf"].signals
    assert inf.neuron_source == "neuron-monitor" and inf.neuron_cores_in_use == 6
    assert inf.neuron_util is not None and [v for _, v in inf.neuron_util.peaks] == [20.0, 30.0]
    assert inf.neuron_memory_bytes is not None and inf.neuron_memory_bytes.maximum == 18 * GIB
    assert inf.neuron_executions is not None and inf.neuron_executions.total == 24
    assert p["eks"].signals.neuron_source == "ContainerInsights" and p["eks"].neuron_telemetry == "present"


def test_an_eks_gpu_node_reads_container_insights_and_the_cloudwatch_agent_comes_first(session: Session) -> None:
    # Given an EKS GPU node with Container Insights only, and one with both the CloudWatch agent and Container Insights
    add_account(session)
    only = add_resource(session, "ci-only", instance_type="g5.12xlarge", platform="nvidia")
    both = add_resource(session, "both", instance_type="g5.12xlarge", platform="nvidia")
    add_rollups(session, rollup_rows(only, EKS_GPU, [0.0, 2.0]))
    add_rollups(session, rollup_rows(only, EKS_GPU_MEMORY, [1.0, 1.0]))
    add_rollups(session, rollup_rows(only, EKS_GPU_REQUESTED, [0.0, 0.0]))
    add_rollups(session, rollup_rows(both, EKS_GPU, [50.0]))
    add_rollups(session, rollup_rows(both, CWAGENT_GPU, [70.0]))
    # When the profiles are built
    p = _profiles(session)
    # Then the node's GPU, memory and pods' GPUs come from Container Insights; the agent answers first where it runs
    ci = p["ci-only"].signals
    assert (ci.gpu_source, ci.gpu_memory_source) == ("ContainerInsights", "ContainerInsights")
    assert ci.gpu_util is not None and ci.gpu_util.maximum == 2.0
    assert ci.gpus_requested is not None and ci.gpus_requested.maximum == 0.0
    assert p["both"].signals.gpu_source == "CWAgent"
    assert METRIC_SOURCE_ORDER.index("CWAgent") < METRIC_SOURCE_ORDER.index("ContainerInsights")


def test_an_eks_node_on_otel_container_insights_reads_the_dcgm_and_neuron_monitor_rows(session: Session) -> None:
    # Given EKS nodes whose cluster runs OTel Container Insights: DCGM and neuron-monitor rows, no classic ones
    add_account(session)
    gpu = add_resource(session, "otel-gpu", instance_type="g6.xlarge", platform="nvidia")
    neuron = add_resource(session, "otel-neuron", instance_type="inf2.xlarge", platform="inferentia")
    add_rollups(session, rollup_rows(gpu, OTEL_GPU, [0.0, 3.0]))
    add_rollups(session, rollup_rows(gpu, OTEL_GPU_MEMORY, [40.0, 41.0]))
    add_rollups(session, rollup_rows(gpu, OTEL_GPU_POWER, [16.0]))
    add_rollups(session, rollup_rows(neuron, OTEL_NEURONCORE, [64.0]))
    # When the profiles are built
    p = _profiles(session)
    # Then they are read as the classic Container Insights signals are (telemetry, not "no telemetry")
    g = p["otel-gpu"].signals
    assert (g.gpu_source, g.gpu_memory_source) == ("ContainerInsights/OTel", "ContainerInsights/OTel")
    assert g.gpu_util is not None and g.gpu_util.maximum == 3.0
    assert g.gpu_memory_util is not None and g.gpu_memory_util.maximum == 41.0
    assert g.gpu_power_watts is not None and g.gpu_power_watts.maximum == 16.0
    n = p["otel-neuron"].signals
    assert n.neuron_source == "ContainerInsights/OTel" and n.neuron_util is not None and n.neuron_util.maximum == 64.0
    assert METRIC_SOURCE_ORDER.index("ContainerInsights") < METRIC_SOURCE_ORDER.index("ContainerInsights/OTel")


def test_missing_telemetry_is_told_apart_from_unchecked_telemetry(session: Session) -> None:
    # Given one instance whose Neuron sources were checked and had nothing, and one never checked
    add_account(session)
    checked = add_resource(session, "checked")
    add_resource(session, "unchecked")
    add_coverage(session, checked, NEURON_CORE, False, 0)
    add_coverage(session, checked, NEURON_MONITOR, False, 0)
    # When the profiles are built
    profiles = _profiles(session)
    # Then one is "missing" (install the agent) and the other "unknown" (say nothing)
    assert profiles["checked"].neuron_telemetry == "missing"
    assert profiles["unchecked"].neuron_telemetry == "unknown"


def test_run_hours_start_at_the_first_sign_of_life_and_training_jobs_at_their_run(session: Session) -> None:
    # Given an instance launched 3 days ago (data since then), one whose launch time was reset today but that
    # has metrics for the whole window, and a training job with GPU metrics for 36 hours
    add_account(session)
    fresh = add_resource(
        session, "fresh", instance_type="g5.xlarge", platform="nvidia", launched_at=NOW - timedelta(days=3)
    )
    restarted = add_resource(
        session, "restarted", instance_type="g5.xlarge", platform="nvidia", launched_at=NOW + timedelta(minutes=5)
    )
    job = add_resource(
        session,
        "job",
        kind="sagemaker_training_job",
        instance_type="ml.p4d.24xlarge",
        platform="nvidia",
        state="Completed",
        count=2,
        details={"training_start": NOW.isoformat(), "training_end": NOW.isoformat()},
    )
    add_rollups(session, rollup_rows(fresh, CWAGENT_GPU, [50.0] * 72))
    add_rollups(session, rollup_rows(restarted, CWAGENT_GPU, [50.0] * HOURS))
    add_rollups(session, rollup_rows(job, TRAINING_GPU, [500.0] * 36 + [None] * 30))
    # When the profiles are built
    p = _profiles(session)
    # Then the run is 72 h, the whole window (336 h) and the job's 36 h; the job is not live
    assert (p["fresh"].run_hours, p["restarted"].run_hours, p["job"].run_hours) == (72.0, float(HOURS), 36.0)
    assert not p["job"].live and p["fresh"].live


def test_only_live_accelerated_resources_of_the_account_and_region_in_the_window(session: Session) -> None:
    # Given CPU, gone, other-region and other-account resources, and rollups outside the window
    add_account(session)
    add_account(session, "210987654321")
    kept = add_resource(session, "kept")
    add_resource(session, "web", instance_type="m5.large", platform="cpu")
    add_resource(session, "deleted", state="gone")
    add_resource(session, "west", region="us-west-2")
    add_resource(session, "theirs", account_id="210987654321")
    add_rollups(session, rollup_rows(kept, NEURON_CORE, [70.0, 80.0], end=WINDOW_START))  # just before
    add_rollups(session, rollup_rows(kept, NEURON_CORE, [5.0], end=WINDOW_END + timedelta(hours=2)))  # after
    add_rollups(session, rollup_rows(kept, NEURON_CORE, [3.0, 4.0]))
    # When the profiles are built
    profiles = _profiles(session)
    # Then only "kept" is profiled, from its two hours inside [start, end)
    assert set(profiles) == {"kept"}
    util = profiles["kept"].signals.neuron_util
    assert util is not None and (util.hours, util.maximum) == (2, 4.0)
