"""Orchestration: a scan of one account, the fan-out over accounts, neuron-monitor ingestion and the
evaluation of findings against the store. The layer that wires collect, store, analyse and rules together."""
