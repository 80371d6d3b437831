"""Fewer garbage collections while a use case builds many long-lived objects.

CPython runs a young-generation collection every 700 new container objects. A scan builds hundreds of thousands
(rollup rows, datapoints, parsed responses) that all survive to the end of their stage, so each collection walks
objects that are still alive: 25-35 % of a scan's CPU on the benchmark (``make bench``: incremental). Raising the
young threshold for the length of the work keeps cyclic garbage collectable (a collection still runs every
``threshold`` allocations) while walking live objects far less often. The previous thresholds come back afterwards,
so a warm Lambda's next invocation starts from the interpreter's defaults.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 20_000


@contextmanager
def fewer_collections(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Collect the young generation every ``young`` allocations (never more often than now) inside the block."""
    before = gc.get_threshold()
    gc.set_threshold(max(young, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
