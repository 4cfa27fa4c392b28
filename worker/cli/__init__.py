"""The `dedup-worker` command line: worker, publish, alerts, scan, backfill, forget, status,
plan, evaluate."""

from __future__ import annotations

import asyncio
import json
import logging
import logging.config
import os
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from worker.errors import DedupError, IndexUnavailable, KafkaUnavailable
from worker.settings import Settings
from worker.text.idf import DEFAULT_CAP

if TYPE_CHECKING:  # the index modules import redis: loaded only by the commands that use them
    from worker.index import Index
    from worker.index.redis import RedisIndex
    from worker.index.redis.status import Status

T = TypeVar("T")
STARTUP_WAIT_S = 60.0
SCAN_CHUNK = 1000


@click.group()
def main() -> None:
    """Near-duplicate detection for a stream of articles (settings: DEDUP_* variables)."""


@main.command()
def worker() -> None:
    """Run the stream worker: consume articles, emit verdicts (Ctrl-C to stop)."""
    import faust  # heavy: imported only by this command

    from worker.stream.app import create_app
    from worker.stream.observability import logging_config

    settings = _settings()
    config = logging_config(settings.log_level, settings.log_format, settings.secrets)
    logging.config.dictConfig(config)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    with _clean_errors():
        loop.run_until_complete(_prepare(settings))
    app = create_app(settings)
    faust.Worker(app, loglevel=settings.log_level, logging_config=config,
                 loop=loop).execute_from_commandline()


async def _prepare(settings: Settings) -> None:
    """Topics exist and the index's layout matches ours, before the stream starts."""
    from worker.stream.kafka import check_credentials, ensure_topics

    await _retry_startup(lambda: check_credentials(settings), "Kafka")
    await _retry_startup(lambda: ensure_topics(settings), "Kafka")
    index = _redis_index(settings)
    try:
        await _retry_startup(index.ensure_layout, "Redis")
    finally:
        await index.close()


async def _retry_startup(call: Callable[[], Awaitable[T]], what: str) -> T:
    deadline = time.monotonic() + STARTUP_WAIT_S
    while True:
        try:
            return await call()
        except (IndexUnavailable, KafkaUnavailable) as exc:
            if time.monotonic() > deadline:
                raise
            logging.getLogger(__name__).warning("%s not ready (%s); retrying", what, exc)
            await asyncio.sleep(1.0)


@main.command()
@click.argument("file", type=click.File("rb"))
@click.option("--topic", help="Topic to send to (default: the input topic).")
def publish(file: IO[bytes], topic: str | None) -> None:
    """Send the articles in FILE (one JSON object per line) to the input topic.

    Each line is sent as it is, keyed by its id; the worker dead-letters lines that are
    not valid articles.
    """
    settings = _settings()
    lines = [line.rstrip(b"\r\n") for line in file]
    lines = [line for line in lines if line.strip()]
    with _clean_errors():
        sent = asyncio.run(_publish(settings, topic or settings.input_topic, lines))
    click.echo(f"published {sent} messages to {topic or settings.input_topic}", err=True)


async def _publish(settings: Settings, topic: str, lines: list[bytes]) -> int:
    from worker.stream.kafka import ensure_topics, producer

    await ensure_topics(settings)
    async with producer(settings) as client:
        pending = []
        with click.progressbar(length=len(lines), label="publishing", file=sys.stderr) as bar:
            for line in lines:
                pending.append(await client.send(topic, line, key=_article_key(line)))
                bar.update(1)
        await asyncio.gather(*pending)
    return len(pending)


def _article_key(line: bytes) -> bytes | None:
    try:
        body = json.loads(line)
    except ValueError:
        return None
    article_id = body.get("id") if isinstance(body, dict) else None
    return article_id.encode("utf-8", "replace") if isinstance(article_id, str) else None


