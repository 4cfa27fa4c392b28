"""Table layouts for the fingerprint index. Pure: no Redis.

A layout is a set of tables. Each table keys every indexed fingerprint on some of its bits
(at most 32, so Lua's 32-bit bit operations can handle a key) and, to check an article, is
probed at every key within `probe_radius` bits of the article's own key. Two fingerprints are
compared exactly (full 64-bit Hamming distance) only when some table brings them together.

Families (see `plan` in worker/layout/planner.py for how one is chosen):
- pigeonhole: k+1 disjoint bands, radius 0. Exact: k flips leave one band untouched.
- multi-index (Norouzi, Punjani, Fleet 2012): m <= k substrings with radii r_i, where
  sum(r_i + 1) = k + 1. Exact: if every substring differed in more than r_i bits, the pair
  would differ in at least k + 1 bits. Fewer, wider tables; more probes each.
- blocks (Manku, Jain, Das Sarma 2007): B blocks, one table per combination of B - k
  blocks, radius 0. Exact: k flips touch at most k blocks, so B - k blocks are untouched.
- sampled: L tables of r bits drawn at random, radius 0 (classic LSH). Not exact: a pair at
  distance d is found with probability 1 - (1 - C(64-r, d) / C(64, d))^L.

Bit positions count from the least significant bit (0) to the most significant (63); a
table lists its positions from its key's most significant bit down.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from math import comb

import numpy as np

from worker.defaults import MAX_THRESHOLD
from worker.model import SIMHASH_BITS as BITS

MAX_KEY_BITS = 32  # Lua's bit library works on 32-bit integers


class Family(StrEnum):
    PIGEONHOLE = "pigeonhole"
    MULTI_INDEX = "multi-index"
    BLOCKS = "blocks"
    SAMPLED = "sampled"


@dataclass(frozen=True)
class Table:
    positions: tuple[int, ...]  # fingerprint bits forming the key, most significant first
    probe_radius: int = 0

    def __post_init__(self) -> None:
        if not 1 <= len(self.positions) <= MAX_KEY_BITS:
            raise ValueError(f"a table key has 1..{MAX_KEY_BITS} bits, got {len(self.positions)}")
        if not 0 <= self.probe_radius <= len(self.positions):
            raise ValueError(
                f"probe_radius must be 0..{len(self.positions)}, got {self.probe_radius}"
            )

    @property
    def width(self) -> int:
        return len(self.positions)

    @property
    def probes(self) -> int:
        """Keys read per check: every key within `probe_radius` bits of the article's."""
        return sum(comb(self.width, j) for j in range(self.probe_radius + 1))

    @cached_property
    def runs(self) -> tuple[tuple[int, int, int], ...]:
        """(shift, mask, out_shift) per run of adjacent positions, so that a key is a few
        shifts rather than one step per bit."""
        runs = []
        out = self.width
        for _, group in itertools.groupby(enumerate(self.positions), lambda p: p[0] + p[1]):
            bits = [pos for _, pos in group]  # descending and adjacent: p[0] + p[1] is constant
            out -= len(bits)
            runs.append((bits[-1], (1 << len(bits)) - 1, out))
        return tuple(runs)

    def key(self, fingerprint: int) -> int:
        value = 0
        for shift, mask, out_shift in self.runs:
            value |= ((fingerprint >> shift) & mask) << out_shift
        return value

    def keys(self, simhashes: np.ndarray) -> np.ndarray:
        """`key` of many fingerprints (uint64) at once."""
        values = np.zeros(len(simhashes), dtype=np.uint64)
        for shift, mask, out_shift in self.runs:
            values |= ((simhashes >> shift) & mask) << out_shift
        return values

    def spec(self) -> str:
        """Compact text, e.g. "63-43/2" or "5.17.40/0": runs of positions, then the probe radius."""
        parts = []
        for shift, mask, _ in self.runs:
            top = shift + mask.bit_length() - 1
            parts.append(str(top) if top == shift else f"{top}-{shift}")
        return ".".join(parts) + f"/{self.probe_radius}"


