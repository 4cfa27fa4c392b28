"""The commands on the shared index: forget articles, report its status, plan its layout."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import TYPE_CHECKING

import click

from worker import defaults, wiring
from worker.cli.common import clean_errors, settings_from_env
from worker.settings import Settings

if TYPE_CHECKING:
    from worker.index.redis.status import Status


@click.command()
@click.argument("ids", nargs=-1, required=True)
@click.option(
    "--now",
    is_flag=True,
    help="Remove them from the index at once and write their tombstones, out of stream order.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as one JSON object.")
def forget(ids: tuple[str, ...], now: bool, as_json: bool) -> None:
    """Delete articles by id: a delete {"id": ..., "op": "delete"} for each goes to the input
    topic, keyed by the id, and the workers apply it in stream order (the article leaves the
    index; a Kafka tombstone goes to the unique topic). With --now, this command does both
    itself, at once: a newer version of an id still waiting in the input topic then brings it
    back."""
    settings = settings_from_env()
    with clean_errors():
        if not now:
            asyncio.run(_send(settings, settings.input_topic, [(i, _delete(i)) for i in ids]))
            if as_json:
                click.echo(json.dumps({"deletes_sent": list(ids), "topic": settings.input_topic}))
            else:
                click.echo(f"sent {len(ids)} deletes to {settings.input_topic}", err=True)
            return
        held = asyncio.run(_forget_now(settings, list(ids)))
    if as_json:
        forgot = {"forgot": [i for i, was in zip(ids, held, strict=True) if was]}
        forgot["not_indexed"] = [i for i, was in zip(ids, held, strict=True) if not was]
        click.echo(json.dumps(forgot))
        return
    for article_id, was in zip(ids, held, strict=True):
        click.echo(f"{'forgot' if was else 'not indexed'}: {article_id}")


def _delete(article_id: str) -> bytes:
    return json.dumps({"id": article_id, "op": "delete"}).encode("utf-8")


async def _forget_now(settings: Settings, ids: list[str]) -> list[bool]:
    """Out of the index, then a tombstone for each id on the unique topic, as the worker
    writes for a delete."""
    index = wiring.redis_index(settings)
    try:
        held = await index.forget(ids)
    finally:
        await index.close()
    await _send(settings, settings.unique_topic, [(i, None) for i in ids])
    return held


async def _send(settings: Settings, topic: str, messages: list[tuple[str, bytes | None]]) -> None:
    """Each (id, value) to `topic`, keyed by the id; returns once Kafka has them all."""
    from worker.stream.kafka import ensure_topics, producer

    await ensure_topics(settings)
    async with producer(settings) as client:
        pending = [await client.send(topic, v, key=k.encode("utf-8")) for k, v in messages]
        await asyncio.gather(*pending)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
def status(as_json: bool) -> None:
    """What the shared index holds: articles, layout, bucket sizes, memory, retention."""
    from worker.index.redis.status import read_status

    settings = settings_from_env()
    client = wiring.redis_client(settings)

    async def run() -> Status:
        try:
            return await read_status(client, settings.namespace)
        finally:
            await client.aclose()

    with clean_errors():
        st = asyncio.run(run())
    if as_json:
        record = {"namespace": settings.namespace, **dataclasses.asdict(st)}
        record["nodes"] = [dataclasses.asdict(node) for node in st.nodes]
        record["entries_per_bucket"] = st.entries_per_bucket
        record["sized_for"] = st.sized_for
        record["max_bucket_read"] = settings.max_bucket_read
        record["retention_days"] = settings.retention_days or None
        click.echo(json.dumps(record))
        return
    layout = st.layout or {"layout": "(none yet: no worker has started on this namespace)"}
    click.echo(f"namespace      {settings.namespace}")
    click.echo(
        f"layout         {layout.get('layout')}, threshold {layout.get('threshold', '-')}, "
        f"related threshold {layout.get('related_threshold', '-')}"
    )
    click.echo(f"tables         {layout.get('tables', '-')}")
    click.echo(
        f"articles       {st.records:,} with a verdict; {st.originals:,} originals in "
        f"the buckets; {st.exact_texts:,} distinct texts"
    )
    if st.sized_for is not None:
        click.echo(
            f"sized for      up to {st.sized_for:,} articles (DEDUP_EXPECTED_DOCS when the "
            "namespace was made)"
        )
    if st.outgrown:
        click.echo(
            f"WARNING        {st.exact_texts:,} distinct texts: far more than the "
            "namespace was made for, so its small hashes and group strings outgrow the form "
            "Redis keeps compact (more memory and reads per article); rebuild it into a "
            "namespace made with a larger DEDUP_EXPECTED_DOCS"
        )
    click.echo(
        f"buckets        {st.buckets:,} holding {st.entries:,} entries "
        f"({st.entries_per_bucket:.1f} per bucket); largest {st.largest_bucket:,} "
        f"(reads stop at {settings.max_bucket_read:,}: DEDUP_MAX_BUCKET_READ)"
    )
    click.echo(
        "bucket sizes   "
        + ", ".join(f"<={size:,}: {count:,}" for size, count in st.bucket_sizes.items())
    )
    click.echo(
        f"memory         {st.redis_memory_bytes / 2**20:,.1f} MiB used by Redis (every namespace)"
    )
    for node in st.nodes:
        share = node.keys / st.keys if st.keys else 0.0
        click.echo(
            f"node           {node.address}: {share:.1%} of the namespace's keys "
            f"({node.keys:,}); {node.used_memory_bytes / 2**20:,.1f} MiB used (every namespace)"
        )
    retention = (
        f"{settings.retention_days:g} days"
        if settings.retention_s
        else "none: articles are kept for ever"
    )
    click.echo(f"retention      {retention} (DEDUP_RETENTION_DAYS)")


@click.command()
@click.option("--threshold", type=int, required=True, help="Largest Hamming distance k.")
@click.option("--docs", type=int, required=True, help="Articles the index will hold.")
@click.option(
    "--recall",
    type=float,
    default=1.0,
    show_default=True,
    help="Least recall at every distance up to k; below 1 allows sampled tables.",
)
@click.option("--cosine", type=float, help="Also show what happens to a pair at this cosine.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as one JSON object.")
def plan(threshold: int, docs: int, recall: float, cosine: float | None, as_json: bool) -> None:
    """Compare the index layouts for threshold K and N articles; mark the worker's choice."""
    from worker.layout import bands, planner
    from worker.layout import cosine as cos

    settings = settings_from_env(threshold=threshold, expected_docs=docs, recall=recall)
    chosen = planner.plan(threshold, docs, settings.max_bucket_read, recall)
    uses = settings.layout_spec  # (auto: the planner's tables, or bands past a size)
    worker_layout = chosen.choice.layout.name() if uses == "auto" else uses
    if as_json and cosine is None:
        record = planner.plan_record(chosen)
        record.update(bands=bands.plan_records(docs), worker_layout=worker_layout)
        click.echo(json.dumps(record))
        return
    if as_json:
        raise click.UsageError("--json and --cosine go separately")
    click.echo(
        f"threshold {threshold}, {docs:,} articles, recall >= {recall} at 0..{threshold},"
        f" at most {settings.max_bucket_read:,} entries read per bucket "
        "(figures predicted by the cost models in worker/layout/planner.py and bands.py)"
    )
    for line in planner.plan_table(chosen, mark="*" if uses == "auto" else "+"):
        click.echo(line)
    click.echo(
        "band layouts (DEDUP_LAYOUT=bands:BxR): candidates from bands of the set "
        "sketch, judged by it alone; the work per article is bounded whatever the index holds"
    )
    for line in bands.plan_table(docs, chosen=uses):
        click.echo(line)
    click.echo(
        f"the worker's layout (*): {worker_layout}; with DEDUP_LAYOUT=auto the planner's "
        "tables (+ when the worker takes another: the fastest without hot buckets and with no "
        "more memory per article than the pigeonhole layout) up to "
        f"{defaults.AUTO_BANDS_PAST:,} expected articles, {defaults.AUTO_BANDS} past them, "
        "and the tables whenever related alerts are on"
    )
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
            f"found by the chosen tables: {f.found:.3g}"
        )
