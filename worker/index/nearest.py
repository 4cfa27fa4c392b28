"""The nearest bucket entry to a fingerprint, compared in the worker with numpy rather than in
Redis's one thread (see check_and_insert.lua: the script then only compares what was inserted
after the read). Pure: no Redis."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# A bucket entry, as remove.lua describes it.
ENTRY = np.dtype([("fp", ">u8"), ("seq", ">u4"), ("seen", ">u4"), ("verify", ">u8")])


@dataclass(frozen=True)
class Nearest:
    entry: bytes  # the nearest entry within the radius (24 bytes), or b"" if none
    candidates: int  # entries compared (expired ones not counted)
    hot: int  # buckets with more entries than were read
    expired: tuple[int, ...] = ()  # buckets (their places in the input) led by expired entries


def nearest(buckets: Sequence[bytes | None], fingerprint: int, *, radius: int,
            max_read: int, verify: int | None = None, verify_threshold: int = -1,
            cutoff_s: int | None = None) -> Nearest:
    """The entry of `buckets` (their raw values; None for a missing key) nearest to
    `fingerprint`, within `radius` bits and, with `verify_threshold` >= 0, with its verification
    fingerprint within that many bits of `verify`. Between equals, the first seen (lowest
    sequence number). Entries first seen before `cutoff_s` have expired (being in first-seen
    order, they lead their bucket); only the newest `max_read` entries of a bucket count, as
    in the script."""
    limit = max_read * ENTRY.itemsize
    parts = list(filter(None, buckets))
    hot = sum(len(blob) > limit for blob in parts)
    if hot:
        parts = [blob[-limit:] for blob in parts]
    expired: tuple[int, ...] = ()
    if cutoff_s is not None:
        expired = tuple(i for i, blob in enumerate(buckets)
                        if blob and int.from_bytes(blob[12:16]) < cutoff_s)
    data = b"".join(parts)
    entries = np.frombuffer(data, dtype=ENTRY)
    candidates = len(entries)
    distances = np.bitwise_count(entries["fp"] ^ np.uint64(fingerprint))
    near = np.flatnonzero(distances <= radius)  # few: filter them further one by one
    if cutoff_s is not None:
        candidates -= int(np.count_nonzero(entries["seen"] < cutoff_s))
        near = near[entries["seen"][near] >= cutoff_s]
    if verify_threshold >= 0:
        apart = np.bitwise_count(entries["verify"][near] ^ np.uint64(verify or 0))
        near = near[apart <= verify_threshold]
    if not len(near):
        return Nearest(b"", candidates, hot, expired)
    best = near[np.lexsort((entries["seq"][near], distances[near]))[0]]
    start = int(best) * ENTRY.itemsize
    return Nearest(data[start:start + ENTRY.itemsize], candidates, hot, expired)
