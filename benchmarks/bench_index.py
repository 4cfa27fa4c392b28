"""Check-and-insert on real Redis with N articles already indexed, per table layout.

For each layout: bulk-load N random fingerprints (plus planted originals), then time checks
one call at a time (latency p50/p99 as the client sees it), pipelined, and by two
pipelined callers at once (as two worker replicas would), and check that the
planted copies at every distance 0..k are found. Prints the planner's predictions beside the
measurements, so the cost model can be checked (docs/scaling.md). With `--markdown`, also the
table of docs/performance.md, one row per layout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import time
from dataclasses import dataclass

from benchmarks.markdown import table
from benchmarks.redis_state import settle, wipe
from worker import defaults, wiring
from worker.index.base import IndexOptions
from worker.index.redis import RedisIndex
from worker.index.redis.client import Client, connect
from worker.index.redis.format import SKETCH_BYTES
from worker.layout.planner import estimate, plan
from worker.layout.tables import Layout
from worker.model import Kind, Probe, Verdict
from worker.settings import Settings

LOAD_BATCH = 2000
PLANTED_PER_DISTANCE = 30
PLANTED_SIMILARITY = 0.9  # of a planted copy's sketch to its original's
UNBOUNDED = 10**9  # read whole buckets: exact layouts must then find every planted pair


def random_probes(rng: random.Random, count: int, prefix: str) -> list[Probe]:
    """Random articles, each with a random set sketch (what unrelated texts have)."""
    return [
        Probe(f"{prefix}{i}", rng.randbytes(16), rng.getrandbits(64), rng.randbytes(SKETCH_BYTES))
        for i in range(count)
    ]


def sketch_sharing(rng: random.Random, sketch: bytes, similarity: float) -> bytes:
    """A sketch agreeing with `sketch` on about `similarity` of its bins."""
    return bytes(b if rng.random() < similarity else b ^ 0x5A for b in sketch)


def moved(rng: random.Random, fp: int, distance: int) -> int:
    for bit in rng.sample(range(64), distance):
        fp ^= 1 << bit
    return fp


@dataclass
class Planted:
    originals: list[Probe]
    copies: list[tuple[Probe, str, int]]  # the copy, its original's id, the distance


def planted(rng: random.Random, threshold: int) -> Planted:
    originals, copies = [], []
    for d in range(threshold + 1):
        for n in range(PLANTED_PER_DISTANCE):
            sketch = rng.randbytes(SKETCH_BYTES)
            original = Probe(f"orig-{d}-{n}", rng.randbytes(16), rng.getrandbits(64), sketch)
            assert original.fingerprint is not None
            originals.append(original)
            copy = Probe(
                f"copy-{d}-{n}",
                rng.randbytes(16),
                moved(rng, original.fingerprint, d),
                sketch_sharing(rng, sketch, PLANTED_SIMILARITY),
            )
            copies.append((copy, original.id, d))
    return Planted(originals, copies)


async def load(index: RedisIndex, rng: random.Random, docs: int, extra: list[Probe]) -> float:
    """Index `docs` random articles and `extra` without checking them (max_bucket_read 0)."""
    loader = RedisIndex(
        index.client,
        index.namespace,
        index.layout,
        options=IndexOptions(max_bucket_read=0, similarity=index.rule.similarity),
    )
    start = time.perf_counter()
    for first in range(0, docs, LOAD_BATCH):
        await loader.check_and_insert(
            random_probes(rng, min(LOAD_BATCH, docs - first), f"d{first}-")
        )
    await loader.check_and_insert(extra)
    return time.perf_counter() - start


async def pipelined(
    indexes: list[RedisIndex], batches: list[list[Probe]], depth: int, budget_s: float
) -> tuple[float, int]:
    """Callers running side by side (like worker replicas; here in one process), each
    checking its batch `depth` articles per call: articles/s, and how many were done."""
    done = 0

    async def caller(index: RedisIndex, batch: list[Probe]) -> None:
        nonlocal done
        for first in range(0, len(batch), depth):
            await index.check_and_insert(batch[first : first + depth])
            done += len(batch[first : first + depth])
            if time.perf_counter() - start > budget_s:
                break

    start = time.perf_counter()
    await asyncio.gather(*map(caller, indexes, batches))
    return done / (time.perf_counter() - start), done


async def measure(
    index: RedisIndex,
    url: str,
    layout_label: str,
    docs: int,
    count: int,
    depth: int,
    budget_s: float,
    seed: int,
) -> list[str]:
    """Prints the figures; returns them as a row of the `--markdown` table (run())."""
    client = index.client
    layout = index.layout
    rng = random.Random(seed)
    plants = planted(rng, layout.search_radius)
    await wipe(client)
    base_memory = (await client.info("memory"))["used_memory"]
    load_s = await load(index, rng, docs, plants.originals)
    memory = ((await client.info("memory"))["used_memory"] - base_memory) / docs
    settle_s = await settle(client)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    refresh_start = time.perf_counter()
    await index.refresh()  # the bucket cache loaded before timing, if it has one
    refresh_s = time.perf_counter() - refresh_start
    copy_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    predicted = estimate(layout, docs, index.max_bucket_read)
    print(f"\n{layout_label}: {layout.name()}  [{layout.spec()}]")
    print(
        f"  loaded {docs:,} in {load_s:.0f} s ({docs / load_s:,.0f}/s); AOF rewritten "
        f"before timing ({settle_s:.0f} s)"
    )
    if index.uses_bucket_cache:
        print(
            f"  the bucket cache loaded in {refresh_s:.1f} s; the benchmark's "
            f"peak memory grew {copy_mb:,.0f} MB"
        )

    await client.config_resetstat()
    # One at a time: random articles, then the planted copies (they also count as work).
    queries = random_probes(rng, count, "one-") + [c for c, _, _ in plants.copies]
    latencies: list[float] = []
    verdicts: list[Verdict] = []
    deadline = time.perf_counter() + budget_s
    for p in queries:
        if time.perf_counter() > deadline and len(latencies) >= 100 and p.id.startswith("one-"):
            continue  # out of time: skip to the planted copies, which must all be checked
        start = time.perf_counter()
        [v] = await index.check_and_insert([p])
        latencies.append(time.perf_counter() - start)
        assert isinstance(v, Verdict)
        verdicts.append(v)
    await client.config_resetstat()
    single = len(latencies) / sum(latencies)
    found = {v.id: v for v in verdicts}
    hits = [
        found[c.id].kind is Kind.NEAR
        and found[c.id].duplicate_of == orig
        and found[c.id].distance == d
        for c, orig, d in plants.copies
    ]
    candidates = statistics.mean(v.candidates for v in verdicts)

    cpu_before = await server_cpu_s(client)
    piped, done = await pipelined([index], [random_probes(rng, count, "pipe-")], depth, budget_s)
    cpu_us = (await server_cpu_s(client) - cpu_before) / done * 1e6
    stats = await client.info("commandstats")
    script_us = stats["cmdstat_evalsha"]["usec"] / done  # per article: one call decides ~25
    read_us = stats.get("cmdstat_mget", {}).get("usec", 0) / done  # one MGET reads ~25
    second = RedisIndex(
        connect(url),
        index.namespace,
        layout,
        bucket_cache=index.uses_bucket_cache,
        options=IndexOptions(
            max_bucket_read=index.max_bucket_read, similarity=index.rule.similarity
        ),
    )
    await second.refresh()
    both, _ = await pipelined(
        [index, second],
        [random_probes(rng, count // 2, f"two{n}-") for n in range(2)],
        depth,
        budget_s,
    )
    await second.close()

    quantiles = statistics.quantiles(latencies, n=100)
    print(
        f"  one call at a time: {single:9,.0f} articles/s   p50 {quantiles[49] * 1e3:.2f} ms, "
        f"p99 {quantiles[98] * 1e3:.2f} ms  ({len(latencies):,} calls)"
    )
    print(f"  pipelined {depth:>3} deep: {piped:9,.0f} articles/s   ({piped / single:.1f}x)")
    print(f"  two callers, each so:  {both:9,.0f} articles/s   ({both / single:.1f}x)")
    print(
        f"  server time per article: {cpu_us:,.0f} us measured (CPU, pipelined; in "
        f"commandstats: the bucket reads {read_us:,.0f} us, the script {script_us:,.0f} us), "
        f"{predicted.server_us:,.0f} us predicted"
    )
    print(
        f"  candidates per article:  {candidates:,.0f} measured, {predicted.candidates:,.0f} "
        f"predicted; per probe {candidates / layout.probes:,.2f} ({layout.probes} probes)"
    )
    print(
        f"  memory per article:      {memory:,.0f} B measured, "
        f"{predicted.bytes_per_article:,.0f} B predicted"
    )
    per_d = [
        sum(hits[d * PLANTED_PER_DISTANCE : (d + 1) * PLANTED_PER_DISTANCE]) / PLANTED_PER_DISTANCE
        for d in range(layout.search_radius + 1)
    ]
    print(
        f"  recall on planted pairs at distance 0..{layout.search_radius}: "
        + " ".join(f"{r:.2f}" for r in per_d)
        + f"   (computed: {' '.join(f'{layout.recall(d):.2f}' for d in range(len(per_d)))})"
    )
    source = (
        "from the bucket cache (the default)"
        if index.uses_bucket_cache
        else "from Redis (`DEDUP_BUCKET_CACHE=false`)"
    )
    if layout_label != "planner's choice":
        source = f"{layout.name()}, {source}"
    reads = f"reads {read_us:,.0f}, " if round(read_us) else ""
    recalls = {f"{r:.2f}" for r in per_d}
    recall = recalls.pop() if len(recalls) == 1 else " ".join(f"{r:.2f}" for r in per_d)
    redis = f"{cpu_us:,.0f} us ({reads}script {script_us:,.0f} us)"
    return [source, f"{single:,.0f}/s", f"{piped:,.0f}/s", f"{both:,.0f}/s", redis, recall]


async def server_cpu_s(client: Client) -> float:
    """CPU seconds Redis has used: commandstats leave out part of a script's cost (a script
    that scans a large string shows a small part of its CPU time there)."""
    cpu = await client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def layouts_to_run(names: list[str], threshold: int, docs: int) -> list[tuple[str, Layout]]:
    chosen = []
    for name in names:
        # (auto: the planner's tables for this size, also past the size where the worker's
        # auto takes bands)
        settings = Settings(threshold=threshold, layout=name, expected_docs=docs)
        label = "planner's choice" if name == "auto" else name
        layout = (
            plan(threshold, docs, settings.max_bucket_read, settings.recall).choice.layout
            if name == "auto"
            else wiring.layout(settings)
        )
        if not isinstance(layout, Layout):
            raise SystemExit(f"{name}: this benchmark measures SimHash tables in Redis")
        chosen.append((label, layout))
    return chosen


async def run(args: argparse.Namespace) -> None:
    client = connect(args.redis_url)
    source = "from the bucket cache" if args.bucket_cache else "with MGETs"
    print(
        f"threshold {args.threshold}, {args.docs:,} articles indexed, whole buckets read "
        f"(max_bucket_read {UNBOUNDED:,}), duplicate similarity {args.similarity}; buckets "
        f"read {source}"
    )
    rows: list[list[str]] = []
    for label, layout in layouts_to_run(args.layouts.split(","), args.threshold, args.docs):
        index = RedisIndex(
            client,
            "bench",
            layout,
            bucket_cache=args.bucket_cache,
            options=IndexOptions(max_bucket_read=UNBOUNDED, similarity=args.similarity),
        )
        rows.append(
            await measure(
                index,
                args.redis_url,
                label,
                args.docs,
                args.measure,
                args.depth,
                args.budget,
                args.seed,
            )
        )
    await wipe(client)
    await client.aclose()
    if args.markdown:
        header = ["reading the buckets", "one call at a time", f"pipelined, {args.depth} deep"]
        header += ["two callers", "Redis CPU per article", f"recall 0..{args.threshold}"]
        print("\n" + table(header, rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000, help="articles indexed first")
    parser.add_argument("--measure", type=int, default=5_000, help="articles timed per mode")
    parser.add_argument("--threshold", type=int, default=defaults.THRESHOLD)
    parser.add_argument(
        "--layouts",
        default="auto",
        help="comma-separated: auto, pigeonhole, multi-index:M, blocks:B, sampled:LxR",
    )
    parser.add_argument("--depth", type=int, default=64, help="pipeline depth")
    parser.add_argument(
        "--similarity",
        type=float,
        default=defaults.SIMILARITY,
        help="the estimated Jaccard similarity a candidate must reach; planted copies' "
        f"sketches share about {PLANTED_SIMILARITY} of their bins with their originals'",
    )
    parser.add_argument(
        "--budget", type=float, default=30.0, help="seconds per timed mode before stopping early"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--bucket-cache",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the worker's bucket cache (the default), or MGETs",
    )
    parser.add_argument(
        "--redis-url", default=os.environ.get("DEDUP_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print the figures as a Markdown table"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
