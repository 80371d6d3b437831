"""The scan's garbage-collection thresholds: raised for the work, never lowered, always restored."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from chipwise.pipeline._gc import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture(autouse=True)
def _restore_thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_raises_the_young_threshold_inside_and_restores_it_after() -> None:
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restores_the_thresholds_when_the_work_fails() -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("scan failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_objects_made_before_the_work_are_left_out_of_its_collections_and_rejoin_after() -> None:
    gc.unfreeze()
    with fewer_collections():
        assert gc.get_freeze_count() > 0  # the imports' objects, at least
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_its_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 1_000)  # objects the process froze before the work
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    with fewer_collections():
        pass
    assert calls == []


def test_never_collects_more_often_than_the_process_already_does() -> None:
    gc.set_threshold(100_000, 5, 5)
    with fewer_collections(young=20_000):
        assert gc.get_threshold() == (100_000, 5, 5)
    assert gc.get_threshold() == (100_000, 5, 5)
