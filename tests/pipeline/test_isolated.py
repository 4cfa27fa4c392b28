"""IsolatedReader: HTML and e-mail read in a child process, each text within a deadline, and
read there exactly as in this process; the event loop stays free meanwhile."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from functools import cache

import pytest

from tests.support.texts import PAGE, mail
from worker.errors import ReaderUnavailable
from worker.model import Format, Reason, Rejection
from worker.pipeline.isolated import IsolatedReader, memory_cap
from worker.pipeline.reading import InProcessReader
from worker.text.fingerprint import Fingerprinter

DEADLINE_S = 1.0
# Its parse takes half a minute (the parser's work grows as the square of an element's
# attributes): it runs into any deadline here.
SLOW = "<html><body><div " + " ".join(f"a{i}" for i in range(80_000)) + ">slow</div>"
PLAIN = "Plain text that mentions <b> once, and is read as text."


@cache
def _fingerprinter() -> Fingerprinter:
    return Fingerprinter()


@pytest.fixture
async def reader() -> AsyncIterator[IsolatedReader]:
    async with IsolatedReader(_fingerprinter(), DEADLINE_S, memory_cap(1_000_000)) as started:
        yield started


async def test_html_and_mail_are_read_apart_as_they_are_here(reader: IsolatedReader) -> None:
    texts = [
        PAGE,
        mail(plain="the plain part", html="<p>the <b>html</b> part</p>"),
        mail(html="<table><tr><td>caf\u00e9 \U0001f600 \u00a0</td></tr></table>"),
        PLAIN,
    ]
    formats: list[Format | None] = [None, None, Format.EMAIL, None]
    here = await InProcessReader(_fingerprinter()).read(texts, formats)
    apart = await reader.read(texts, formats)
    assert apart == here
    assert [r[1] for r in apart if isinstance(r, tuple)] == [
        Format.HTML,
        Format.EMAIL,
        Format.EMAIL,
        Format.TEXT,
    ]


async def test_plain_text_is_read_here_without_the_process() -> None:
    cannot_start = IsolatedReader(_fingerprinter(), DEADLINE_S, memory_bytes=1)
    assert await cannot_start.read([PLAIN], [None]) == [(PLAIN, Format.TEXT)]
    with pytest.raises(ReaderUnavailable, match="did not start"):
        await cannot_start.read([PAGE], [None])


async def test_a_text_past_its_deadline_is_a_timeout_and_the_rest_are_read(
    reader: IsolatedReader,
) -> None:
    first = reader.pid
    texts = [PAGE, SLOW, mail(plain="after the slow one"), PLAIN, PAGE.replace("Monday", "Friday")]
    read = await reader.read(texts, [None] * len(texts))
    assert read[1] == Rejection(
        Reason.TIMEOUT, "reading the html took longer than 1000 ms (DEDUP_READ_TIMEOUT_MS)"
    )
    others = texts[:1] + texts[2:]
    assert read[:1] + read[2:] == await InProcessReader(_fingerprinter()).read(
        others, [None] * len(others)
    )
    assert reader.pid not in (None, first)  # another process read the ones after
    assert first is not None
    with pytest.raises(ProcessLookupError):  # the first one was killed, and reaped
        os.kill(first, 0)


async def test_the_event_loop_stays_free_while_a_text_is_read(reader: IsolatedReader) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(tick())
    [slow] = await reader.read([SLOW], [None])
    ticking.cancel()
    assert isinstance(slow, Rejection)
    # (a second of 10 ms sleeps: about 100 ticks; read in this process, it would be 0 or 1)
    assert ticks >= 20


async def test_a_reading_process_that_dies_is_one_unreadable_text(reader: IsolatedReader) -> None:
    reading = asyncio.create_task(reader.read([SLOW, PAGE], [None, None]))
    await asyncio.sleep(0.3)
    assert reader.pid is not None
    os.kill(reader.pid, signal.SIGKILL)
    died, page = await reading
    assert died == Rejection(
        Reason.UNREADABLE,
        "the text could not be read: the reading process ended (killed by signal 9)",
    )
    assert page == (await InProcessReader(_fingerprinter()).read([PAGE], [None]))[0]


async def test_a_read_cancelled_midway_leaves_no_answer_behind(reader: IsolatedReader) -> None:
    reading = asyncio.create_task(reader.read([mail(plain="the first mail")], [None]))
    await asyncio.sleep(0)  # (sent, not yet answered)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    [second] = await reader.read([mail(plain="the second mail")], [None])
    assert isinstance(second, tuple)
    assert "the second mail" in second[0]


async def test_closing_ends_the_process() -> None:
    reader = IsolatedReader(_fingerprinter(), DEADLINE_S, memory_cap(1_000_000))
    await reader.start()
    pid = reader.pid
    assert pid is not None
    await reader.close()
    assert reader.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
