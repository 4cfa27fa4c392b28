"""The worker's own CPU per article, stage by stage, at the defaults, on real Redis: decode,
fingerprint, the index's read (MGET and the comparison in numpy), building the script calls,
the script calls, reading their replies, and building the output messages. Batches of 100 of
the end-to-end benchmark's articles, after N of them are indexed; each stage timed with
`time.process_time` (the worker's CPU, not the time it waits on Redis), and Redis's own CPU
per article beside them. No Kafka: what the worker adds to a passthrough, less faust's work.

Then Redis's CPU per article for a batch's script calls against how many entries another
worker inserted between the batch's read and its calls (as when two workers' batches
overlap): the script compares those itself (check_and_insert.lua, search_since). Random
fingerprints, taking turns across the counts.

Times RedisIndex's steps apart (read_buckets, script_calls, scripts.run). With `--markdown`,
also both as the tables of docs/performance.md.
Needs Redis (`bash stack/local-stack.sh up`); uses database 12 and empties it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time

from benchmarks.bench_index import random_probes, server_cpu_s
from benchmarks.markdown import table
from benchmarks.redis_state import aof_size, settle, wipe
from tests.support.corpus import make_articles
from worker import wiring
from worker.index.base import IndexOptions
from worker.index.redis import RedisIndex, scripts
from worker.index.redis.client import Client, connect
from worker.index.redis.scripts import Script
from worker.model import Accepted, Article, Probe
from worker.pipeline.decode import decode_article
from worker.pipeline.outputs import Source, output_messages
from worker.settings import Settings

BATCH = 100
STAGES = {  # each timed step, and its column in the Markdown table
    "decode": "decode",
    "fingerprint": "fingerprint",
    "read": "read the buckets",
    "calls": "build the script calls",
    "script": "script calls",
    "replies": "replies",
    "messages": "output messages",
}
SINCE_READ = (0, 50, 100, 200, 400)  # entries another worker inserts between read and calls


async def run(args: argparse.Namespace) -> None:
    settings = Settings()
    client = connect(args.redis_url)
    await wipe(client)
    index = RedisIndex(
        client,
        "stages",
        wiring.layout(settings),
        options=IndexOptions(similarity=settings.similarity),
    )
    pipeline = wiring.pipeline(settings, index)
    values = [json.dumps(a).encode() for a in make_articles(args.docs + args.measure)]
    for start in range(0, args.docs, BATCH):
        await pipeline.run(values[start : start + BATCH])
    await settle(client)

    spent = dict.fromkeys(STAGES, 0.0)
    clock = time.process_time
    cpu_before, aof_before = await server_cpu_s(client), await aof_size(client)
    for start in range(args.docs, len(values), BATCH):
        batch = values[start : start + BATCH]
        t = clock()
        articles = [decode_article(v, settings.max_message_bytes) for v in batch]
        spent["decode"] += clock() - t
        assert all(isinstance(a, Article) for a in articles)
        texts = [a.text for a in articles if isinstance(a, Article)]
        t = clock()
        fingerprints = pipeline.fingerprinter.many(texts)
        spent["fingerprint"] += clock() - t
        probes = [
            Probe(a.id, fp.content_hash, fp.search, fp.sketch)
            for a, fp in zip(articles, fingerprints, strict=True)
            if isinstance(a, Article)
        ]
        t = clock()
        reads = await index.read_buckets(probes)
        spent["read"] += clock() - t
        t = clock()
        assert index.epoch is not None
        calls = [c.argv for c in index.script_calls.calls(probes, reads, index.epoch)]
        spent["calls"] += clock() - t
        t = clock()
        replies = [
            r for call in await scripts.run(client, Script.CHECK_AND_INSERT, calls) for r in call
        ]
        spent["script"] += clock() - t
        t = clock()
        verdicts = [index.script_calls.verdict(p, r) for p, r in zip(probes, replies, strict=True)]
        spent["replies"] += clock() - t
        t = clock()
        for article, fp, verdict, raw in zip(articles, fingerprints, verdicts, batch, strict=True):
            assert isinstance(article, Article)
            output_messages(
                Accepted(article, fp, verdict),
                raw,
                article.id.encode(),
                Source("articles", 0, start),
                settings.max_message_bytes,
                threshold=settings.threshold,
                related_threshold=settings.related_threshold,
            )
        spent["messages"] += clock() - t
    redis_us = (await server_cpu_s(client) - cpu_before) / args.measure * 1e6
    aof = growth(aof_before, await aof_size(client), args.measure)
    await wipe(client)
    await client.aclose()

    per_article = {stage: s / args.measure * 1e6 for stage, s in spent.items()}
    print(
        f"{args.measure:,} articles in batches of {BATCH}, {args.docs:,} indexed before; "
        "worker CPU per article (us):"
    )
    print("  " + "  ".join(f"{stage} {us:.1f}" for stage, us in per_article.items()))
    print(
        f"  total {sum(per_article.values()):.1f} us;  Redis CPU per article {redis_us:.1f} us; "
        f"its append-only file {aof}"
    )

    client = connect(args.redis_url)
    since = await since_read(client, settings, args.docs, args.trials)
    await wipe(client)
    await client.aclose()
    print(
        f"Redis CPU per article of a batch's script calls ({args.trials} batches each, "
        f"{args.docs:,} indexed before), by the entries another worker inserted between the "
        "batch's read and its calls: "
        + ", ".join(f"{others} {us:.1f} us" for others, us in since.items())
    )
    if args.markdown:
        print("\n" + markdown(per_article, redis_us, since))


def markdown(per_article: dict[str, float], redis_us: float, since: dict[int, float]) -> str:
    """The two tables of docs/performance.md: the steps, and Redis by the entries since a read."""
    steps = [*per_article.values(), sum(per_article.values()), redis_us]
    return (
        table([*STAGES.values(), "total", "Redis"], [[f"{us:.1f} us" for us in steps]])
        + "\n\n"
        + table(
            ["entries inserted since the read", *map(str, since)],
            [["Redis CPU per article", *(f"{us:.1f} us" for us in since.values())]],
        )
    )


def growth(before: tuple[int, int] | None, after: tuple[int, int] | None, articles: int) -> str:
    """What Redis's append-only file grew by per article (its writes, as it logs them)."""
    if before is None or after is None:
        return "(none kept)"
    if after[1] != before[1]:
        return "(rewritten meanwhile: not measured)"
    return f"grew {(after[0] - before[0]) / articles:.0f} bytes per article"


