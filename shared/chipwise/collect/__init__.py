"""Collectors: read AWS (inventory, Cost Explorer, CloudWatch) and neuron-monitor reports into plain records.

Collectors do I/O and never decide: what a resource *is* and what it cost or did is recorded here, what to do
about it is the rules' business. Every collector takes an :class:`chipwise.aws.AwsContext` so each API call is
counted, and raises botocore errors up to :mod:`chipwise.pipeline.scan`, which records a failing source as an error of
a partial scan.
"""
