"""What reading HTML and e-mail apart costs (IsolatedReader: a child process, a deadline per
text) against reading them in the worker's process (InProcessReader), side by side in one run:
real HTML pages (PostgreSQL's and Git's manuals), real e-mail (Python's email test messages),
plain-text news (Lee), in batches of 100 as the worker reads them, reading alone and with the
fingerprints. Then what the event loop sees while a costly text is read, in a thread and apart,
and how long each attack on the readers takes to end (tests/pipeline/test_hostile.py)."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from evaluation.corpora import email_messages, git_pages, lee_news, postgres_pages
from tests.support.attacks import ATTACKS
from worker import wiring
from worker.model import Format
from worker.pipeline.isolated import IsolatedReader
from worker.pipeline.reading import InProcessReader, Reader
from worker.settings import Settings
from worker.text.fingerprint import Fingerprinter

BATCH = 100  # the worker's default batch size (DEDUP_BATCH_SIZE)
Method = Callable[[list[str]], Awaitable[object]]


def reading(reader: Reader) -> Method:
    async def run(texts: list[str]) -> object:
        for i in range(0, len(texts), BATCH):
            chunk = texts[i : i + BATCH]
            await reader.read(chunk, [None] * len(chunk))
        return None

    return run


def fingerprinting(reader: Reader, fingerprinter: Fingerprinter) -> Method:
    """Reading, then the fingerprints of what was read (Pipeline.prepare without decoding)."""

    async def run(texts: list[str]) -> object:
        for i in range(0, len(texts), BATCH):
            chunk = texts[i : i + BATCH]
            read = await reader.read(chunk, [None] * len(chunk))
            fingerprinter.many_read([r for r in read if isinstance(r, tuple)], chunk)
        return None

    return run


async def report(title: str, texts: list[str], methods: dict[str, Method], rounds: int) -> None:
    """Each method's median time per text, and its median ratio to the first method, the ratio
    taken within each round (the machine's slow spells move both sides of a ratio alike)."""
    print(f"\n{title}: {len(texts)} texts, median of {rounds} rounds")
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(rounds):
        for name, fn in methods.items():
            start = time.perf_counter()
            await fn(texts)
            samples[name].append((time.perf_counter() - start) / len(texts) * 1e6)
    first = samples[next(iter(methods))]
    for name, values in samples.items():
        ratio = statistics.median(v / o for v, o in zip(values, first, strict=True))
        print(f"  {name:<52} {statistics.median(values):9.1f} us/text  {ratio:5.2f}x the first row")


async def loop_lag(label: str, work: Awaitable[object]) -> None:
    """The longest a 5 ms sleep overslept while `work` ran."""
    lags: list[float] = []
    done = asyncio.Event()

    async def sleeper() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - start - 0.005)

    ticking = asyncio.create_task(sleeper())
    await asyncio.sleep(0.05)
    lags.clear()
    start = time.perf_counter()
    await work
    took = time.perf_counter() - start
    done.set()
    await ticking
    print(
        f"  {label:<52} {took:6.2f} s; the sleeper woke {len(lags)} times, "
        f"overslept {max(lags, default=0) * 1000:.0f} ms at most"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--html-pages", type=int, default=200)
    parser.add_argument("--attacks", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    settings = Settings()
    fingerprinter = wiring.fingerprinter(settings)
    here = InProcessReader(fingerprinter)
    async with wiring.reader(settings, fingerprinter) as apart:
        methods = {
            "read in the worker's process": reading(here),
            "read apart (a child process, a deadline)": reading(apart),
            "read and fingerprinted, in the worker's process": fingerprinting(here, fingerprinter),
            "read apart and fingerprinted": fingerprinting(apart, fingerprinter),
        }
        pages = [html for _, html in postgres_pages()[: args.html_pages // 2]]
        pages += [html for _, html, _ in git_pages()[: args.html_pages - len(pages)]]
        mails = [raw for _, raw in email_messages()]
        news = list(lee_news())
        for title, texts, expected in (
            ("HTML pages", pages, Format.HTML),
            ("e-mail", mails, Format.EMAIL),
            ("plain-text news", news, Format.TEXT),
        ):
            read = [fingerprinter.format_of(t) for t in texts]
            kept = [t for t, f in zip(texts, read, strict=True) if f is expected]
            size = statistics.mean(len(t.encode()) for t in kept) / 1024
            await report(f"{title} (mean {size:.1f} KB)", kept, methods, args.rounds)
        if args.attacks:
            await attacks(settings, fingerprinter, apart)


async def attacks(settings: Settings, fingerprinter: Fingerprinter, apart: IsolatedReader) -> None:
    print(f"\nthe event loop while a costly text is read (deadline {settings.read_timeout_ms} ms)")
    slow = "<html><body><div " + " ".join(f"a{i}" for i in range(20_000)) + ">x</div>"
    here = InProcessReader(fingerprinter)
    await loop_lag("20,000 attributes, in a thread", asyncio.to_thread(here.read_one, slow, None))
    await loop_lag("20,000 attributes, apart", apart.read([slow], [None]))
    print("\neach attack, as large as the size limit allows, read apart")
    for name, (make, expected) in ATTACKS.items():
        text = make()
        start = time.perf_counter()
        [read] = await apart.read([text], [None])
        took = time.perf_counter() - start
        got = read.reason.value if not isinstance(read, tuple) else "read"
        wanted = "read" if expected == "unique" else expected
        print(f"  {name:<40} {len(text) / 1e6:5.2f} MB  {took:6.2f} s  {got} (expected {wanted})")


if __name__ == "__main__":
    asyncio.run(main())
