"""The demo account's bill as AWS Data Exports would deliver it (CUR 2.0): the same resources and hours as its
Cost Explorer data, line item by line item, with what only the bill shows: the Savings Plan covering the trn1
instance (its recurring fee, negations and unused commitment), one GPU box on Spot, cost allocation tags with a
team, an EKS pod's split cost on its Neuron node, credits and tax.

Like a real bill it also has a line for every other resource that ran in the covered days (the demo's Cost Explorer
data leaves them out): the notebook instance (``Notebk``), the Studio app (``Studio:JupyterLab-<type>``), the unused
capacity reservation (``UnusedBox``, by its ARN) and the instance the Batch warm pool keeps running (``BoxUsage``, by
its instance id: a compute environment is never billed on its own ARN). Two resources have no line on purpose and
the ledger lists them as not in the bill with the likely reason: the Capacity Block (its fee is paid up front, once)
and the HyperPod cluster (created after the export's last day, as the emulator's launch time says)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from chipwise.catalog import get_catalog
from chipwise_devkit.bill_export import Line, write_export
from chipwise_devkit.demo.account import DemoResource, amortized_share, demo_resources
from chipwise_devkit.demo.seed import COST_DAYS, SeededAccount, _hours_per_day, billed_rate

EXPORT_NAME = "chipwise-cur"
BILLED_KINDS = ("ec2_instance", "sagemaker_endpoint", "sagemaker_training_job")  # as seed.py's Cost Explorer lines
BILL_BUCKET = "chipwise-demo-bills"
BILL_PREFIX = "cur"
SPOT_RESOURCE = "gpu-notebook-g5-idle"  # this g5.xlarge runs on Spot in the bill
SPOT_SHARE = Decimal("0.35")  # Spot price ÷ on-demand for it (demo)
SP_COMMITMENT_HEADROOM = Decimal("1.08")  # the plan commits 8 % more per hour than the covered usage needs (demo)
SP_END = "2027-08-31T23:59:59.000Z"
SP_START = "2024-09-01T00:00:00.000Z"  # the Compute plan: 3 years, No Upfront
# The EC2 Instance Savings Plan on g6 in us-east-1: 1 year, No Upfront, bought 2 months ago, exactly the box's hours
ISP_START, ISP_END = "2026-09-30T00:00:00.000Z", "2027-09-29T23:59:59.000Z"
POD_SHARE = Decimal("0.6")  # the inference pod's split of its EKS node (the rest is the node's unused cost)
TEAMS = {"training": "research", "inference": "ml-platform"}  # cost allocation tag user:team, by workload (demo)
# What the account pays an hour for its idle Bedrock provisioned throughput (2 model units, a one-month commitment):
# a model unit has no public price, so its bill is its price (demo figure: $30.25 per model-unit hour).
BEDROCK_PT_RESOURCE = "support-llama-70b-pt"
BEDROCK_PT_HOURLY = Decimal("60.50")


def _tags(res: DemoResource) -> dict[str, str]:
    """The resource's cost allocation tags as the bill carries them (user-defined: ``user:``)."""
    team = res.tags.get("team") or TEAMS.get(res.tags.get("chipwise:workload", ""))
    tags = {f"user:{k}": v for k, v in res.tags.items() if not k.startswith(("chipwise:", "eks:"))}
    if team:
        tags["user:team"] = team
    return tags


def _resource_id(res: DemoResource, seeded: SeededAccount) -> str:
    return seeded.instance_ids.get(res.name) or seeded.arns[res.name]


def _usage_type(res: DemoResource, spot: bool) -> tuple[str, str]:
    if res.kind == "ec2_instance":
        return "AmazonEC2", f"USE1-{'SpotUsage' if spot else 'BoxUsage'}:{res.instance_type}"
    if res.kind == "sagemaker_endpoint":
        return "AmazonSageMaker", f"USE1-Host:{res.instance_type}"
    return "AmazonSageMaker", f"USE1-Train:{res.instance_type}"


