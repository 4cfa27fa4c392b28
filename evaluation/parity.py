"""`python -m evaluation.parity`: every development set decided by the embedded index and by
the shared Redis index (DEDUP_REDIS_URL, a namespace of its own per set, removed after), with
the same settings (e.g. --setting layout=bands:16x4); the verdicts compared item by item.
The quality figures, measured through the embedded index, hold for the worker's index when
none is apart."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Sequence

import click

from evaluation.__main__ import parse_settings
from evaluation.devsets import every_set
from worker import wiring
from worker.cli.common import clean_errors
from worker.index.redis.keys import NamespaceKeys
from worker.model import Accepted
from worker.pipeline.pipeline import Pipeline
from worker.settings import Settings

Verdicts = list[tuple[str, str | None, int | None, float | None]]


async def _decide(pipeline: Pipeline, messages: Sequence[bytes], batch: int) -> Verdicts:
    out: Verdicts = []
    for start in range(0, len(messages), batch):
        for d in await pipeline.run(list(messages[start : start + batch])):
            if not isinstance(d, Accepted):
                raise ValueError(f"an evaluation item was not accepted: {d}")
            v = d.verdict
            out.append((v.kind.value, v.duplicate_of, v.distance, v.similarity))
    return out


async def apart(settings: Settings, messages: Sequence[bytes]) -> tuple[int, list[int]]:
    """The items, and the places of those whose verdicts differ."""
    embedded = await _decide(
        wiring.pipeline(settings, wiring.memory_index(settings)), messages, settings.batch_size
    )
    fingerprinter = wiring.fingerprinter(settings)
    index = wiring.redis_index(settings, fingerprinter)
    try:
        shared = await _decide(
            wiring.pipeline(settings, index, fingerprinter), messages, settings.batch_size
        )
    finally:
        client = index.client
        async for key in client.scan_iter(match=f"{NamespaceKeys(settings.namespace).prefix}*"):
            await client.delete(key)
        await index.close()
    return len(embedded), [
        i for i, (a, b) in enumerate(zip(embedded, shared, strict=True)) if a != b
    ]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--setting", "settings", multiple=True, metavar="NAME=VALUE")
@click.option("--only", multiple=True, metavar="SET", help="Only the sets whose names start so.")
def parity(settings: tuple[str, ...], only: tuple[str, ...]) -> None:
    """Decide each development set with the embedded and the shared index; print the
    verdicts apart per set; exit 1 if any."""
    with clean_errors():
        changes = parse_settings(settings)
        total = differing = 0
        for dev in every_set():
            if only and not dev.name.startswith(only):
                continue
            run = Settings.from_env(
                namespace=f"parity-{secrets.token_hex(4)}",
                max_message_bytes=1 << 26,
                **changes,
            )
            messages = [json.dumps({"id": i.id, "text": i.text}).encode() for i in dev.items]
            items, differ = asyncio.run(apart(run, messages))
            total, differing = total + items, differing + len(differ)
            shown = ", ".join(dev.items[i].id for i in differ[:5])
            click.echo(f"{dev.name:<24} {items:>6} items, {len(differ)} apart {shown}")
        click.echo(f"every set: {total} items, {differing} apart")
    if differing:
        raise SystemExit(1)


if __name__ == "__main__":
    parity()
