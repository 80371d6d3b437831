"""How fast one GPU of a family serves batched inference, relative to the g5's A10G (``data/gpu_throughput.json``).

The economics file says how many A10G-equivalents one Inferentia2 chip replaces; this file turns an L4, A100 or
H100 into A10G-equivalents, by memory bandwidth, with sources. Read once, cached; no I/O at import.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chipwise.catalog.loading import SourcedDocument, check_sources, load_document


class GpuFamily(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    accelerator: str
    memory_bandwidth_gb_per_s: Decimal = Field(gt=0)
    source: str


class GpuThroughput(SourcedDocument):
    reference_family: str
    families: dict[str, GpuFamily]
    scaling_source: str

    @model_validator(mode="after")
    def _valid(self) -> GpuThroughput:
        if self.reference_family not in self.families:
            raise ValueError(f"the reference family {self.reference_family!r} has no entry")
        check_sources({f.source for f in self.families.values()} | {self.scaling_source}, self.sources)
        return self

    def relative(self, family: str) -> Decimal | None:
        """Throughput of one GPU of ``family`` in reference-GPU (A10G) units; None for families not listed."""
        found = self.families.get(family.removeprefix("ml."))
        if found is None:
            return None
        return found.memory_bandwidth_gb_per_s / self.families[self.reference_family].memory_bandwidth_gb_per_s


@lru_cache(maxsize=1)
def get_gpu_throughput() -> GpuThroughput:
    """The shipped ``gpu_throughput.json`` (read once)."""
    return load_document(GpuThroughput, "gpu_throughput.json", "chipwise.analyse")
