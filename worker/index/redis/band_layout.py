"""Where an index of band postings keeps a sketch's buckets, and how a bucket's postings are
read from its group string or its own string (lua/postings.lua). Pure: no Redis."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from worker.index.redis.format import MIX, POSTING_TAIL, bucket_of
from worker.layout.bands import Bands


class BandLayout:
    """Where an index of band postings keeps a sketch's buckets (lua/postings.lua)."""

    def __init__(self, prefix: bytes, bands: Bands, groups: int) -> None:
        self.prefix, self.bands, self.groups = prefix, bands, groups
        self.posting = -(-(32 - groups) // 8) + POSTING_TAIL

    def buckets(self, sketch: bytes) -> list[tuple[bytes, bytes]]:
        """Each band's bucket: the key of its group string, and its check."""
        rows, out = self.bands.rows, []
        for b in range(self.bands.bands):
            group, check = bucket_of(sketch[b * rows : (b + 1) * rows], self.groups)
            out.append((self.prefix + b"b" + bytes([b]) + group, check))
        return out

    def buckets_of(self, sketches: Sequence[bytes]) -> list[list[tuple[bytes, bytes]]]:
        """buckets() of each sketch, in one numpy pass when a band's key is its 4 bins."""
        bands = self.bands.bands
        if self.bands.rows != 4 or not sketches:
            return [self.buckets(s) for s in sketches]
        keys = np.frombuffer(b"".join(s[: 4 * bands] for s in sketches), dtype=">u4")
        mixed = keys.astype(np.uint64) * np.uint64(MIX) % np.uint64(2**32)
        rest = 32 - self.groups
        groups = (mixed >> np.uint64(rest)).astype(">u4").reshape(-1, bands)
        checks = (mixed % np.uint64(2**rest)).astype(">u4").reshape(-1, bands)
        width = -(-rest // 8)
        heads = [self.prefix + b"b" + bytes([b]) for b in range(bands)]
        out = []
        for gs, cs in zip(groups, checks, strict=True):
            g, c = gs.tobytes(), cs.tobytes()
            out.append(
                [
                    (heads[b] + g[4 * b + 1 : 4 * b + 4], c[4 * b + 4 - width : 4 * b + 4])
                    for b in range(bands)
                ]
            )
        return out

    def read(self, blob: bytes, check: bytes) -> tuple[list[int], bool]:
        """The numbers of a bucket's postings in its group string `blob`, oldest first, and
        whether the group holds its marker (it has a string of its own)."""
        size, found, marked = self.posting, [], False
        at = blob.find(check)
        while at >= 0:
            if at % size:
                at = blob.find(check, at + 1)
                continue
            seq = int.from_bytes(blob[at + len(check) : at + size])
            if seq == 0:
                marked = True
            else:
                found.append(seq)
            at = blob.find(check, at + size)
        return found, marked

    def numbers(self, blob: bytes) -> list[int]:
        """The numbers of the postings of a bucket's own string (or its end)."""
        size, skip = self.posting, self.posting - POSTING_TAIL
        return [
            int.from_bytes(blob[at + skip : at + size])
            for at in range(len(blob) % size, len(blob), size)
        ]
