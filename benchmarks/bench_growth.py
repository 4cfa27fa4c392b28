"""What a decision costs as the index grows, on fingerprints of real text of three kinds.

- template: documents recombined from the English manual pages' blocks of lines (a window
  of one page, with blocks of others), so that documents share the pages' templates (NAME,
  SEE ALSO, COLOPHON, licence notes) as a manuals site or a documentation crawl does;
- news: documents of sentences drawn from the 3,563 articles of the News Articles corpus,
  which share little at first; past ~100,000 documents each sentence recurs in dozens of
  them, as a template's would;
- random: random fingerprints and sketches (bench_index's articles);
- lines: short lines (news titles, manual pages' NAME lines, changelog entries: the short
  lines dev set's sources) with up to three of their words replaced, which a band layout
  judges by their words (`--kinds lines`; not run by default).

For each kind the index (the worker's, with its defaults and `--layout`: the planner's SimHash
tables for the largest size, or bands such as bands:16x4) is filled in steps. At each
checkpoint N the next `--measure` documents are decided as the worker decides them, 100 per
call, pipelined; printed: articles/s, Redis's CPU per article and the part of it the scripts
that decide took (the rest is the worker's reads), the candidates per article
(tables: entries compared; bands: postings read), Redis's memory per article, this
process's peak memory, the rate when two callers (as two workers) decide as many more
articles at the same time, and the share of the candidates the worker's guesses looked up
that its cache of the articles it read held (band_known.py; the others are read from Redis,
which is what the reads cost grows with). With bands the worker reads the batch's buckets
and guesses what the script's search would find (band_guesses.py); `--no-guesses` has the
script search every article itself. A checkpoint whose decisions take longer than
`--budget` seconds ends the kind's growth. Then planted pairs, each a document and a copy
with some of its blocks replaced, are decided: the share found, by their exact Jaccard
similarity (the evaluation's truth: evaluation/truth.py).

Needs the evaluation's corpora (scripts/setup.sh) and Redis (database 10, wiped).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass

from benchmarks.bench_index import random_probes, server_cpu_s
from benchmarks.redis_state import wipe
from evaluation import corpora
from evaluation.short_lines import source_lines
from evaluation.truth import DIFFERENT, shingle_set
from worker import wiring
from worker.index.base import IndexOptions
from worker.index.redis import NamespaceIndex, RedisBandIndex, RedisIndex
from worker.index.redis.band_known import KnownStats
from worker.index.redis.client import Client, connect, connect_replicas
from worker.layout.bands import Bands
from worker.model import Kind, Probe, Verdict
from worker.settings import Settings
from worker.text.fingerprint import Fingerprinter
from worker.text.lines import line_distance, line_rule

CALL = 100  # articles per script call, as the worker sends a batch
PLANTED = 400
BANDS = [(0.3, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]


def man_blocks(lines: int = 4) -> list[list[str]]:
    """Each English manual page as its blocks of `lines` lines."""
    pages = []
    for _, text in corpora.english_man_pages():
        rows = [r.strip() for r in text.splitlines() if r.strip()]
        pages.append([" ".join(rows[i : i + lines]) for i in range(0, len(rows), lines)])
    return [p for p in pages if len(p) >= 8]


def news_sentences() -> list[str]:
    return [s for a in corpora.news_articles() for s in a.text.split(". ") if len(s) > 40]


@dataclass
class Documents:
    """An endless supply of one kind's documents, each as its list of blocks."""

    kind: str
    rng: random.Random

    def __post_init__(self) -> None:
        self.pool: list[list[str]] = man_blocks() if self.kind == "template" else []
        self.sentences = news_sentences() if self.kind == "news" else []
        self.lines = source_lines() if self.kind == "lines" else []
        self.words = sorted({w for line in self.lines for w in line.split() if w.isalpha()})

    def next(self) -> list[str]:
        if self.kind == "lines":
            return [self.reworded(self.rng.choice(self.lines), self.rng.randint(0, 3))]
        if self.kind == "news":
            return self.rng.sample(self.sentences, self.rng.randint(8, 30))
        page = self.rng.choice(self.pool)
        start = self.rng.randrange(len(page))
        own = page[start : start + self.rng.randint(10, 60)]
        others = [
            self.rng.choice(self.rng.choice(self.pool)) for _ in range(self.rng.randint(2, 10))
        ]
        return own + others

    def reworded(self, line: str, count: int) -> str:
        words = line.split()
        for at in self.rng.sample(range(len(words)), min(count, len(words))):
            words[at] = self.rng.choice(self.words)
        return " ".join(words)

    def copy(self, blocks: list[str], replaced: float) -> list[str]:
        if self.kind == "lines":  # (one word changed: a copy by the line rule)
            return [self.reworded(blocks[0], 1)]
        out = list(blocks)
        for at in self.rng.sample(range(len(out)), round(replaced * len(out))):
            out[at] = self.next()[0]
        return out


