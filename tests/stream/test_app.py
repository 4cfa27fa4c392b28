import gc
from collections.abc import Iterator

import pytest

from worker.stream.app import freeze_gc_once


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    freeze_gc_once.cache_clear()
    yield
    gc.unfreeze()
    freeze_gc_once.cache_clear()


def test_settle_gc_freezes_what_is_alive_once(unfrozen: None) -> None:
    assert gc.get_freeze_count() == 0
    freeze_gc_once()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    later = [[i] for i in range(1000)]  # made after the first batch: a second freeze would
    freeze_gc_once()  # take them too
    assert gc.get_freeze_count() == frozen
    del later
