"""InTurn: batches decided in the order they came, whatever fails, against a fake index that
applies what each attempt sends to a log, in the order the attempts are made."""

import asyncio

import pytest

from worker.errors import (
    IndexFenced,
    IndexStoreError,
    IndexUnavailable,
    LayoutMismatch,
    OutOfTurn,
)
from worker.pipeline import in_turn
from worker.pipeline.in_turn import InTurn


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff pauses recorded, not slept (a zero sleep still lets the others run)."""
    pauses: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float) -> None:
        pauses.append(delay)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    return pauses


def retries() -> tuple[InTurn, list[str]]:
    told: list[str] = []
    return InTurn(on_retry=lambda exc, delay: told.append(type(exc).__name__)), told


async def test_an_unreachable_index_is_waited_for_as_long_as_it_takes(quick: list[float]) -> None:
    failures = [IndexUnavailable("down")] * 50
    runs = 0

    async def decide() -> str:
        nonlocal runs
        runs += 1
        if failures:
            raise failures.pop()
        return "done"

    turns, told = retries()
    assert await turns.start(decide, lambda: True) == "done"
    assert runs == 51
    assert told == ["IndexUnavailable"] * 50
    assert quick[:4] == [0.1, 0.2, 0.4, 0.8]
    assert max(quick) == in_turn.MAX_RETRY_DELAY_S


async def test_an_index_that_refuses_the_batch_is_tried_a_few_times_then_raises(
    quick: list[float],
) -> None:
    runs = 0

    async def decide() -> None:
        nonlocal runs
        runs += 1
        raise IndexStoreError("script error")

    turns, _ = retries()
    with pytest.raises(IndexStoreError, match="script error"):
        await turns.start(decide, lambda: True)
    assert runs == in_turn.REFUSED_TRIES


@pytest.mark.parametrize("error", [LayoutMismatch("other layout"), IndexFenced("taken over")])
async def test_another_layout_or_a_fenced_batch_is_not_tried_again(
    quick: list[float], error: IndexStoreError
) -> None:
    runs = 0

    async def decide() -> None:
        nonlocal runs
        runs += 1
        raise error

    turns, _ = retries()
    with pytest.raises(type(error)):
        await turns.start(decide, lambda: True)
    assert runs == 1


async def test_a_batch_no_longer_wanted_is_not_tried_again(quick: list[float]) -> None:
    runs = 0

    async def decide() -> str:
        nonlocal runs
        runs += 1
        raise IndexUnavailable("down")

    turns, _ = retries()
    assert await turns.start(decide, lambda: False) is None
    assert runs == 1


class Index:
    """Runs each attempt in the order the attempts are sent, as Redis runs the calls of one
    connection, and answers it after the batch's `hold_s`. A failed attempt breaks its
    chain: attempts sent after it on that chain are refused (OutOfTurn), as RedisIndex's
    chain makes Redis refuse them; the index starts a new chain once it sees the failure."""

    def __init__(self, fail: dict[tuple[str, int], IndexStoreError]) -> None:
        self.fail = fail  # (batch, attempt) -> the error of that attempt
        self.applied: list[str] = []
        self.attempts: dict[str, int] = {}
        self.chain = 0
        self.broken: set[int] = set()

    def batch(self, name: str, hold_s: float = 0.0) -> "Batch":
        return Batch(self, name, hold_s)


class Batch:
    def __init__(self, index: Index, name: str, hold_s: float) -> None:
        self.index, self.name, self.hold_s = index, name, hold_s

    async def __call__(self) -> str:
        index = self.index
        chain = index.chain
        attempt = index.attempts[self.name] = index.attempts.get(self.name, 0) + 1
        error = index.fail.get((self.name, attempt))
        if chain in index.broken:
            error = OutOfTurn("an earlier call of the chain did not run")
        elif error is not None:
            index.broken.add(chain)
        else:
            index.applied.append(self.name)
        await asyncio.sleep(self.hold_s)  # the reply
        if error is not None:
            if index.chain == chain:
                index.chain += 1
            raise error
        return self.name


async def test_after_a_failure_the_batches_take_effect_in_the_order_they_came() -> None:
    # Batch a fails twice (Redis out of reach); b and c were sent behind it, and d once a
    # had failed but before the worker heard of it: every one takes effect after a.
    index = Index({("a", 1): IndexUnavailable("down"), ("a", 2): IndexUnavailable("down")})
    turns, told = retries()
    started = [turns.start(index.batch(name, 0.01), lambda: True) for name in "abc"]
    await asyncio.sleep(0.005)
    started.append(turns.start(index.batch("d"), lambda: True))
    assert await asyncio.gather(*started) == ["a", "b", "c", "d"]
    assert index.applied == ["a", "b", "c", "d"]
    assert told.count("IndexUnavailable") == 2


async def test_a_batch_started_while_one_before_it_is_failing_waits_for_it() -> None:
    index = Index({("a", 1): IndexUnavailable("down")})
    turns, _ = retries()
    a = turns.start(index.batch("a"), lambda: True)
    await asyncio.sleep(0.001)  # a has failed and waits to go again
    b = turns.start(index.batch("b"), lambda: True)
    assert list(await asyncio.gather(a, b)) == ["a", "b"]
    assert index.applied == ["a", "b"]
    assert index.attempts == {"a": 2, "b": 1}  # (b was not sent before a went again)


async def test_a_later_batch_that_fails_on_its_own_goes_again_after_the_ones_before() -> None:
    index = Index({("b", 1): IndexUnavailable("lost")})
    turns, _ = retries()
    a = turns.start(index.batch("a", 0.05), lambda: True)
    b = turns.start(index.batch("b", 0.0), lambda: True)
    c = turns.start(index.batch("c", 0.0), lambda: True)
    assert list(await asyncio.gather(a, b, c)) == ["a", "b", "c"]
    assert index.applied == ["a", "b", "c"]