def probes(
    fingerprinter: Fingerprinter, documents: list[list[str]], prefix: str, start: int
) -> list[Probe]:
    fps = fingerprinter.many(["\n".join(d) for d in documents])
    return [
        Probe(f"{prefix}{start + n}", f.content_hash, f.search, f.sketch, line=f.line)
        for n, f in enumerate(fps)
    ]


def supply(kind: str, fingerprinter: Fingerprinter, seed: int, skip: int = 0) -> Iterator[Probe]:
    """The kind's articles, one after another, fingerprinted in batches; the first `skip` of
    them left out (made, but not fingerprinted)."""
    rng = random.Random(seed)
    if kind == "random":
        n = 0
        while True:
            batch = random_probes(rng, 1000, f"r{n}-")
            yield from batch[max(0, skip - n) :]
            n += 1000
    documents = Documents(kind, rng)
    for _ in range(skip):
        documents.next()
    n = skip
    while True:
        yield from probes(fingerprinter, [documents.next() for _ in range(1000)], "d", n)
        n += 1000


async def grow(args: argparse.Namespace, kind: str) -> None:
    client = connect(args.redis_url)
    progress = f"bench-growth:{kind}"  # (what a fill kept for --keep: outside the namespace)
    kept = await client.hgetall(progress) if args.keep else {}
    if not kept:
        await wipe(client)
        await client.hset(progress, "base_memory", (await client.info("memory"))["used_memory"])
    settings = Settings(expected_docs=max(args.sizes), layout=args.layout)
    fingerprinter = wiring.fingerprinter(settings)
    layout = wiring.layout(settings)
    options = wiring.index_options(settings)

    def make(on: Client) -> NamespaceIndex:
        if isinstance(layout, Bands):
            return RedisBandIndex(
                on,
                f"growth-{kind}",
                layout,
                options,
                expected_docs=settings.expected_docs,
                guesses=not args.no_guesses,
                replicas=connect_replicas(args.read_url) if args.read_url else None,
            )
        return RedisIndex(on, f"growth-{kind}", layout, options)

    index = make(client)
    second = make(connect(args.redis_url))  # (another worker's, on a connection of its own)
    # Tables fill without searching; the band script searches as it inserts, fast enough.
    loader = (
        index
        if isinstance(layout, Bands)
        else RedisIndex(client, index.namespace, layout, IndexOptions(max_bucket_read=0))
    )
    start = int(kept.get(b"supplied", 0))
    articles = supply(kind, fingerprinter, args.seed, skip=start)
    print(f"\n{kind}: layout {layout.name()}" + (f", {start:,} kept" if start else ""))
    print(
        "  indexed | articles/s | Redis CPU us/article | of it, deciding | compared/article"
        " | Redis B/article | process peak MB | 2 callers, articles/s | candidates held"
        + (" | replica CPU us/article" if args.read_url else "")
    )
    replica = connect(args.read_url) if args.read_url else None
    indexed = start
    base_memory = int(await client.hget(progress, "base_memory"))
    for size in sorted(s for s in args.sizes if s >= start):
        while indexed < size:
            batch = [next(articles) for _ in range(min(2000, size - indexed))]
            await loader.check_and_insert(batch)
            indexed += len(batch)
            await client.hset(progress, "supplied", indexed)
        await index.refresh()
        measured = [next(articles) for _ in range(args.measure)]
        if replica is not None:
            await client.execute_command("WAIT", 1, 0)  # (the fill's writes reach it first)
            replica_cpu = await server_cpu_s(replica)
        cpu, scripts_us = await server_cpu_s(client), await script_us(client)
        known = index.known_stats
        started = time.perf_counter()
        verdicts: list[Verdict] = []
        for first in range(0, len(measured), CALL):
            verdicts += await index.check_and_insert(measured[first : first + CALL])
        elapsed = time.perf_counter() - started
        cpu_us = (await server_cpu_s(client) - cpu) / len(measured) * 1e6
        if replica is not None:
            await client.execute_command("WAIT", 1, 0)
            replica_us = (await server_cpu_s(replica) - replica_cpu) / len(measured) * 1e6
        decision_us = (await script_us(client) - scripts_us) / len(measured)
        indexed += len(measured)
        memory = ((await client.info("memory"))["used_memory"] - base_memory) / indexed
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        compared = sum(v.candidates for v in verdicts) / len(verdicts)
        held = held_share(known, index.known_stats)
        together = await two_callers(index, second, [next(articles) for _ in range(args.measure)])
        indexed += args.measure
        await client.hset(progress, "supplied", indexed)
        print(
            f"  {size:>9,} | {len(measured) / elapsed:>10,.0f} | {cpu_us:>20,.0f} | "
            f"{decision_us:>15,.0f} | "
            f"{compared:>16,.1f} | {memory:>15,.0f} | {peak:>15,.0f} | {together:>21,.0f} | "
            f"{held:>15}" + (f" | {replica_us:>23,.0f}" if replica is not None else ""),
            flush=True,
        )
        if elapsed > args.budget:
            print(f"  (the decisions took {elapsed:.0f} s, past the budget: the growth stops)")
            break
    if kind != "random":  # (after a kept fill, other pairs than the fill's own run decided)
        await planted_recall(index, kind, fingerprinter, args.seed + start)
    if loader is not index:
        await loader.close()
    await second.close()
    await index.close()
    if replica is not None:
        await replica.aclose()