async def since_read(
    client: Client, settings: Settings, docs: int, trials: int
) -> dict[int, float]:
    """Redis's CPU per article of a batch's script calls, by how many entries another worker
    inserted after the batch's read (SINCE_READ)."""
    await wipe(client)
    layout = wiring.layout(settings)
    worker, other = RedisIndex(client, "since", layout), RedisIndex(client, "since", layout)
    rng = random.Random(7)
    for start in range(0, docs, 2000):
        await worker.check_and_insert(random_probes(rng, min(2000, docs - start), f"d{start}-"))
    await settle(client)
    spent = dict.fromkeys(SINCE_READ, 0.0)
    for trial in range(trials):
        for others in SINCE_READ:
            batch = random_probes(rng, BATCH, f"b{trial}-{others}-")
            reads = await worker.read_buckets(batch)
            await other.check_and_insert(random_probes(rng, others, f"o{trial}-{others}-"))
            before = await server_cpu_s(client)
            await worker.run_checks(batch, reads)
            spent[others] += await server_cpu_s(client) - before
    return {others: s / (trials * BATCH) * 1e6 for others, s in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=40_000, help="articles indexed first")
    parser.add_argument("--measure", type=int, default=20_000, help="articles timed")
    parser.add_argument(
        "--trials", type=int, default=40, help="batches per count of entries since the read"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    parser.add_argument(
        "--markdown", action="store_true", help="also print the figures as Markdown tables"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
