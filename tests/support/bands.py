"""A band index's test stream and what its tests compare: documents of one template, copies,
redeliveries and short lines; verdicts in short; the log of calls (lua/guesses.lua)."""

from __future__ import annotations

import random
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from worker.index.base import IndexOptions
from worker.index.redis import RedisBandIndex
from worker.index.redis.band_guesses import Batch
from worker.index.redis.band_reads import HEAD, BandReads
from worker.index.redis.client import Client
from worker.layout.bands import Bands
from worker.model import Probe, Verdict
from worker.text.fingerprint import Fingerprinter

# Words of a page template every document carries (its buckets crowd), and of the documents.
TEMPLATE = " ".join(f"menu{i} footer{i} licence{i}" for i in range(30))
WORDS = [f"w{i}" for i in range(3000)]


def stream(n: int, seed: int) -> list[Probe]:
    """Documents of a template and words, and copies of earlier ones (a few words changed, or
    none), redeliveries of earlier ids, and short lines."""
    rng = random.Random(seed)
    texts: list[str] = []
    ids: list[str] = []
    for i in range(n):
        r = rng.random()
        if texts and r < 0.3:
            words = rng.choice(texts).split()
            for at in rng.sample(range(len(words)), min(len(words), rng.choice([0, 1, 3, 8]))):
                words[at] = rng.choice(WORDS)
            texts.append(" ".join(words))
        elif texts and r < 0.35:
            j = rng.randrange(len(texts))
            texts.append(texts[j])
            ids.append(ids[j])
            continue
        elif r < 0.45:
            texts.append(" ".join(rng.choices(WORDS, k=rng.randint(5, 12))))
        else:
            texts.append(TEMPLATE + " " + " ".join(rng.choices(WORDS, k=rng.randint(40, 120))))
        ids.append(f"d{i}")
    found = Fingerprinter().many(texts)
    return [
        Probe(i, f.content_hash, f.search, f.sketch, line=f.line)
        for i, f in zip(ids, found, strict=True)
    ]


def summary(verdicts: list[Verdict]) -> list[tuple[Any, ...]]:
    return [
        (v.id, v.kind, v.duplicate_of, v.distance, v.similarity, v.original, v.replayed)
        for v in verdicts
    ]


def index(client: Client, namespace: str, **options: Any) -> RedisBandIndex:
    """An index whose worker reads and guesses every batch."""
    return RedisBandIndex(
        client, namespace, Bands(), IndexOptions(**options), expected_docs=100_000, guesses=True
    )


def unguessed(client: Client, namespace: str) -> RedisBandIndex:
    """An index whose worker reads nothing first: the script searches every article."""
    return RedisBandIndex(client, namespace, Bands(), expected_docs=100_000, guesses=False)


async def log(client: Client, target: RedisBandIndex) -> list[tuple[bool, int]]:
    """Each call's entry in the log, oldest first: whether it kept to its guesses, and how
    many of its articles went another way than guessed."""
    entries = await client.lrange(target.keys.posts, 0, -1)
    return [
        (e[HEAD - 1 : HEAD] == b"1", struct.unpack(">H", e[HEAD : HEAD + 2])[0])
        for e in reversed(entries)
    ]


def before_the_call(target: RedisBandIndex, between: Callable[[], Awaitable[Any]]) -> None:
    """Run `between` after the worker of `target` has read its next batch, before its calls
    (`between` must not use `target`, which holds its turn meanwhile)."""
    read = BandReads.read.__get__(target._reads)

    async def read_then(probes: Any) -> Batch:
        batch: Batch = await read(probes)
        await between()
        return batch

    target._reads.read = read_then  # type: ignore[method-assign]


async def both_decide(
    plain: RedisBandIndex, other: RedisBandIndex, probes: list[Probe], size: int
) -> tuple[list[Verdict], list[Verdict]]:
    """The verdicts of `plain` and of `other`, each deciding `probes` `size` at a time."""
    expected: list[Verdict] = []
    got: list[Verdict] = []
    for start in range(0, len(probes), size):
        expected += await plain.check_and_insert(probes[start : start + size])
        got += await other.check_and_insert(probes[start : start + size])
    return expected, got
