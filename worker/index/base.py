"""The contract every index keeps (the Redis index and the in-memory one), and the rule that
picks an article's match, which both apply (the Redis index in its Lua script; the contract
tests hold the two to the same answers)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from worker import defaults
from worker.layout.bands import Bands
from worker.layout.tables import Layout
from worker.model import SIMHASH_BITS, Forget, Owner, Probe, Verdict
from worker.text.lines import line_distance, line_rule
from worker.text.simhash import hamming
from worker.text.sketch import SketchShape, agreeing_bins, bins_needed, estimate


def duplicate_threshold(layout: Layout, threshold: int | None) -> int:
    """The duplicate threshold: at most the layout's search radius (which is then the related
    threshold); None: the search radius."""
    if threshold is None:
        return layout.search_radius
    if not 0 <= threshold <= layout.search_radius:
        raise ValueError(
            f"threshold {threshold} must be 0..{layout.search_radius}: the layout is "
            f"searched up to {layout.search_radius} bits"
        )
    return threshold


Op = Probe | Forget  # what a batch asks of the index, message by message


@dataclass(frozen=True)
class IndexOptions:
    """How an index decides and what it keeps, the same for the memory and the Redis index.
    Candidates within `threshold` bits (None: the layout's search radius) whose estimated
    Jaccard similarity is at least `similarity` are duplicates; with a wider layout, more
    distant or less similar ones may be related (Rule, Kind.RELATED). Only the newest
    `max_bucket_read` entries of a bucket are read. Articles older than `retention_s` (0:
    none) stop matching; with `renew_on_match`, an article matched by a copy starts its
    retention again. What a deleting or replacing message did is kept
    `redelivery_window_s`, for a redelivery of it (Probe.position, Forget.position)."""

    threshold: int | None = None
    similarity: float = defaults.SIMILARITY
    max_bucket_read: int = defaults.MAX_BUCKET_READ
    retention_s: int = 0
    renew_on_match: bool = defaults.RENEW_ON_MATCH
    redelivery_window_s: int = defaults.REDELIVERY_WINDOW_S


class Index(Protocol):
    threshold: int

    async def decide(self, ops: Sequence[Op], owner: Owner | None = None) -> list[Verdict | bool]:
        """A batch's articles and deletions, decided and applied in order as one unit: no
        other batch sent to this index takes effect between two of them. An article gets
        its verdict (check_and_insert), a deletion whether the id was indexed (forget).
        `owner`: the worker asks as the owner of the ops' input partitions (their positions)
        in a consumer group generation; once a later generation claimed one of them, the
        batch is refused (IndexFenced) and nothing of it is applied."""
        ...

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        """Decide each probe in order, as if one at a time, and index it unless it is an
        exact copy (near-duplicates are indexed too: a later copy may be closest to them).

        Each decision is atomic: no other caller can slip between its check and its insert.
        A probe whose id was decided before gets the same verdict again (replayed=True); if
        its text changed, the old article is removed first and the new one decided
        (replaced=True).
        """
        ...

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        """Remove articles from the index (True for each id it held): they no longer match,
        and their ids may be used again. (decide with Forgets, outside a stream)"""
        ...

    async def expire(self, limit: int = 1000) -> int:
        """One step of reclaiming articles older than the retention window (none without
        one): removes up to ~`limit` and returns how many, `limit` or more when more may be
        waiting. Expired articles stop matching at once; this frees their memory."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Rule:
    """How an index judges an article's candidates; the memory index applies it in Python, the
    Redis index in its Lua script (with the same integers), and the contract tests hold the
    two to the same answers.

    Candidates are the earlier indexed articles within `search_radius` bits of the article's search
    fingerprint, of which the `max_candidates` nearest (ties: first seen) are compared by
    their sketches. The most similar of those within `threshold` bits that agree on at least
    `duplicate_bins` bins is the article's match, a near-duplicate (between equals, the
    nearer, then the first seen); without one, with a related tier (search_radius > threshold),
    the most similar within `search_radius` that agree on `related_bins` makes it related."""

    threshold: int
    search_radius: int
    similarity: float  # what `duplicate_bins` is the integer form of
    duplicate_bins: int
    related_bins: int
    max_candidates: int
    shape: SketchShape

    @classmethod
    def of(
        cls,
        layout: Layout,
        threshold: int,
        similarity: float,
        max_candidates: int = defaults.MAX_CANDIDATES,
        shape: SketchShape | None = None,
    ) -> Rule:
        shape = shape or SketchShape(defaults.SKETCH_BINS, defaults.SKETCH_BITS)
        if not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {similarity}")
        return cls(
            threshold,
            layout.search_radius,
            similarity,
            bins_needed(similarity, shape),
            bins_needed(defaults.RELATED_SIMILARITY, shape),
            max_candidates,
            shape,
        )

    @classmethod
    def of_bands(cls, bands: Bands, similarity: float, shape: SketchShape | None = None) -> Rule:
        """The rule with band candidates: the sketches alone decide (every candidate is
        within the radius), `bands.compared` of them at most; no related tier."""
        shape = shape or SketchShape(defaults.SKETCH_BINS, defaults.SKETCH_BITS)
        bands.check(shape)
        if not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {similarity}")
        no_related = shape.bins + 1
        needed = bins_needed(similarity, shape)
        return cls(
            SIMHASH_BITS, SIMHASH_BITS, similarity, needed, no_related, bands.compared, shape
        )

    def similarity_of(self, agreeing: int) -> float:
        """The estimated Jaccard similarity of two sketches agreeing on `agreeing` bins."""
        return round(estimate(agreeing, self.shape), 4)


@dataclass(frozen=True, slots=True)
class Entry:
    """An indexed article, as a candidate match."""

    id: str
    fingerprint: int
    seq: int  # order of indexing in its index: 1 for the first, then 2, ...
    seen_ms: int = 0  # when it was indexed (for expiry)
    sketch: bytes = b""
    line: bytes = b""  # a short text's units (worker.text.lines)


@dataclass(frozen=True)
class Match:
    entry: Entry
    distance: int
    agreeing: int  # sketch bins the two agree on
    near: bool  # a near-duplicate; else related


def match(
    rule: Rule, fingerprint: int, sketch: bytes, candidates: Iterable[Entry], exclude_id: str
) -> Match | None:
    """The article's match among `candidates` under `rule`, or None. An article is never its
    own match."""
    distinct = {e.seq: e for e in candidates if e.id != exclude_id}  # (tables share entries)
    within = sorted(
        ((hamming(fingerprint, e.fingerprint), e.seq, e) for e in distinct.values()),
        key=lambda c: c[:2],
    )
    within = [c for c in within if c[0] <= rule.search_radius][: rule.max_candidates]
    best: Match | None = None
    best_key: tuple[bool, int, int, int] | None = None  # near first, most similar, nearest
    for distance, seq, entry in within:
        agreeing = agreeing_bins(sketch, entry.sketch, rule.shape) if entry.sketch else 0
        near = distance <= rule.threshold and agreeing >= rule.duplicate_bins
        related = rule.search_radius > rule.threshold and agreeing >= rule.related_bins
        key = (not near, -agreeing, distance, seq)
        if (near or related) and (best_key is None or key < best_key):
            best, best_key = Match(entry, distance, agreeing, near), key
    return best


def match_line(line: bytes, candidates: Iterable[Entry], exclude_id: str) -> Entry | None:
    """A short line's match among `candidates` (worker.text.lines): of the lines the line
    rule makes near-duplicates, the one with the fewest units changed (between equals, the
    first seen). An article is never its own match."""
    best: tuple[int, int, Entry] | None = None
    for entry in candidates:
        if entry.id == exclude_id or not entry.line:
            continue
        distance = line_distance(line, entry.line)
        if line_rule(distance, line, entry.line) and (
            best is None or (distance, entry.seq) < best[:2]
        ):
            best = (distance, entry.seq, entry)
    return best[2] if best is not None else None