@main.command()
@click.option("--from-beginning", is_flag=True, help="Show earlier alerts too.")
@click.option("--rejected", is_flag=True, help="Also show dead letters.")
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
@click.option("--idle-timeout", type=float, help="Stop after this many seconds of silence.")
@click.option("--max", "max_messages", type=int, help="Stop after this many messages.")
def alerts(from_beginning: bool, rejected: bool, as_json: bool, idle_timeout: float | None,
           max_messages: int | None) -> None:
    """Follow the duplicate alerts, one readable line each."""
    settings = _settings()
    topics = [settings.duplicates_topic] + ([settings.rejected_topic] if rejected else [])
    with _clean_errors():
        asyncio.run(_follow(settings, topics, from_beginning, as_json, idle_timeout,
                            max_messages))


async def _follow(settings: Settings, topics: list[str], from_beginning: bool, as_json: bool,
                  idle_timeout: float | None, max_messages: int | None) -> None:
    from worker.stream.kafka import consumer

    shown = 0
    async with consumer(settings, topics, from_beginning) as client:
        while max_messages is None or shown < max_messages:
            try:
                message = await asyncio.wait_for(client.getone(), idle_timeout)
            except TimeoutError:
                return
            body = json.loads(message.value)
            line = json.dumps(body, ensure_ascii=False) if as_json else describe(body)
            click.echo(line)
            shown += 1


def describe(body: dict[str, Any]) -> str:
    """One readable line for an alert or a dead letter."""
    if "reason" in body:
        where = body.get("source") or {}
        return (f"rejected   partition {where.get('partition')} offset {where.get('offset')}: "
                f"{body['reason']}: {body['detail']}")
    sign = "=" if body["kind"] == "exact" else "~"
    return (f"{body['kind']:<10} {body['id']} {sign} {body['duplicate_of']}   "
            f"distance {body['distance']}/{body['threshold']}   "
            f"{body['fingerprint']} vs {body['duplicate_of_fingerprint']}")


@main.command()
@click.argument("file", type=click.File("rb"))
@click.option("--threshold", type=int, help="Largest Hamming distance of a near-duplicate.")
def scan(file: IO[bytes], threshold: int | None) -> None:
    """Deduplicate FILE (one JSON article per line) without Kafka or Redis.

    Prints one JSON verdict per input line, in order; first seen wins.
    """
    from worker.index import MemoryIndex

    settings = _settings(threshold=threshold)
    index = MemoryIndex(settings.index_layout(), **settings.index_options())
    with asyncio.Runner() as runner:
        _decide_file(runner, settings, index, file, verdicts=True)


@main.command()
@click.argument("file", type=click.File("rb"))
@click.option("--verdicts", is_flag=True, help="Print one JSON verdict per line, as scan does.")
def backfill(file: IO[bytes], verdicts: bool) -> None:
    """Index FILE (one JSON article per line, oldest first) into the shared Redis index, so
    that the stream is deduplicated against this history. Lines are decided as the worker
    decides messages (first seen wins; tombstones delete), in pipelined chunks."""
    settings = _settings()
    index = _redis_index(settings)
    with asyncio.Runner() as runner, _clean_errors():
        try:
            counts = _decide_file(runner, settings, index, file, verdicts)
        finally:
            runner.run(index.close())
    click.echo("backfilled: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())),
               err=True)


def _decide_file(runner: asyncio.Runner, settings: Settings, index: Index, file: IO[bytes],
                 verdicts: bool) -> Counter[str]:
    """Decide every line of `file` in chunks; print scan lines if `verdicts`, show progress
    on stderr otherwise. Returns how many lines got each verdict."""
    from worker.pipeline.decide import Decider
    from worker.pipeline.outputs import scan_line

    decider = Decider.from_settings(settings, index)
    counts: Counter[str] = Counter()
    size = os.fstat(file.fileno()).st_size if not verdicts and file.seekable() else 0
    with click.progressbar(length=size, label="indexing", file=sys.stderr,
                           hidden=not size) as bar:
        for first, chunk in _chunks(file, SCAN_CHUNK):
            for i, decision in enumerate(runner.run(decider.decide(chunk))):
                line = scan_line(decision, first + i)
                counts[line["verdict"]] += 1
                if verdicts:
                    click.echo(json.dumps(line, ensure_ascii=False))
            bar.update(sum(len(raw) + 1 for raw in chunk))
    return counts


