"""Candidates from bands over the set sketch (MinHash LSH), the way the index is moving to,
measured on the development sets beside the SimHash radius (evaluation/choices.py).

Each sketch is cut into `bands` bands of `rows` bins; two articles that agree on every bin
of a band are candidates, so a pair sharing a share J of its shingles meets with probability
1 - (1 - J^rows)^bands, whatever the index holds. The work is bounded: a bucket is read
newest first, `NEWEST` entries at most; at most `COMPARED` candidates are compared, those
sharing the most bands first; a near-duplicate is posted only under the bands it does not
share with its match, so that a cluster of copies does not fill the buckets. The verdict is
the index's rule (worker.index.base.match) on the sketches alone.

The band keys here are the stored 8-bit bins (with 4 rows, 32 bits: chance meetings are
negligible below ~10^8 articles).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from worker.index.base import Entry, Rule, match
from worker.model import SIMHASH_BITS, Fingerprint
from worker.text.sketch import SketchShape, bins_needed

NEWEST = 32  # a bucket's entries read, newest first
COMPARED = 16  # candidates compared, those sharing the most bands first


def band_keys(sketch: bytes, bands: int, rows: int) -> list[bytes]:
    return [bytes([b]) + sketch[b * rows : (b + 1) * rows] for b in range(bands)]


@dataclass
class BandDecisions:
    predicted: list[str | None]  # what each item is a duplicate of
    compared: int  # candidates compared, over all items
    largest_bucket: int  # entries in the fullest bucket at the end


def decide_by_bands(
    fingerprints: Sequence[Fingerprint],
    ids: Sequence[str],
    layout: tuple[int, int],
    similarity: float,
    shape: SketchShape,
) -> BandDecisions:
    """What each item is a duplicate of, in stream order."""
    bands, rows = layout
    if bands * rows > shape.bins:
        raise ValueError(f"{bands} bands of {rows} bins: the sketch has {shape.bins} bins")
    # Every candidate is "within the radius": the sketches alone decide.
    rule = Rule(
        SIMHASH_BITS,
        SIMHASH_BITS,
        similarity,
        bins_needed(similarity, shape),
        shape.bins + 1,  # (no related tier: the radius is the threshold)
        COMPARED,
        shape,
    )
    buckets: dict[bytes, list[int]] = defaultdict(list)
    exact: dict[bytes, int] = {}
    out: list[str | None] = []
    compared = 0
    for i, fp in enumerate(fingerprints):
        if fp.content_hash in exact:
            out.append(ids[exact[fp.content_hash]])
            continue
        exact[fp.content_hash] = i
        if fp.search is None or fp.sketch is None:
            out.append(None)
            continue
        keys = band_keys(fp.sketch, bands, rows)
        shared: Counter[int] = Counter()
        for key in keys:
            shared.update(buckets[key][-NEWEST:])
        chosen = sorted(shared, key=lambda j: (-shared[j], -j))[:COMPARED]
        compared += len(chosen)
        entries = [
            Entry(ids[j], fingerprints[j].search or 0, j + 1, sketch=fingerprints[j].sketch or b"")
            for j in chosen
        ]
        found = match(rule, fp.search, fp.sketch, entries, ids[i])
        near = found if found is not None and found.near else None
        out.append(near.entry.id if near else None)
        posted = set(keys)
        if near is not None:
            theirs = fingerprints[near.entry.seq - 1].sketch or b""
            posted -= set(band_keys(theirs, bands, rows))  # (novelty: only what it adds)
        for key in keys:
            if key in posted:
                buckets[key].append(i)
    return BandDecisions(out, compared, max(map(len, buckets.values()), default=0))
