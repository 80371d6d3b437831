"""What the benchmark entrypoint and the framework runners share: a static shape, the runner protocol and one
request's timing. Both import it, so the runners never import the entrypoint back (``entrypoint`` imports
``neuron_runners`` when it builds a runner: the one direction between the two).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Shape:
    """One static shape: Neuron compiles a graph per shape, so each is prepared, then timed."""

    batch_size: int
    sequence_length: int
    output_tokens: int


class ModelRunner(Protocol):
    """What the harness needs from a framework (Optimum Neuron, vLLM on Neuron, torch-neuronx, CUDA)."""

    def versions(self) -> dict[str, str]:
        """Framework and SDK versions, recorded in the result."""
        ...

    def prepare(self, shape: Shape) -> None:
        """Load and compile the model for ``shape`` (timed as compile time)."""
        ...

    def run(self, shape: Shape) -> int:
        """Serve one request (or run one training step); returns the tokens generated or processed."""
        ...


@dataclass(frozen=True)
class RequestTiming:
    """One request of a concurrency sweep: time to its first token, to its end, the tokens it generated."""

    ttft_seconds: float
    e2e_seconds: float
    output_tokens: int
    ok: bool = True


class ServingRunner(ModelRunner, Protocol):
    """A runner that can keep ``concurrency`` requests in flight (a server with continuous batching)."""

    def serve(self, shape: Shape, concurrency: int) -> list[RequestTiming]:
        """Send ``concurrency`` requests at once (kept in flight until each finishes); their timings."""
        ...


__all__ = ["ModelRunner", "RequestTiming", "ServingRunner", "Shape"]