@main.command()
@click.argument("ids", nargs=-1, required=True)
def forget(ids: tuple[str, ...]) -> None:
    """Remove articles from the shared index by id: they no longer match, and their ids may
    be used again. (A tombstone {"id": ..., "op": "delete"} on the input topic does the same
    in stream order.)"""
    settings = _settings()
    index = _redis_index(settings)

    async def run() -> list[bool]:
        try:
            return await index.forget(list(ids))
        finally:
            await index.close()

    with _clean_errors():
        held = asyncio.run(run())
    for article_id, was in zip(ids, held, strict=True):
        click.echo(f"{'forgot' if was else 'not indexed'}: {article_id}")


@main.group()
def idf() -> None:
    """IDF tables, which weight the words of the default fingerprint (DEDUP_IDF_FILE)."""


@idf.command("build")
@click.argument("file", type=click.File("rb"))
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--cap", type=float, default=DEFAULT_CAP, show_default=True,
              help="Largest IDF; rarer units all weigh this much.")
def idf_build(file: IO[bytes], out: Path, cap: float) -> None:
    """Build an IDF table from FILE (one JSON article per line, as published)."""
    from worker.pipeline.decode import Article, decode_article
    from worker.text.features import units
    from worker.text.idf import IdfTable
    from worker.text.normalize import normalized_tokens

    settings = _settings()
    skipped = 0

    def documents() -> Iterator[list[str]]:
        nonlocal skipped
        for line in file:
            article = decode_article(line.rstrip(b"\r\n"), settings.max_message_bytes)
            if isinstance(article, Article):
                yield units(normalized_tokens(article.text), settings.chinese_tokens).items
            else:
                skipped += 1

    table = IdfTable.build(documents(), cap)
    table.save(out)
    click.echo(f"wrote {out}: {table.docs} articles, {len(table.weights)} units below the cap "
               f"{cap:g} ({skipped} lines skipped: not articles)", err=True)


@main.command()
def status() -> None:
    """What the shared index holds: articles, layout, bucket sizes, memory, retention."""
    from worker.index.redis.index import connect
    from worker.index.redis.status import read_status

    settings = _settings()
    client = connect(settings.redis_url, settings.redis_cluster)

    async def run() -> Status:
        try:
            return await read_status(client, settings.namespace)
        finally:
            await client.aclose()

    with _clean_errors():
        st = asyncio.run(run())
    layout = st.layout or {"layout": "(none yet: no worker has started on this namespace)"}
    click.echo(f"namespace      {settings.namespace}")
    click.echo(f"layout         {layout.get('layout')}, threshold {layout.get('threshold', '-')}, "
               f"related threshold {layout.get('related_threshold', '-')}")
    click.echo(f"tables         {layout.get('tables', '-')}")
    click.echo(f"articles       {st.records:,} with a verdict; {st.originals:,} originals in "
               f"the buckets; {st.exact_texts:,} distinct texts")
    click.echo(f"buckets        {st.buckets:,} holding {st.entries:,} entries "
               f"({st.entries_per_bucket:.1f} per bucket); largest {st.largest_bucket:,} "
               f"(reads stop at {settings.max_bucket_read:,}: DEDUP_MAX_BUCKET_READ)")
    click.echo("bucket sizes   " + ", ".join(f"<={size:,}: {count:,}"
                                             for size, count in st.bucket_sizes.items()))
    click.echo(f"memory         {st.redis_memory_bytes / 2**20:,.1f} MiB used by Redis "
               "(every namespace)")
    retention = (f"{settings.retention_days:g} days" if settings.retention_s
                 else "none: articles are kept for ever")
    click.echo(f"retention      {retention} (DEDUP_RETENTION_DAYS)")


