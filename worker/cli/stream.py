"""The commands around the stream: run the worker, publish articles, follow the alerts."""

from __future__ import annotations

import asyncio
import json
import logging.config
import sys
from typing import IO, Any

import click

from worker import wiring
from worker.cli.common import clean_errors, retry_startup, settings_from_env
from worker.settings import Settings


@click.command()
def worker() -> None:
    """Run the stream worker: consume articles, emit verdicts (Ctrl-C to stop)."""
    from worker.stream.app import run_worker
    from worker.stream.logs import logging_config

    settings = settings_from_env()
    config = logging_config(settings.log_level, settings.log_format, settings.secrets)
    logging.config.dictConfig(config)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    with clean_errors():
        loop.run_until_complete(_prepare(settings))
    run_worker(settings, loop, config)


async def _prepare(settings: Settings) -> None:
    """Topics exist and the index's layout matches ours, before the stream starts."""
    from worker.stream.kafka import check_credentials, ensure_topics

    await retry_startup(lambda: check_credentials(settings), "Kafka")
    await retry_startup(lambda: ensure_topics(settings), "Kafka")
    index = wiring.redis_index(settings, wiring.fingerprinter(settings))
    try:
        await retry_startup(index.ensure_layout, "Redis")
    finally:
        await index.close()


@click.command()
@click.argument("file", type=click.File("rb"))
@click.option("--topic", help="Topic to send to (default: the input topic).")
def publish(file: IO[bytes], topic: str | None) -> None:
    """Send the articles in FILE (one JSON object per line) to the input topic.

    Each line is sent as it is, keyed by its id; the worker dead-letters lines that are
    not valid articles.
    """
    settings = settings_from_env()
    lines = [line.rstrip(b"\r\n") for line in file]
    lines = [line for line in lines if line.strip()]
    with clean_errors():
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


@click.command()
@click.option("--from-beginning", is_flag=True, help="Show earlier alerts too.")
@click.option("--rejected", is_flag=True, help="Also show dead letters.")
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
@click.option("--idle-timeout", type=float, help="Stop after this many seconds of silence.")
@click.option("--max", "max_messages", type=int, help="Stop after this many messages.")
def alerts(
    from_beginning: bool,
    rejected: bool,
    as_json: bool,
    idle_timeout: float | None,
    max_messages: int | None,
) -> None:
    """Follow the duplicate alerts, one readable line each."""
    settings = settings_from_env()
    topics = [settings.duplicates_topic] + ([settings.rejected_topic] if rejected else [])
    with clean_errors():
        asyncio.run(_follow(settings, topics, from_beginning, as_json, idle_timeout, max_messages))


async def _follow(
    settings: Settings,
    topics: list[str],
    from_beginning: bool,
    as_json: bool,
    idle_timeout: float | None,
    max_messages: int | None,
) -> None:
    from worker.stream.kafka import consumer

    shown = 0
    async with consumer(settings, topics, from_beginning) as client:
        while max_messages is None or shown < max_messages:
            try:
                message = await asyncio.wait_for(client.getone(), idle_timeout)
            except TimeoutError:
                return
            body = json.loads(message.value)
            line = json.dumps(body, ensure_ascii=False) if as_json else alert_line(body)
            click.echo(line)
            shown += 1


def alert_line(body: dict[str, Any]) -> str:
    """One readable line for an alert or a dead letter."""
    if "reason" in body:
        where = body.get("source") or {}
        return (
            f"rejected   partition {where.get('partition')} offset {where.get('offset')}: "
            f"{body['reason']}: {body['detail']}"
        )
    sign = "=" if body["kind"] == "exact" else "~"
    first = body.get("original", body["duplicate_of"])
    return (
        f"{body['kind']:<10} {body['id']} {sign} {body['duplicate_of']}   "
        f"similarity {body['similarity']:.2f}   "
        f"distance {body['distance']}/{body['threshold']}   "
        f"{body['fingerprint']} vs {body['duplicate_of_fingerprint']}"
        + (f"   original {first}" if first != body["duplicate_of"] else "")
    )
