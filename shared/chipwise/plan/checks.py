"""Answers that cannot all be true: the plan flags them, lowers its confidence and asks the founder to check.

Two checks, each only on what the founder stated (never on a default the planner filled in):

* the model does not fit the stated fleet: its weights alone (parameters x the serving bytes per parameter, no
  headroom) exceed the accelerator memory of all the stated instances together (the most generous reading: a model
  split across every instance);
* the stated fleet cannot serve the stated traffic: requests a second above instances x throughput per instance.
"""

from __future__ import annotations

from decimal import Decimal

from chipwise.analyse import sizing
from chipwise.plan.context import Context, plain
from chipwise.plan.inputs import Inputs


def conflicts(inp: Inputs, ctx: Context) -> list[str]:
    """What in the workload's answers contradicts itself, in words addressed to the founder."""
    w = inp.workload
    found: list[str] = []
    fleet = f"{inp.count} × {inp.current.name}"
    memory = inp.current.accelerator_memory_gib * inp.count
    if w.parameters_billion is not None and w.current_instance_type is not None and memory > 0:
        weights = sizing.replica_memory_gib(
            w.parameters_billion, ctx.planning("inference_bytes_per_parameter"), Decimal(1)
        )
        if weights > memory:
            found.append(
                f"A {plain(w.parameters_billion)}B-parameter model needs about {weights:,.0f} GiB of accelerator "
                f"memory for its weights alone, more than the {memory:,.0f} GiB of the {fleet} stated as running it "
                f"today ({plain(inp.current.accelerator_memory_gib)} GiB each): the model size, the instance type or "
                "the count cannot be right, and the plan rests on all three."
            )
    if (
        w.instance_count is not None
        and inp.demand_rps is not None
        and inp.throughput is not None
        and inp.demand_rps > inp.throughput * inp.count
    ):
        capacity = inp.throughput * inp.count
        found.append(
            f"{inp.demand_rps.quantize(Decimal('0.1'))} requests/s is more than the {fleet} stated can serve at "
            f"{plain(inp.throughput)} requests/s each ({plain(capacity)} requests/s in all): the requests a day, the "
            "throughput per instance or the count cannot be right, and the fleet is sized from them."
        )
    return found