def _redis_index(settings: Settings) -> RedisIndex:
    from worker.index.redis import RedisIndex

    return RedisIndex.from_settings(settings)


@main.command()
@click.option("--threshold", type=int, required=True, help="Largest Hamming distance k.")
@click.option("--docs", type=int, required=True, help="Articles the index will hold.")
@click.option("--recall", type=float, default=1.0, show_default=True,
              help="Least recall at every distance up to k; below 1 allows sampled tables.")
@click.option("--cosine", type=float, help="Also show what happens to a pair at this cosine.")
def plan(threshold: int, docs: int, recall: float, cosine: float | None) -> None:
    """Compare the index layouts for threshold K and N articles; mark the worker's choice."""
    from worker.layout import cosine as cos
    from worker.layout import planner

    settings = _settings(threshold=threshold, expected_docs=docs, recall=recall)
    chosen = planner.plan(threshold, docs, settings.max_bucket_read, recall)
    click.echo(f"threshold {threshold}, {docs:,} articles, recall >= {recall} at 0..{threshold},"
               f" at most {settings.max_bucket_read:,} entries read per bucket "
               "(figures predicted by the cost model in worker/layout/planner.py)")
    for line in planner.describe(chosen):
        click.echo(line)
    click.echo(f"chosen (*): {chosen.choice.layout.name()}: the fastest without hot buckets "
               "and with no more memory per article than the pigeonhole layout")
    if cosine is not None:
        try:
            f = cos.figures(cosine, chosen.choice.layout)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--cosine") from None
        click.echo(
            f"cosine {f.cosine}: angle {f.angle_degrees:.2f} deg; one bit agrees with "
            f"probability {f.bit_agreement:.2%}; expected {f.equal_bits:.2f} equal and "
            f"{f.differing_bits:.2f} differing bits of 64; exact 64-bit collision "
            f"{f.exact_collision:.3g}; distance <= {threshold}: {f.within_threshold:.3g}; "
            f"found by the chosen tables: {f.found:.3g}")


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("docs/quality"), show_default=True,
              help="Folder for results.md and the pictures.")
@click.option("--threshold", type=int, default=Settings().threshold, show_default=True,
              help="Threshold of this project's detector.")
@click.option("--originals", type=int, default=300, show_default=True,
              help="Originals per edited set (as many distractors).")
@click.option("--language", "languages", multiple=True, type=click.Choice(["en", "zh"]),
              default=("en", "zh"), show_default=True)
@click.option("--seed", type=int, default=2026, show_default=True,
              help="Draws the edited sets (another seed: another sample of articles and edits).")
def evaluate(out: Path, threshold: int, originals: int, languages: tuple[str, ...],
             seed: int) -> None:
    """Measure detection quality on real news (English and Chinese), edited and natural
    near-duplicates, beside datasketch MinHashLSH and the simhash library."""
    from evaluation.run import evaluate as run_evaluation

    with _clean_errors():
        run_evaluation(out, threshold, originals, originals, languages,
                       log=lambda line: click.echo(line, err=True), seed=seed)
    click.echo(f"wrote {out / 'results.md'}", err=True)


def _chunks(file: IO[bytes], size: int) -> Iterator[tuple[int, list[bytes]]]:
    chunk: list[bytes] = []
    first = 1
    for number, line in enumerate(file, start=1):
        chunk.append(line.rstrip(b"\r\n"))
        if len(chunk) == size:
            yield first, chunk
            chunk, first = [], number + 1
    if chunk:
        yield first, chunk


def _settings(**overrides: Any) -> Settings:
    with _clean_errors():
        return Settings.from_env(**overrides)


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Our errors end the command with their message, not a traceback."""
    try:
        yield
    except DedupError as exc:
        raise click.ClickException(str(exc)) from exc
