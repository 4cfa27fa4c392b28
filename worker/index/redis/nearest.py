"""The nearest bucket entry to each of a batch of fingerprints, compared in the worker with
numpy rather than in Redis's one thread (see check_and_insert.lua: the script then only
compares what was inserted after the read). Pure: no Redis.

Two steps: the entries of each fingerprint's probed buckets are gathered into one buffer
(`gather`, from the values an MGET gives; or the worker's bucket cache, BucketCache.read),
then compared in one numpy pass (`nearest`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from worker.index.redis.format import ENTRY, ENTRY_BYTES, entry_numbers

_SEEN = ENTRY_BYTES - 4  # (an entry ends with its seen time)


@dataclass(frozen=True)
class Gathered:
    """The entries that a batch's probed buckets hold, fingerprint after fingerprint."""

    data: bytes  # the entries (ENTRY), each fingerprint's after the one before
    counts: list[int]  # each fingerprint's number of entries in `data`
    hot: list[int]  # each fingerprint's buckets with more entries than were read
    # Each fingerprint's buckets led by expired entries, as places among its probes.
    expired: list[tuple[int, ...]]


@dataclass(frozen=True)
class Search:
    """A search of the buckets (BucketCache.nearest): the `limit` nearest entries within
    `search_radius` bits, of the newest `max_read` entries of each bucket, none first seen
    before `cutoff_s` (None: none expire)."""

    search_radius: int
    limit: int
    max_read: int
    cutoff_s: int | None = None


@dataclass(frozen=True)
class Nearest:
    entries: bytes  # the nearest entries within the search radius, nearest first (b"": none)
    candidates: int  # entries compared (expired ones not counted)
    hot: int  # buckets with more entries than were read
    # Buckets led by expired entries, as places among the probes.
    expired: tuple[int, ...] = ()


def gather(
    buckets: Sequence[Sequence[bytes | None]], *, max_read: int, cutoff_s: int | None = None
) -> Gathered:
    """The entries of each fingerprint's buckets (raw values, None for no key): only the
    newest `max_read` entries of a bucket count, as in the script. Entries first seen before
    `cutoff_s` have expired; being in first-seen order, they lead their bucket."""
    limit = max_read * ENTRY_BYTES
    parts: list[bytes] = []
    counts, hot, expired = [], [], []
    for probed in buckets:
        present = list(filter(None, probed))  # most buckets are empty
        sizes = list(map(len, present))
        crowded = 0
        if sizes and max(sizes) > limit:
            crowded = sum(size > limit for size in sizes)
            present = [blob[-limit:] for blob in present]
            sizes = list(map(len, present))
        parts += present
        counts.append(sum(sizes) // ENTRY_BYTES)
        hot.append(crowded)
        expired.append(
            ()
            if cutoff_s is None
            else tuple(
                i
                for i, blob in enumerate(probed)
                if blob and int.from_bytes(blob[_SEEN : _SEEN + 4]) < cutoff_s
            )
        )
    return Gathered(b"".join(parts), counts, hot, expired)


def nearest(
    gathered: Gathered,
    simhashes: Sequence[int],
    *,
    radius: int,
    limit: int,
    cutoff_s: int | None = None,
) -> list[Nearest]:
    """For each fingerprint, the `limit` gathered entries nearest to it within `radius` bits,
    nearest first (between equals, the first seen: the lowest sequence number), each once
    (tables share entries). Entries first seen before `cutoff_s` do not count. One numpy
    pass."""
    n = len(simhashes)
    data = gathered.data
    entries = np.frombuffer(data, dtype=ENTRY)
    owner = np.repeat(np.arange(n), gathered.counts)
    own = np.array(simhashes, dtype=np.uint64)
    distances = np.bitwise_count(entries["fingerprint"] ^ own[owner])
    candidates = np.array(gathered.counts)
    near = np.flatnonzero(distances <= radius)  # few: filter them further one by one
    if cutoff_s is not None:
        old = entries["seen_s"] < cutoff_s
        candidates -= np.bincount(owner[old], minlength=n)
        near = near[~old[near]]
    chosen: list[list[int]] = [[] for _ in range(n)]
    taken: set[tuple[int, int]] = set()
    numbers = entry_numbers(entries[near])
    order = np.lexsort((numbers, distances[near], owner[near]))
    for i, seq in zip(near[order].tolist(), numbers[order].tolist(), strict=True):
        q = int(owner[i])
        if len(chosen[q]) < limit and (q, seq) not in taken:
            taken.add((q, seq))
            chosen[q].append(i)
    size = ENTRY_BYTES
    return [
        Nearest(
            b"".join(data[i * size : (i + 1) * size] for i in chosen[q]),
            int(candidates[q]),
            gathered.hot[q],
            gathered.expired[q],
        )
        for q in range(n)
    ]


@dataclass(frozen=True)
class BucketRead:
    """What the worker read for one article before its script call."""

    snapshot: int  # the sequence counter when the buckets were read
    found: Nearest
    expired: list[str]  # the names of the buckets read that start with expired entries


def earlier_within(simhashes: Sequence[int | None], radius: int) -> list[bytes]:
    """For each fingerprint of a script call, the places (1-based, 2 bytes big-endian each) of
    the earlier ones within `radius` bits: the script takes what the call itself inserted from
    these lists instead of comparing every article with every entry the call wrote."""
    out = [b""] * len(simhashes)
    places = [i for i, fp in enumerate(simhashes) if fp is not None]
    if len(places) < 2:
        return out
    fps = np.array([simhashes[i] for i in places], dtype=np.uint64)
    close = np.tril(np.bitwise_count(fps[:, None] ^ fps[None, :]) <= radius, -1)
    rows, cols = np.nonzero(close)  # (row-major: each row's earlier places in order)
    for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
        out[places[row]] += (places[col] + 1).to_bytes(2, "big")
    return out


def within_earlier_calls(
    simhashes: Sequence[int | None], earlier: Sequence[int | None], radius: int
) -> list[bytes]:
    """For each fingerprint, the places (1-based, 4 bytes big-endian each) of the `earlier`
    ones (of the calls sent before, check_and_insert.lua's earlier calls) within `radius`
    bits."""
    out = [b""] * len(simhashes)
    mine = [i for i, fp in enumerate(simhashes) if fp is not None]
    theirs = [i for i, fp in enumerate(earlier) if fp is not None]
    if not mine or not theirs:
        return out
    a = np.array([simhashes[i] for i in mine], dtype=np.uint64)
    b = np.array([earlier[i] for i in theirs], dtype=np.uint64)
    rows, cols = np.nonzero(np.bitwise_count(a[:, None] ^ b[None, :]) <= radius)
    for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
        out[mine[row]] += (theirs[col] + 1).to_bytes(4, "big")
    return out