def _terms(compute: bool) -> dict[str, Any]:
    """A plan's terms as CUR 2.0 carries them on its lines: a Compute plan names no family and no Region."""
    if compute:
        return {"sp_offering_type": "ComputeSavingsPlans", "sp_end_time": SP_END, "sp_start_time": SP_START}
    return {"sp_offering_type": "EC2InstanceSavingsPlans", "sp_family": "g6", "sp_region": "us-east-1",
            "sp_end_time": ISP_END, "sp_start_time": ISP_START}  # fmt: skip


def _plan(res: DemoResource, account: str) -> tuple[str, dict[str, Any]] | None:
    """The ARN and terms of the plan covering the resource, if any."""
    if res.savings_plan:
        return f"arn:aws:savingsplans::{account}:savingsplan/5f3c1d2e-demo-trn1", _terms(True)
    if res.instance_savings_plan:
        return f"arn:aws:savingsplans::{account}:savingsplan/8a1b2c3d-demo-g6", _terms(False)
    return None


def demo_bill_lines(seeded: SeededAccount) -> list[Line]:
    """Daily line items over the demo's cost window (the days its Cost Explorer data covers)."""
    catalog = get_catalog()
    account = seeded.account_id
    sp_arn = f"arn:aws:savingsplans::{account}:savingsplan/5f3c1d2e-demo-trn1"
    today = seeded.now.date()
    days = [today - timedelta(days=COST_DAYS - i) for i in range(COST_DAYS)]
    lines: list[Line] = []
    covered_by_day: dict[tuple[str, datetime], Decimal] = defaultdict(Decimal)
    for res in demo_resources():
        if res.kind not in BILLED_KINDS:
            continue  # held capacity, notebooks, clusters, Batch: the same kinds the demo's Cost Explorer data has
        rate = billed_rate(res.instance_type, catalog)
        spot = res.name == SPOT_RESOURCE
        service, usage_type = _usage_type(res, spot)
        resource_id = _resource_id(res, seeded)
        for day, hours in _hours_per_day(res, seeded.now, days).items():
            if not hours:
                continue
            start = datetime.combine(day, datetime.min.time())
            public = rate * hours
            common: dict[str, Any] = {
                "usage_type": usage_type,
                "resource_id": resource_id,
                "product_code": service,
                "hours": float(hours),
                "public_on_demand_rate": float(rate),
                "public_on_demand_cost": float(public),
                "tags": _tags(res),
            }
            plan = _plan(res, account)
            if plan is not None:
                arn, terms = plan
                effective = public * amortized_share(res)
                covered_by_day[(arn, start)] += effective
                lines.append(Line(account, "SavingsPlanCoveredUsage", start, unblended_cost=float(public),
                                  pricing_term="OnDemand", sp_arn=arn, sp_effective_cost=float(effective),
                                  **terms, **common))  # fmt: skip
                lines.append(Line(account, "SavingsPlanNegation", start, usage_type, resource_id, service,
                                  unblended_cost=float(-public), sp_arn=arn))  # fmt: skip
            elif spot:
                lines.append(Line(account, "Usage", start, unblended_cost=float(public * SPOT_SHARE),
                                  pricing_term="Spot", **common))  # fmt: skip
            else:
                lines.append(Line(account, "Usage", start, unblended_cost=float(public), pricing_term="OnDemand",
                                  **common))  # fmt: skip
            if res.eks_cluster:  # split cost allocation: the pod's share of the node, named by its parent
                pod = f"arn:aws:eks:us-east-1:{account}:pod/{res.eks_cluster}/default/bert-ner-0/7c9e1f"
                lines.append(Line(account, "Usage", start, usage_type, pod, service, hours=float(hours),
                                  unblended_cost=float(public), public_on_demand_rate=float(rate),
                                  public_on_demand_cost=float(public), split_parent=resource_id,
                                  split_cost=float(public * POD_SHARE), split_usage=float(hours * POD_SHARE),
                                  split_public_cost=float(public * POD_SHARE),
                                  tags={"user:team": "search"}))  # fmt: skip
    lines += _bedrock_lines(seeded, days)
    lines += held_lines(seeded, days)
    for (arn, start), covered in sorted(covered_by_day.items()):
        compute = arn == sp_arn
        committed = covered * SP_COMMITMENT_HEADROOM if compute else covered
        fee_type = "ComputeSP:3yrNoUpfront" if compute else "EC2InstanceSP:1yrNoUpfront"
        terms = _terms(compute)
        lines.append(Line(account, "SavingsPlanRecurringFee", start, fee_type, arn, str(terms["sp_offering_type"]),
                          hours=24.0, unblended_cost=float(committed), sp_arn=arn,
                          sp_total_commitment=float(committed), sp_used_commitment=float(covered),
                          **terms))  # fmt: skip
        if compute:
            lines.append(Line(account, "Tax", start, product_code="AmazonEC2", region="", unblended_cost=12.5))
    lines.append(Line(account, "Credit", datetime.combine(days[0], datetime.min.time()), product_code="AmazonEC2",
                      unblended_cost=-250.0))  # fmt: skip
    return lines


