"""The app's start puts its heap out of the collector's sight and makes full collections rarer
(``hymt_chat.service.loop_watch.settle_heap``, called at the end of ``app.py``): a full
collection under load stalls every tab for 50-90 ms."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hymt_chat.service.loop_watch import FULL_COLLECTION_EVERY, settle_heap


@pytest.fixture
def collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("collector")
def test_the_start_heap_is_frozen_and_full_collections_come_rarely() -> None:
    young, middle, _ = gc.get_threshold()
    kept = [object() for _ in range(1000)]
    settle_heap()
    assert gc.get_freeze_count() >= len(kept)
    assert gc.get_threshold() == (young, middle, FULL_COLLECTION_EVERY)
    assert FULL_COLLECTION_EVERY > 10  # Python's default, which collected every ~250 messages

