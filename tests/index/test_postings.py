"""The memory index's band postings: sealing them (worker.index.sealed) changes no bucket.
Random runs of posts (near-duplicates among them), removals, renewals and expiring reads, on
postings sealed every few postings and on postings never sealed, give the same reads: over
few bin values (crowded buckets) and over more (most buckets hold one posting, kept without
a list until sealed)."""

from __future__ import annotations

import random

import pytest

from worker.index.base import Entry
from worker.index.postings import BandPostings, Read
from worker.layout.bands import Bands

NEVER = 1 << 60


def sketch(rng: random.Random, like: bytes | None = None, values: int = 2) -> bytes:
    """A sketch of 16 bands of 4 bins over `values` values (few: buckets fill), or one that
    shares some bands with `like`."""
    if like is None:
        return bytes(rng.randrange(values) for _ in range(64))
    bands = [like[4 * b : 4 * b + 4] if rng.random() < 0.5 else rng.randbytes(4) for b in range(16)]
    return b"".join(bands)


def summary(read: Read) -> tuple[list[int], int, int]:
    return [e.seq for e in read.candidates], read.entries, read.hot


@pytest.mark.parametrize("values", [2, 6])
@pytest.mark.parametrize("seal", [9, 300])
@pytest.mark.parametrize("seed", range(6))
def test_sealed_postings_read_as_postings_never_sealed(seal: int, seed: int, values: int) -> None:
    rng = random.Random(seed)
    bands = Bands(16, 4, newest=5, compared=4)
    never, often = BandPostings(bands, seal_postings=NEVER), BandPostings(bands, seal_postings=seal)
    live: list[Entry] = []
    seq, now_s = 0, 1000
    for _ in range(600):
        now_s += rng.randrange(3)
        step = rng.random()
        if step < 0.55 or not live:
            seq += 1
            match = rng.choice(live) if live and rng.random() < 0.4 else None
            entry = Entry(
                f"a{seq}", 0, seq, now_s * 1000, sketch(rng, match and match.sketch, values)
            )
            for postings in (never, often):
                postings.post(entry, match)
            live.append(entry)
        elif step < 0.65:
            gone = live.pop(rng.randrange(len(live)))
            for postings in (never, often):
                postings.unpost(gone)
        elif step < 0.72:  # renewed: the same article under a new number
            old = live.pop(rng.randrange(len(live)))
            seq += 1
            renewed = Entry(old.id, 0, seq, now_s * 1000, old.sketch)
            for postings in (never, often):  # (as the memory index renews)
                postings.post(renewed, None)
                postings.unpost(old, renewed)
            live.append(renewed)
        else:
            of = rng.choice(live).sketch if rng.random() < 0.8 else sketch(rng, None, values)
            cutoff = now_s - 40 if rng.random() < 0.3 else None
            assert summary(often.read(0, of, cutoff)) == summary(never.read(0, of, cutoff))
    assert often.largest_bucket == never.largest_bucket
    held = list(never._open.values())
    assert any(isinstance(h, Entry) for h in held)  # (buckets of one posting)
    assert any(isinstance(h, list) and len(h) > 1 for h in held)
    assert len(often._sealed) > 0  # (sealed many times over)
    assert len(never._sealed) == 0


def test_a_bucket_keeps_its_postings_in_the_order_posted() -> None:
    postings = BandPostings(Bands(16, 4), seal_postings=NEVER)
    same = bytes(64)
    entries = [Entry(f"a{seq}", 0, seq, 0, same) for seq in (1, 2, 3)]
    keys = postings.bands.keys(same)
    for n, entry in enumerate(entries, start=1):
        postings.post(entry, None)  # (one posting, then two, then three under each key)
        assert postings._newest(keys, None) == [[e.seq for e in entries[:n]]] * 16
    postings.unpost(entries[1])
    assert postings._newest(keys, None) == [[1, 3]] * 16
    alone = Entry("b", 0, 4, 0, bytes(range(64)))
    postings.post(alone, None)
    postings.unpost(Entry("b", 0, 4, 0, bytes(range(64))))  # (an equal entry, not the same)
    assert postings._newest(postings.bands.keys(alone.sketch), None) == [[]] * 16
    assert len(postings._open) == 16