def held_lines(seeded: SeededAccount, days: list[date]) -> list[Line]:
    """Daily on-demand lines of the resources the demo's Cost Explorer data omits: notebooks, Studio apps, unused
    capacity reservations (not a Capacity Block: paid up front) and the instances a Batch warm pool keeps running.
    Usage types as the project's ``usage_types.json`` cites them (Notebk, Studio, UnusedBox, BoxUsage)."""
    catalog = get_catalog()
    lines: list[Line] = []
    for res in demo_resources():
        billed: list[tuple[str, str, str]] = []  # (service, usage type, resource id)
        if res.kind == "sagemaker_notebook_instance":
            billed = [("AmazonSageMaker", f"USE1-Notebk:{res.instance_type}", seeded.arns[res.name])]
        elif res.kind == "sagemaker_studio_app":
            billed = [("AmazonSageMaker", f"USE1-Studio:JupyterLab-{res.instance_type}", seeded.arns[res.name])]
        elif res.kind == "ec2_capacity_reservation" and not res.capacity_block:
            billed = [("AmazonEC2", f"USE1-UnusedBox:{res.instance_type}", seeded.arns[res.name])]
        elif res.kind == "batch_compute_environment":
            billed = [("AmazonEC2", f"USE1-BoxUsage:{res.instance_type}", i) for i in seeded.launched.get(res.name, [])]
        count = res.count if res.kind == "ec2_capacity_reservation" else 1
        rate = billed_rate(res.instance_type, catalog)
        for service, usage_type, resource_id in billed:
            for day in days:
                hours = Decimal(24 * count)
                lines.append(Line(seeded.account_id, "Usage", datetime.combine(day, datetime.min.time()), usage_type,
                                  resource_id, service, hours=float(hours), unblended_cost=float(rate * hours),
                                  pricing_term="OnDemand", public_on_demand_rate=float(rate),
                                  public_on_demand_cost=float(rate * hours), tags=_tags(res)))  # fmt: skip
    return lines


def _bedrock_lines(seeded: SeededAccount, days: list[date]) -> list[Line]:
    """The provisioned throughput's daily usage: model-unit hours at what the account pays (no public price)."""
    res = next((r for r in demo_resources() if r.name == BEDROCK_PT_RESOURCE), None)
    if res is None or res.name not in seeded.arns:
        return []
    unit_rate = BEDROCK_PT_HOURLY / res.count
    hours = Decimal(24 * res.count)
    return [
        Line(
            seeded.account_id,
            "Usage",
            datetime.combine(day, datetime.min.time()),
            "USE1-ProvisionedThroughput-ModelUnits",
            seeded.arns[res.name],
            "AmazonBedrock",
            hours=float(hours),
            unblended_cost=float(unit_rate * hours),
            pricing_term="OnDemand",
            public_on_demand_rate=float(unit_rate),
            public_on_demand_cost=float(unit_rate * hours),
            tags=_tags(res),
        )
        for day in days
    ]


def write_demo_export(seeded: SeededAccount, root: Path) -> Path:
    """The export under ``root/chipwise-cur/``, one delivery per billing period the window touches."""
    by_period: dict[str, list[Line]] = defaultdict(list)
    for line in demo_bill_lines(seeded):
        by_period[line.start.strftime("%Y-%m")].append(line)
    for period, lines in sorted(by_period.items()):
        write_export(root, EXPORT_NAME, period, lines, bucket=BILL_BUCKET, prefix=BILL_PREFIX)
    return root / EXPORT_NAME
