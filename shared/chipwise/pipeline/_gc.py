"""Fewer garbage collections while a use case builds many long-lived objects.

CPython runs a young-generation collection every 700 new container objects, and now and then a full one over every
object the process holds. A scan builds hundreds of thousands of objects (rollup rows, datapoints, parsed
responses) that all survive to the end of their stage, on top of the hundreds of thousands the imports left (modules,
mapped tables, schemas), so each collection walks objects that are still alive: 25-35 % of a scan's CPU on the
incremental benchmark (``make bench``). Inside :func:`fewer_collections` the young threshold is raised (a collection
still runs every ``young`` allocations, so cyclic garbage is still freed) and what existed before the block is
frozen (never walked, as after ``gc.freeze()`` in a pre-forking server); both come back afterwards, so a warm
Lambda's next invocation starts from the interpreter's own settings.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 20_000


@contextmanager
def fewer_collections(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Collect the young generation every ``young`` allocations (never more often than now) and leave the objects
    made before the block out of every collection inside it."""
    before = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0  # a process that froze objects itself keeps its own freeze
    gc.set_threshold(max(young, before[0]), *before[1:])
    if freeze:
        gc.freeze()
    try:
        yield
    finally:
        if freeze:
            gc.unfreeze()
        gc.set_threshold(*before)
