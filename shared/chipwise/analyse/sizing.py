"""The one sizing engine: which accelerator instance (and how many) holds a model and carries its load most cheaply,
and the Neuron software the target runs. The scan's rules and the founder's plan both size fleets here.

A fleet is sized from a :class:`Need`: the accelerator memory one instance must hold (a model replica with the
memory headroom) and the load it must carry, in one of three units: NeuronCores, accelerator chips of the target
family, or A10G-equivalents (the GPU of the g5, the unit the economics' throughput ratios are stated in). The
caller adds its own headroom to the load (the rules the core headroom, the planner the traffic's peak).

Throughput of one chip in A10G-equivalents (:func:`chip_units`): a GPU by memory bandwidth
(``gpu_throughput.json``), an Inferentia2 or Trainium chip the economics' Inferentia2-vs-g5 ratio, an Inferentia1
chip that ratio over Inferentia2's gain on Inferentia1 (its representative value: the estimate errs towards more
Inferentia1 chips, so a smaller saving).

Pure: functions of the catalog, the economics figures and the software data; no I/O beyond the cached data files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from chipwise.analyse.accelerators import get_gpu_throughput
from chipwise.catalog import Assumptions, Catalog, InstanceType, SoftwareStatus, get_neuron_software
from chipwise.catalog.instance_data import family_of
from chipwise.economics import monthly_cost

GIB = Decimal(2**30)
BILLION = Decimal(1_000_000_000)
ONE = Decimal(1)


@dataclass(frozen=True)
class Need:
    """What one fleet must provide: ``memory_gib`` on every instance, and the load (headroom included) in
    NeuronCores, target chips or A10G-equivalents, all instances together. No load: one instance."""

    memory_gib: Decimal
    cores: Decimal | None = None
    chips: Decimal | None = None
    a10g_units: Decimal | None = None


@dataclass(frozen=True)
class Fit:
    """A target: ``count`` instances of ``instance``."""

    instance: InstanceType
    count: int
    hourly_usd: Decimal  # all instances

    @property
    def monthly_usd(self) -> Decimal:
        """Always on (the economics' hours a month)."""
        return monthly_cost(self.hourly_usd)

    def cost(self, hours: Decimal) -> Decimal:
        """The fleet's cost over ``hours`` (a plan's hours a month)."""
        return self.hourly_usd * hours


def replica_memory_gib(params_billion: Decimal, bytes_per_parameter: Decimal, headroom: Decimal) -> Decimal:
    """Accelerator memory one model replica needs: weights (parameters x bytes each) x the memory headroom."""
    return params_billion * BILLION * bytes_per_parameter / GIB * headroom


def chip_units(instance: InstanceType, assumptions: Assumptions) -> Decimal | None:
    """Batched inference throughput of one accelerator chip of ``instance`` in A10G-equivalents; None for a GPU
    family the throughput table does not list."""
    if not instance.neuron:
        return get_gpu_throughput().relative(instance.family)
    inf2 = assumptions.inferentia2_inference_throughput_ratio.value
    if instance.family == "inf1":
        return inf2 / assumptions.inf2_vs_inf1_throughput_ratio.value
    return inf2


def candidates(catalog: Catalog, families: Iterable[str], sagemaker: bool = False) -> list[InstanceType]:
    """Every size of the given families with a price, cheapest first within a family, families in order."""
    found = [t for family in families for t in catalog.family(family, sagemaker=sagemaker)]
    return [t for t in found if t.price_usd_per_hour is not None]


def instances_needed(instance: InstanceType, need: Need, assumptions: Assumptions) -> int | None:
    """Whole instances of ``instance`` that carry the load (at least one); None when its throughput is unknown."""
    counts = [1]
    if need.cores is not None and instance.neuron_cores:
        counts.append(_ceil(need.cores / instance.neuron_cores))
    if need.chips is not None and instance.accelerator_count:
        counts.append(_ceil(need.chips / instance.accelerator_count))
    if need.a10g_units is not None:
        units = chip_units(instance, assumptions)
        if units is None or not instance.accelerator_count:
            return None
        counts.append(_ceil(need.a10g_units / (units * instance.accelerator_count)))
    return max(counts)


def cheapest_fit(
    targets: Sequence[InstanceType], catalog: Catalog, region: str, need: Need, assumptions: Assumptions
) -> Fit | None:
    """The cheapest ``count`` x type among ``targets`` whose accelerator memory (per instance) holds
    ``need.memory_gib`` and whose instances together carry the load. Ties go to fewer instances, then to the
    first listed."""
    best: Fit | None = None
    for instance in targets:
        price = catalog.price(instance.name, region)
        if price is None or instance.accelerator_memory_gib < need.memory_gib:
            continue
        count = instances_needed(instance, need, assumptions)
        if count is None:
            continue
        fit = Fit(instance, count, price * count)
        if best is None or (fit.hourly_usd, fit.count) < (best.hourly_usd, best.count):
            best = fit
    return best


def memory_cluster(targets: Sequence[InstanceType], catalog: Catalog, region: str, memory_gib: Decimal) -> Fit | None:
    """A cluster that holds ``memory_gib`` in all (training state): one instance of the cheapest priced size that
    holds it alone, else the largest priced size, as many as the memory needs."""
    sizes = [(t, p) for t in targets if (p := catalog.price(t.name, region)) is not None]
    if not sizes:
        return None
    single = next(((t, p) for t, p in sizes if t.accelerator_memory_gib >= memory_gib), None)
    if single is not None:
        return Fit(single[0], 1, single[1])
    largest, price = max(sizes, key=lambda s: s[0].accelerator_memory_gib)
    count = max(1, _ceil(memory_gib / largest.accelerator_memory_gib))
    return Fit(largest, count, price * count)


# --- the software path ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """The Neuron software a target runs for one stage: its name, status and the public sources that say so."""

    name: str
    status: SoftwareStatus
    family: str
    path: str  # "NxD Inference / Optimum Neuron on inf2 (maintenance mode since Neuron 2.31)"
    sources: tuple[str, ...]

    @property
    def short(self) -> str:
        """The stack's name without what the data file adds after a semicolon: "native PyTorch (TorchNeuron)"."""
        return self.name.split(";", 1)[0]


def software(family_or_type: str, stage: str) -> Stack | None:
    """The stack a family or instance type (``inf2``, ``ml.trn1.32xlarge``) serves (stage ``inference``) or trains
    with; None for a family without a Neuron stack for that stage (a GPU, or inf1/inf2 training)."""
    data = get_neuron_software()
    family = family_of(family_or_type)
    chip = data.families.get(family)
    if chip is None:
        return None
    name, status = (
        (chip.serving, chip.serving_status) if stage == "inference" else (chip.training, chip.training_status)
    )
    path = data.serving_path(family) if stage == "inference" else data.training_path(family)
    if name is None or status is None or path is None:
        return None
    return Stack(name=name, status=status, family=family, path=path, sources=chip.sources)


def _ceil(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_CEILING))