def neighbours(key: int, width: int, radius: int) -> Iterator[int]:
    """`key`, then every key of `width` bits within `radius` bits of it (each once)."""
    yield key
    for distance in range(1, radius + 1):
        for flips in itertools.combinations(range(width), distance):
            value = key
            for bit in flips:
                value ^= 1 << bit
            yield value


@dataclass(frozen=True)
class Layout:
    family: Family
    search_radius: int  # the distance the tables are laid out to bring together
    tables: tuple[Table, ...]
    # Only for block layouts: the block widths (recall depends on them).
    blocks: tuple[int, ...] = ()

    @property
    def exact(self) -> bool:
        return self.family is not Family.SAMPLED

    def reaches_all(self, radius: int) -> bool:
        """Whether every pair within `radius` bits shares a probed bucket (recall 1 at
        every distance up to it)."""
        if self.exact and radius <= self.search_radius:
            return True  # (what an exact layout is laid out for; recall takes a while)
        return all(self.recall(d) == 1.0 for d in range(radius + 1))

    @property
    def probes(self) -> int:
        return sum(t.probes for t in self.tables)

    def keys(self, fingerprint: int) -> list[int]:
        return [t.key(fingerprint) for t in self.tables]

    def name(self) -> str:
        n = len(self.tables)
        if self.family is Family.MULTI_INDEX:
            radii = "/".join(str(t.probe_radius) for t in self.tables)
            return f"multi-index, {n} substrings, radii {radii}"
        if self.family is Family.BLOCKS:
            return f"blocks, {len(self.blocks)} blocks, {n} tables"
        if self.family is Family.SAMPLED:
            return f"sampled, {n} tables of {self.tables[0].width} bits"
        return f"pigeonhole, {n} bands"

    def spec(self) -> str:
        """Every table, exactly: stored in the index so that a different layout is refused."""
        return " ".join(t.spec() for t in self.tables)

    def recall(self, distance: int) -> float:
        """Probability that a pair `distance` bits apart shares a probed key (over which
        bits differ, all choices equally likely)."""
        if self.family is Family.SAMPLED:
            width = self.tables[0].width
            agree = comb(BITS - width, distance) / comb(BITS, distance)
            return 1 - (1 - agree) ** len(self.tables)
        if self.family is Family.BLOCKS:
            return _blocks_recall(self.blocks, self.search_radius, distance)
        return _substrings_recall([(t.width, t.probe_radius) for t in self.tables], distance)


def _substrings_recall(parts: list[tuple[int, int]], distance: int) -> float:
    """Disjoint substrings (width, probe radius): missed only if every substring differs in
    more than its probe radius. Counts the ways to place `distance` flips so (a polynomial
    product)."""
    missed = [1]  # missed[d]: ways to place d flips so that every substring so far is missed
    for width, probe_radius in parts:
        ways = [comb(width, j) if j > probe_radius else 0 for j in range(width + 1)]
        missed = [
            sum(missed[i] * ways[d - i] for i in range(len(missed)) if 0 <= d - i <= width)
            for d in range(len(missed) + width)
        ]
    total = comb(BITS, distance)
    return 1 - (missed[distance] if distance < len(missed) else 0) / total


def _blocks_recall(blocks: tuple[int, ...], search_radius: int, distance: int) -> float:
    """Found iff at most `search_radius` blocks are touched: count placements by blocks
    touched."""
    # ways[t][d]: placements of d flips in the blocks so far touching t of them
    ways = [[1]]
    for width in blocks:
        grown = [[0] * (len(ways[0]) + width) for _ in range(len(ways) + 1)]
        for touched, row in enumerate(ways):
            for d, count in enumerate(row):
                if count:
                    grown[touched][d] += count
                    for j in range(1, width + 1):
                        grown[touched + 1][d + j] += count * comb(width, j)
        ways = grown
    found = sum(
        row[distance] for t, row in enumerate(ways) if t <= search_radius and distance < len(row)
    )
    return found / comb(BITS, distance)


