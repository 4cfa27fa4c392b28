import gc
from collections.abc import Iterator

import pytest

from worker.stream.app import settle_gc


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    settle_gc.cache_clear()
    yield
    gc.unfreeze()
    settle_gc.cache_clear()


def test_settle_gc_freezes_what_is_alive_once(unfrozen: None) -> None:
    assert gc.get_freeze_count() == 0
    settle_gc()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    later = [[i] for i in range(1000)]  # made after the first batch: a second freeze would
    settle_gc()                          # take them too
    assert gc.get_freeze_count() == frozen
    del later
