"""The Outbox, which carries the at-least-once guarantee: a batch is reported delivered only
after its output is sent, batches are reported in order, a failed send surfaces, and abandoning
stops the send without reporting anything."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from worker.stream.outbox import Outbox


class FakeStream:
    """Records the events of the batches reported delivered, in order."""

    def __init__(self) -> None:
        self.acked: list[str] = []

    def delivered(self, batch: list[str]) -> None:
        self.acked.extend(batch)


def outbox() -> tuple[Outbox[list[str]], FakeStream]:
    stream = FakeStream()
    return Outbox(delivered=stream.delivered), stream


async def test_events_are_acked_only_after_their_send_completes() -> None:
    box, stream = outbox()
    sent = asyncio.Event()

    async def send() -> None:
        await sent.wait()

    await box.put(["a", "b"], send)
    await asyncio.sleep(0.01)
    assert stream.acked == []  # the send is in flight: nothing acked yet
    sent.set()
    await box.flush()
    assert stream.acked == ["a", "b"]


async def test_put_returns_while_the_batch_is_sent_and_batches_are_acked_in_order() -> None:
    box, stream = outbox()
    order: list[str] = []
    release = asyncio.Event()

    def sender(name: str, gate: asyncio.Event | None = None) -> Any:
        async def send() -> None:
            if gate is not None:
                await gate.wait()
            order.append(f"sent {name}")

        return send

    await box.put(["1a", "1b"], sender("first", release))
    assert stream.acked == []  # put returned with the first batch still being sent
    second = asyncio.create_task(box.put(["2a"], sender("second")))
    await asyncio.sleep(0.01)
    assert not second.done()  # it waits for the first batch to be out and acked
    release.set()
    await second
    await box.flush()
    assert order == ["sent first", "sent second"]
    assert stream.acked == ["1a", "1b", "2a"]


async def test_a_failed_send_surfaces_on_the_next_put_and_acks_nothing() -> None:
    box, stream = outbox()

    async def fails() -> None:
        raise RuntimeError("produce failed")

    async def fine() -> None:
        return None

    await box.put(["a"], fails)
    with pytest.raises(RuntimeError, match="produce failed"):
        await box.put(["b"], fine)
    assert stream.acked == []


async def test_a_failed_send_surfaces_on_flush() -> None:
    box, stream = outbox()

    async def fails() -> None:
        raise RuntimeError("produce failed")

    await box.put(["a"], fails)
    with pytest.raises(RuntimeError, match="produce failed"):
        await box.flush()
    assert stream.acked == []


async def test_abandon_cancels_the_send_in_flight_and_acks_nothing() -> None:
    box, stream = outbox()
    cancelled = asyncio.Event()

    async def hangs() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    await box.put(["a"], hangs)
    await asyncio.sleep(0.01)
    box.abandon()
    await asyncio.wait_for(cancelled.wait(), 1)
    assert stream.acked == []


async def test_a_failed_send_is_reported_at_once_without_another_batch() -> None:
    stream = FakeStream()
    failures: list[BaseException] = []
    box = Outbox(on_failure=failures.append, delivered=stream.delivered)

    async def fails() -> None:
        raise RuntimeError("produce failed")

    async def fine() -> None:
        return None

    await box.put(["a"], fine)
    await box.put(["b"], fails)
    await asyncio.sleep(0.01)  # no put, no flush: the last batch of a quiet stream
    assert [str(f) for f in failures] == ["produce failed"]
    assert stream.acked == ["a"]
    box.abandon()  # (an abandoned send is not a failure)
    assert len(failures) == 1


async def test_without_delivered_batches_still_go_out_in_order() -> None:
    box: Outbox[list[str]] = Outbox()  # (transactions commit offsets)
    order: list[str] = []

    def sender(name: str) -> Any:
        async def send() -> None:
            await asyncio.sleep(0.01 if name == "first" else 0)
            order.append(name)

        return send

    await box.put(["1a"], sender("first"))
    await box.put(["2a"], sender("second"))
    await box.flush()
    assert order == ["first", "second"]