def contiguous_runs(parts: int) -> list[tuple[int, ...]]:
    """64 bits cut into `parts` contiguous runs of positions, widest first."""
    base, extra = divmod(BITS, parts)
    top = BITS
    runs = []
    for i in range(parts):
        width = base + 1 if i < extra else base
        runs.append(tuple(range(top - 1, top - width - 1, -1)))
        top -= width
    return runs


def _check_search_radius(search_radius: int) -> None:
    if not 0 <= search_radius <= MAX_THRESHOLD:
        raise ValueError(f"threshold must be 0..{MAX_THRESHOLD}, got {search_radius}")


def pigeonhole(search_radius: int) -> Layout:
    """k+1 bands (at least 2: a key has at most 32 bits)."""
    _check_search_radius(search_radius)
    tables = tuple(Table(run) for run in contiguous_runs(max(search_radius + 1, 2)))
    return Layout(Family.PIGEONHOLE, search_radius, tables)


def multi_index(search_radius: int, substrings: int) -> Layout:
    """`substrings` tables (2..k) whose radii add up so that sum(r_i + 1) = k + 1."""
    _check_search_radius(search_radius)
    if not 2 <= substrings <= search_radius:
        raise ValueError(
            f"multi-index needs 2..{search_radius} substrings at threshold "
            f"{search_radius}, got {substrings}; k+1 substrings is the pigeonhole "
            "layout"
        )
    base, extra = divmod(search_radius + 1, substrings)
    tables = tuple(
        Table(run, base - 1 + (i < extra)) for i, run in enumerate(contiguous_runs(substrings))
    )
    return Layout(Family.MULTI_INDEX, search_radius, tables)


def blocks(search_radius: int, count: int) -> Layout:
    """`count` blocks, one table per combination of count - k of them."""
    _check_search_radius(search_radius)
    if count <= search_radius + 1:
        raise ValueError(f"blocks needs more than k+1 = {search_radius + 1} blocks, got {count}")
    runs = contiguous_runs(count)
    width = sum(len(r) for r in runs[: count - search_radius])
    if width > MAX_KEY_BITS:
        raise ValueError(
            f"{count} blocks at threshold {search_radius} key each table on {width} "
            f"bits, more than {MAX_KEY_BITS}; use more blocks"
        )
    tables = tuple(
        Table(tuple(itertools.chain.from_iterable(runs[i] for i in chosen)))
        for chosen in itertools.combinations(range(count), count - search_radius)
    )
    return Layout(Family.BLOCKS, search_radius, tables, tuple(len(r) for r in runs))


def sampled(search_radius: int, tables: int, bits: int) -> Layout:
    """`tables` tables keyed on `bits` bits drawn at random (the same draw for the same
    arguments, so every worker builds the same tables)."""
    _check_search_radius(search_radius)
    if not 1 <= tables <= 256:
        raise ValueError(f"sampled layouts have 1..256 tables, got {tables}")
    rng = random.Random(f"dedup-sampled:{tables}:{bits}")
    drawn = tuple(
        Table(tuple(sorted(rng.sample(range(BITS), bits), reverse=True))) for _ in range(tables)
    )
    return Layout(Family.SAMPLED, search_radius, drawn)


def parse_layout(text: str, search_radius: int) -> Layout:
    """A layout named in settings: "pigeonhole", "multi-index:M", "blocks:B" or
    "sampled:LxR" (L tables of R bits)."""
    family, _, arg = text.strip().partition(":")
    try:
        if family == Family.PIGEONHOLE and not arg:
            return pigeonhole(search_radius)
        if family == Family.MULTI_INDEX:
            return multi_index(search_radius, int(arg))
        if family == Family.BLOCKS:
            return blocks(search_radius, int(arg))
        if family == Family.SAMPLED:
            tables, _, bits = arg.partition("x")
            return sampled(search_radius, int(tables), int(bits))
    except ValueError as exc:
        raise ValueError(f"layout {text!r}: {exc}") from None
    raise ValueError(
        f"layout {text!r} is not one of: auto, pigeonhole, multi-index:M, blocks:B, "
        "sampled:LxR, bands:BxR"
    )
