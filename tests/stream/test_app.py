import asyncio
import gc
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from worker.errors import IndexStoreError, IndexUnavailable, LayoutMismatch
from worker.model import Decision
from worker.settings import Settings
from worker.stream import app
from worker.stream.app import freeze_gc_once
from worker.stream.metrics import Metrics


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


class FailingPipeline:
    """Raises the given errors in turn, then decides nothing."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.runs = 0

    async def run(self, values: Sequence[bytes | None], positions: object = None) -> list[Decision]:
        self.runs += 1
        if self.errors:
            raise self.errors.pop(0)
        return []


@pytest.fixture
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    async def instant(delay: float) -> None:
        return None

    monkeypatch.setattr(asyncio, "sleep", instant)


async def test_an_unreachable_index_is_waited_for_as_long_as_it_takes(no_wait: None) -> None:
    pipeline = FailingPipeline(*[IndexUnavailable("down")] * 50)
    assert await app._run_with_retry(lambda: pipeline.run([b"x"]), Metrics()) == []
    assert pipeline.runs == 51


async def test_an_index_that_refuses_the_batch_is_tried_a_few_times_then_raises(
    no_wait: None,
) -> None:
    pipeline = FailingPipeline(*[IndexStoreError("script error")] * 50)
    with pytest.raises(IndexStoreError, match="script error"):
        await app._run_with_retry(lambda: pipeline.run([b"x"]), Metrics())
    assert pipeline.runs == app.REFUSED_TRIES


async def test_another_layout_is_not_retried(no_wait: None) -> None:
    pipeline = FailingPipeline(LayoutMismatch("other layout"))
    with pytest.raises(LayoutMismatch):
        await app._run_with_retry(lambda: pipeline.run([b"x"]), Metrics())
    assert pipeline.runs == 1


def test_the_data_folder_is_not_in_the_working_directory() -> None:
    # An image runs the worker as a user who may not write its working directory.
    datadir = Path(app.create_app(Settings(app_id="where")).conf.datadir)
    assert datadir.is_relative_to(tempfile.gettempdir())
    assert not datadir.is_relative_to(Path.cwd())