def held_share(before: KnownStats | None, after: KnownStats | None) -> str:
    """The share of the candidates looked up between two readings of the worker's cache that
    it held ("-": no cache, or none looked up)."""
    if before is None or after is None or after.asked == before.asked:
        return "-"
    return f"{(after.held - before.held) / (after.asked - before.asked):.0%}"


async def script_us(client: Client) -> float:
    """Microseconds Redis has spent running the scripts that decide (EVALSHA; the worker's
    reads, its read-only scripts included, are the rest of its CPU)."""
    stats = await client.info("commandstats")
    return float(stats.get("cmdstat_evalsha", {}).get("usec", 0))


async def two_callers(one: NamespaceIndex, other: NamespaceIndex, articles: list[Probe]) -> float:
    """Articles per second when two callers decide `articles` (every other one each) at the
    same time, each 100 per call, one call after another, as two workers do."""

    async def decide(index: NamespaceIndex, mine: list[Probe]) -> None:
        for first in range(0, len(mine), CALL):
            await index.check_and_insert(mine[first : first + CALL])

    await one.refresh()
    await other.refresh()  # (a worker's bucket cache is loaded before it decides)
    started = time.perf_counter()
    await asyncio.gather(decide(one, articles[0::2]), decide(other, articles[1::2]))
    return len(articles) / (time.perf_counter() - started)


