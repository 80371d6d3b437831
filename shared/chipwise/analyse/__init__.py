"""Analyse: per-resource profiles built from the store, and the economics rules price recommendations with."""
