"""Chipwise: a FinOps advisor for AWS AI accelerators (Inferentia, Trainium, NVIDIA GPUs)."""

__version__ = "0.1.0"