async def planted_recall(
    index: NamespaceIndex, kind: str, fingerprinter: Fingerprinter, seed: int
) -> None:
    """Pairs of a document and a copy with a share of its blocks replaced, decided in the
    grown index: how many copies are called near-duplicates of their document, by the pair's
    exact Jaccard similarity."""
    originals, copies, jaccards = planted(kind, fingerprinter, seed)
    await index.check_and_insert(originals)
    verdicts = await index.check_and_insert(copies)
    hits = [
        v.kind in (Kind.NEAR, Kind.EXACT) and v.duplicate_of == o.id
        for o, v in zip(originals, verdicts, strict=True)
    ]
    if kind == "lines":  # (an earlier line as near as the original wins when first seen)
        # Only the copies the line rule makes duplicates of their original count: a word
        # replaced may be two units, or take a line past LINE_MAX_UNITS.
        within = [
            v
            for o, c, v in zip(originals, copies, verdicts, strict=True)
            if o.line and c.line and line_rule(line_distance(o.line, c.line), o.line, c.line)
        ]
        called = sum(v.kind in (Kind.NEAR, Kind.EXACT) for v in within)
        print(
            f"  planted copies (one word replaced): {len(within)} of {len(hits)} within the "
            f"line rule; {called} of those called duplicates, {sum(hits)} of their original"
        )
        return
    print_found(hits, jaccards)


def planted(
    kind: str, fingerprinter: Fingerprinter, seed: int
) -> tuple[list[Probe], list[Probe], list[float]]:
    """PLANTED documents, a copy of each with up to half of its blocks replaced, and each
    pair's exact Jaccard similarity (evaluation/truth.py)."""
    documents = Documents(kind, random.Random(seed + 1))
    originals = [documents.next() for _ in range(PLANTED)]
    copies = [documents.copy(d, documents.rng.uniform(0.0, 0.5)) for d in originals]
    jaccards = []
    for original, copy in zip(originals, copies, strict=True):
        a, b = shingle_set("\n".join(original)), shingle_set("\n".join(copy))
        jaccards.append(len(a & b) / len(a | b) if a | b else 1.0)
    return (
        probes(fingerprinter, originals, f"p{seed}-", 0),
        probes(fingerprinter, copies, f"c{seed}-", 0),
        jaccards,
    )


def print_found(hits: list[bool], jaccards: list[float]) -> None:
    found: dict[tuple[float, float], list[bool]] = {band: [] for band in BANDS}
    for hit, jaccard in zip(hits, jaccards, strict=True):
        for band in BANDS:
            if band[0] <= jaccard < band[1]:
                found[band].append(hit)
    cells = [
        f"{low:.1f}-{min(high, 1.0):.1f}: {sum(hits) / len(hits):.2f} of {len(hits)}"
        for (low, high), hits in found.items()
        if hits
    ]
    print(
        f"  planted copies found, by exact Jaccard (under {DIFFERENT} not listed): "
        + "; ".join(cells)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kinds", default="template,news,random")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(float(x)) for x in s.split(",")],
        default=[10_000, 30_000, 100_000],
        help="checkpoints: articles indexed before each measurement",
    )
    parser.add_argument("--measure", type=int, default=2000, help="articles decided per checkpoint")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds per checkpoint")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--layout", default="auto", help="DEDUP_LAYOUT: auto, or bands:16x4, ...")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/10")
    parser.add_argument(
        "--no-guesses",
        action="store_true",
        help="bands: the script searches every article itself (the worker guesses nothing)",
    )
    parser.add_argument(
        "--read-url",
        default="",
        help="bands: a replica of --redis-url that the worker reads on (DEDUP_REDIS_READ_URL)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="go on from the index a run with the same arguments left in --redis-url (a "
        "Redis that kept it: a snapshot across restarts), rather than wipe it",
    )
    args = parser.parse_args()
    for kind in args.kinds.split(","):
        asyncio.run(grow(args, kind))


if __name__ == "__main__":
    main()
