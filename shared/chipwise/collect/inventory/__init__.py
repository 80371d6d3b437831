"""Inventory: accelerator EC2 instances (EKS nodes included), capacity reservations, SageMaker endpoints (their
variants and inference components), training jobs, notebook instances, HyperPod clusters and Studio apps, AWS Batch
compute environments and Bedrock Provisioned Throughput.

Each source (:mod:`chipwise.collect.inventory.sources`, one module per kind, found through
:func:`chipwise.collect.inventory.registry.inventory_sources`) returns :class:`~chipwise.models.records.Inventory`:
:class:`~chipwise.models.records.CollectedResource` records with the catalog's facts, every tag, workload hints and
the details the metric collector and the rules need, plus the listed resources it could not describe (each a
problem of its own, never marked gone). Helpers every source shares: :mod:`.answers` (tags, errors) and
:mod:`.instance_types` (type facts and the resource record built on them).
"""
