"""Small builders the tests share: probes, fingerprints, bucket entries, input messages."""

from __future__ import annotations

import json
import random

import xxhash

from worker.index.base import Index
from worker.index.redis.format import SKETCH_BYTES, pack_entry
from worker.model import Probe, Verdict
from worker.text.fingerprint import Fingerprinter

BASE = 0xF0E1D2C3B4A59687  # a fingerprint with its top bit set: fingerprints are unsigned


# A sketch any two agree with on all bins.
SAME = bytes(SKETCH_BYTES)


def sketch_of(fp: int) -> bytes:
    """The sketch a probe has unless told otherwise: bin i holds bit i of the fingerprint,
    so that two probes k bits apart agree on 64 - k bins. Near fingerprints are then
    similar sets too, and unrelated ones (~32 bits apart) are not, with SimHash tables and
    with bands alike."""
    return bytes((fp >> i) & 1 for i in range(SKETCH_BYTES))


def sketch_agreeing(bins: int) -> bytes:
    """A sketch that agrees with SAME on `bins` bins."""
    return bytes([1] * (SKETCH_BYTES - bins) + [0] * bins)


def probe(
    id: str,
    fp: int | None,
    content: str | None = None,
    sketch: bytes | None = None,
    position: tuple[int, int] | None = None,
    line: bytes | None = None,
) -> Probe:
    """A probe whose content hash comes from `content` (default: unique to the id), with
    the sketch of its fingerprint (sketch_of) unless given one."""
    digest = xxhash.xxh3_128_digest((content if content is not None else f"text of {id}").encode())
    if fp is None:
        return Probe(id, digest, None, None, position, line)
    return Probe(id, digest, fp, sketch if sketch is not None else sketch_of(fp), position, line)


def flip(fp: int, bits: list[int]) -> int:
    """`fp` with the given bits flipped."""
    for b in bits:
        fp ^= 1 << b
    return fp


def planted(seed: int, threshold: int) -> list[Probe]:
    """60 originals, then 240 copies of them with up to `threshold` + 3 bits flipped."""
    rng = random.Random(seed)
    originals = [rng.getrandbits(64) for _ in range(60)]
    probes = [probe(f"o{i}", fp) for i, fp in enumerate(originals)]
    for i in range(240):
        base = rng.choice(originals)
        moved = flip(base, rng.sample(range(64), rng.randint(0, threshold + 3)))
        probes.append(probe(f"c{i}", moved))
    return probes


async def one(index: Index, p: Probe) -> Verdict:
    """The index's verdict on one probe."""
    [verdict] = await index.check_and_insert([p])
    return verdict


def entry(fp: int, seq: int, seen_s: int = 100) -> bytes:
    """One bucket entry, as the index stores it."""
    return pack_entry(fp, seq, seen_s)


def search_fingerprint(fingerprinter: Fingerprinter, text: str) -> int:
    """The text's search fingerprint (the text must be long enough to have one)."""
    value = fingerprinter(text).search
    assert value is not None, "the text is too short for a fingerprint"
    return value


def article(article_id: str, text: str, **fields: object) -> bytes:
    """An input message: the article as JSON."""
    return json.dumps({"id": article_id, "text": text, **fields}).encode()


def keyed(articles: list[dict[str, str]]) -> list[tuple[bytes | None, bytes | None, int | None]]:
    """(key, value, partition) messages of articles, keyed by id, partitioned by key."""
    return [(a["id"].encode(), article(a["id"], a["text"]), None) for a in articles]
