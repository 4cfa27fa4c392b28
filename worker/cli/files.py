"""The commands on files of articles: scan (no services), backfill (into the shared index),
and building an IDF table."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from worker import wiring
from worker.cli.common import clean_errors, settings_from_env
from worker.defaults import IDF_CAP
from worker.settings import Settings

if TYPE_CHECKING:
    from worker.index.base import Index
    from worker.text.fingerprint import Fingerprinter

CHUNK = 1000  # lines decided per pipeline run


@click.command()
@click.argument("file", type=click.File("rb"))
@click.option("--threshold", type=int, help="Largest Hamming distance of a near-duplicate.")
def scan(file: IO[bytes], threshold: int | None) -> None:
    """Deduplicate FILE (one JSON article per line) without Kafka or Redis.

    Prints one JSON verdict per input line, in order; first seen wins.
    """
    settings = settings_from_env(threshold=threshold)
    with asyncio.Runner() as runner:
        _decide_file(runner, settings, wiring.memory_index(settings), file, verdicts=True)


@click.command()
@click.argument("file", type=click.File("rb"))
@click.option("--verdicts", is_flag=True, help="Print one JSON verdict per line, as scan does.")
def backfill(file: IO[bytes], verdicts: bool) -> None:
    """Index FILE (one JSON article per line, oldest first) into the shared Redis index, so
    that the stream is deduplicated against this history. Lines are decided as the worker
    decides messages (first seen wins; tombstones delete), in pipelined chunks."""
    settings = settings_from_env()
    fingerprinter = wiring.fingerprinter(settings)
    index = wiring.redis_index(settings, fingerprinter)
    with asyncio.Runner() as runner, clean_errors():
        try:
            counts = _decide_file(runner, settings, index, file, verdicts, fingerprinter)
        finally:
            runner.run(index.close())
    click.echo(
        "backfilled: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())), err=True
    )


def _decide_file(
    runner: asyncio.Runner,
    settings: Settings,
    index: Index,
    file: IO[bytes],
    verdicts: bool,
    fingerprinter: Fingerprinter | None = None,
) -> Counter[str]:
    """Decide every line of `file` in chunks; print scan lines if `verdicts`, show progress
    on stderr otherwise. Returns how many lines got each verdict."""
    from worker.pipeline.outputs import scan_line

    fingerprinter = fingerprinter or wiring.fingerprinter(settings)
    reader = wiring.reader(settings, fingerprinter)
    pipeline = wiring.pipeline(settings, index, fingerprinter, reader)
    counts: Counter[str] = Counter()
    size = os.fstat(file.fileno()).st_size if not verdicts and file.seekable() else 0
    runner.run(reader.start())
    try:
        with click.progressbar(
            length=size, label="indexing", file=sys.stderr, hidden=not size
        ) as bar:
            for first, chunk in _chunks(file, CHUNK):
                for i, decision in enumerate(runner.run(pipeline.run(chunk))):
                    line = scan_line(decision, first + i)
                    counts[line["verdict"]] += 1
                    if verdicts:
                        click.echo(json.dumps(line, ensure_ascii=False))
                bar.update(sum(len(raw) + 1 for raw in chunk))
    finally:
        runner.run(reader.close())
    return counts


def _chunks(file: IO[bytes], size: int) -> Iterator[tuple[int, list[bytes]]]:
    """The file's lines in chunks of `size`, each with the number of its first line."""
    chunk: list[bytes] = []
    first = 1
    for number, line in enumerate(file, start=1):
        chunk.append(line.rstrip(b"\r\n"))
        if len(chunk) == size:
            yield first, chunk
            chunk, first = [], number + 1
    if chunk:
        yield first, chunk


@click.group()
def idf() -> None:
    """IDF tables, which weight the words of the search fingerprint (DEDUP_IDF_FILE)."""


@idf.command("build")
@click.argument("file", type=click.File("rb"))
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--cap",
    type=float,
    default=IDF_CAP,
    show_default=True,
    help="Largest IDF; rarer units all weigh this much.",
)
def idf_build(file: IO[bytes], out: Path, cap: float) -> None:
    """Build an IDF table from FILE (one JSON article per line, as published)."""
    from worker.model import Article
    from worker.pipeline.decode import decode_article
    from worker.text.idf import IdfTable

    settings = settings_from_env()
    fingerprinter = wiring.fingerprinter(settings)  # (it reads HTML and e-mail as the worker)
    reader = wiring.reader(settings, fingerprinter)
    skipped = 0

    def documents(runner: asyncio.Runner) -> Iterator[list[str]]:
        nonlocal skipped
        for line in file:
            article = decode_article(line.rstrip(b"\r\n"), settings.max_message_bytes)
            if isinstance(article, Article):
                [read] = runner.run(reader.read([article.text], [article.format]))
                if isinstance(read, tuple):
                    yield fingerprinter.units_of(read[0])
                    continue
            skipped += 1

    with asyncio.Runner() as runner:
        runner.run(reader.start())
        try:
            table = IdfTable.build(documents(runner), cap)
        finally:
            runner.run(reader.close())
    table.save(out)
    click.echo(
        f"wrote {out}: {table.docs} articles, {len(table.weights)} units below the cap "
        f"{cap:g} ({skipped} lines skipped: not articles, or not readable)",
        err=True,
    )
