"""A cluster of near copies of one story growing in one index, 100 articles a batch: per step,
the batch's time, its script calls and the longest of them (Redis's SLOWLOG), Redis's CPU
per article, and the candidates per article (tables: entries compared; bands: postings
read). Then as many fresh articles (news documents: bench_growth's) decided in the same
index, and what a copy's decision cost Redis against a fresh one's.

With the SimHash tables (`--layout auto`) a copy is 0-3 bits off one search fingerprint. Once
the cluster's buckets hold more than DEDUP_MAX_BUCKET_READ entries the worker leaves their
search to the script; a call carries at most scripts.SEARCHED_PER_CALL such articles, so that
no call holds Redis's one thread for long (past lua-time-limit Redis answers BUSY to every
other client). With bands (`--layout bands:16x4`) a copy is the first story of the News
Articles corpus with up to a tenth of its words replaced, fingerprinted as the worker does,
and the worker guesses each batch. Uses (and empties) the Redis database it is given."""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from benchmarks.bench_growth import probes, supply
from benchmarks.bench_index import server_cpu_s
from evaluation import corpora
from tests.support.factories import flip, probe
from worker import wiring
from worker.index.redis import RedisBandIndex, RedisIndex, scripts
from worker.index.redis.client import Client, connect
from worker.index.redis.namespace_index import NamespaceIndex
from worker.layout.bands import Bands
from worker.model import Probe
from worker.settings import Settings

BATCH = 100


def copies(layout: object, count: int, rng: random.Random) -> list[Probe]:
    """`count` near copies of one story, as the layout is tested with."""
    if not isinstance(layout, Bands):
        base = rng.getrandbits(64)
        return [
            probe(f"c{n}", flip(base, rng.sample(range(64), rng.randint(0, 3))))
            for n in range(count)
        ]
    words = corpora.news_articles()[0].text.split()
    texts = []
    for _ in range(count):
        copy = list(words)
        for at in rng.sample(range(len(copy)), rng.randint(0, len(copy) // 10)):
            copy[at] = rng.choice(words)
        texts.append([" ".join(copy)])
    return probes(wiring.fingerprinter(Settings()), texts, "c", 0)


async def decide(
    admin: Client, index: NamespaceIndex, articles: list[Probe], every: int, label: str
) -> float:
    """Decide `articles` 100 a batch, printing every `every` batches; Redis's CPU per
    article over all of them (us)."""
    cpu_all = await server_cpu_s(admin)
    for step, first in enumerate(range(0, len(articles), BATCH), start=1):
        batch = articles[first : first + BATCH]
        await admin.slowlog_reset()
        cpu, started = await server_cpu_s(admin), time.perf_counter()
        verdicts = await index.check_and_insert(batch)
        took = time.perf_counter() - started
        cpu_us = (await server_cpu_s(admin) - cpu) / len(batch) * 1e6
        if step % every == 0:
            log = await admin.slowlog_get(100_000)
            calls = [e["duration"] for e in log if e["command"].startswith(b"EVALSHA")]
            compared = sum(v.candidates for v in verdicts) / len(verdicts)
            print(
                f"{first + len(batch):7,} {label}: batch {took * 1000:7.0f} ms, script calls "
                f"{len(calls):3}, longest {max(calls, default=0) / 1000:7.1f} ms, Redis CPU "
                f"{cpu_us:5.0f} us per article, {compared:,.0f} candidates per article",
                flush=True,
            )
    return (await server_cpu_s(admin) - cpu_all) / len(articles) * 1e6


async def run(args: argparse.Namespace) -> None:
    admin = connect(args.redis_url)
    await admin.flushdb()
    old = await admin.config_get("slowlog-*")
    await admin.config_set("slowlog-log-slower-than", 0)
    await admin.config_set("slowlog-max-len", 100_000)
    settings = Settings(expected_docs=2 * args.copies, layout=args.layout)
    layout = wiring.layout(settings)
    index: NamespaceIndex = (
        RedisBandIndex(
            connect(args.redis_url),
            "cluster",
            layout,
            wiring.index_options(settings),
            expected_docs=settings.expected_docs,
        )
        if isinstance(layout, Bands)
        else RedisIndex(connect(args.redis_url), "cluster")
    )
    rng = random.Random(1)
    cluster = copies(layout, args.copies, rng)
    fresh = supply("news", wiring.fingerprinter(settings), 1)
    print(f"layout {layout.name()}")
    try:
        copy_us = await decide(admin, index, cluster, args.every, "copies")
        fresh_us = await decide(
            admin, index, [next(fresh) for _ in range(args.copies)], args.every, "fresh"
        )
        print(
            f"Redis CPU per article: a copy {copy_us:.0f} us, a fresh article {fresh_us:.0f}"
            f" us ({copy_us / fresh_us:.2f}x)"
        )
    finally:
        await index.close()
        await admin.config_set("slowlog-log-slower-than", old["slowlog-log-slower-than"])
        await admin.config_set("slowlog-max-len", old["slowlog-max-len"])
        await admin.flushdb()
        await admin.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=6000)
    parser.add_argument("--every", type=int, default=10, help="print every this many batches")
    parser.add_argument("--searched-per-call", type=int, default=scripts.SEARCHED_PER_CALL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11")
    parser.add_argument("--layout", default="auto", help="DEDUP_LAYOUT: auto, or bands:16x4")
    args = parser.parse_args()
    scripts.SEARCHED_PER_CALL = args.searched_per_call
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
