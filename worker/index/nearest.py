"""The nearest bucket entry to each of a batch of fingerprints, compared in the worker with
numpy rather than in Redis's one thread (see check_and_insert.lua: the script then only
compares what was inserted after the read). Pure: no Redis."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# A bucket entry, as remove.lua describes it.
ENTRY = np.dtype([("fp", ">u8"), ("seq", ">u4"), ("seen", ">u4"), ("verify", ">u8")])


@dataclass(frozen=True)
class Query:
    buckets: Sequence[bytes | None]  # the raw values of the probed buckets (None: no key)
    fingerprint: int
    verify: int | None = None  # its verification fingerprint


@dataclass(frozen=True)
class Nearest:
    entry: bytes  # the nearest entry within the radius (24 bytes), or b"" if none
    candidates: int  # entries compared (expired ones not counted)
    hot: int  # buckets with more entries than were read
    expired: tuple[int, ...] = ()  # buckets (their places in the query) led by expired entries


def nearest(queries: Sequence[Query], *, radius: int, max_read: int,
            verify_threshold: int = -1, cutoff_s: int | None = None) -> list[Nearest]:
    """For each query, the entry of its buckets nearest to its fingerprint, within `radius`
    bits and, with `verify_threshold` >= 0 and a verification fingerprint in the query, with
    the verification fingerprints within that many bits. Between equals, the first seen
    (lowest sequence number). Entries first seen before `cutoff_s` have expired (being in
    first-seen order, they lead their bucket); only the newest `max_read` entries of a bucket
    count, as in the script. One numpy pass for the whole batch."""
    limit = max_read * ENTRY.itemsize
    parts: list[bytes] = []
    counts, hot, expired = [], [], []
    for query in queries:
        present = list(filter(None, query.buckets))  # most buckets are empty
        sizes = list(map(len, present))
        crowded = 0
        if sizes and max(sizes) > limit:
            crowded = sum(size > limit for size in sizes)
            present = [blob[-limit:] for blob in present]
            sizes = list(map(len, present))
        parts += present
        counts.append(sum(sizes) // ENTRY.itemsize)
        hot.append(crowded)
        expired.append(() if cutoff_s is None else tuple(
            i for i, blob in enumerate(query.buckets)
            if blob and int.from_bytes(blob[12:16]) < cutoff_s))
    data = b"".join(parts)
    entries = np.frombuffer(data, dtype=ENTRY)
    owner = np.repeat(np.arange(len(queries)), counts)
    own = np.array([q.fingerprint for q in queries], dtype=np.uint64)
    distances = np.bitwise_count(entries["fp"] ^ own[owner])
    candidates = np.array(counts)
    near = np.flatnonzero(distances <= radius)  # few: filter them further one by one
    if cutoff_s is not None:
        old = entries["seen"] < cutoff_s
        candidates -= np.bincount(owner[old], minlength=len(queries))
        near = near[~old[near]]
    if verify_threshold >= 0:  # for the queries that have a verification fingerprint
        verify = np.array([q.verify or 0 for q in queries], dtype=np.uint64)
        unverified = np.array([q.verify is None for q in queries], dtype=bool)
        apart = np.bitwise_count(entries["verify"][near] ^ verify[owner[near]])
        near = near[(apart <= verify_threshold) | unverified[owner[near]]]
    best: dict[int, int] = {}  # query -> its nearest entry: sorted, the first of each query
    for i in near[np.lexsort((entries["seq"][near], distances[near], owner[near]))].tolist():
        best.setdefault(int(owner[i]), i)
    size = ENTRY.itemsize
    return [Nearest(data[best[q] * size:(best[q] + 1) * size] if q in best else b"",
                    int(candidates[q]), hot[q], expired[q]) for q in range(len(queries))]
