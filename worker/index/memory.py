"""An in-process index with the same contract as the Redis index: for unit tests and for the
embedded `scan` mode. Not shared between processes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from worker.errors import IndexFenced
from worker.index.base import (
    Entry,
    IndexOptions,
    Op,
    Rule,
    duplicate_threshold,
    match,
    match_line,
)
from worker.index.postings import BandPostings, LinePostings, Postings, Read, TablePostings
from worker.layout.bands import Bands
from worker.layout.planner import default_layout
from worker.layout.tables import Layout
from worker.model import Forget, Kind, Owner, Probe, Verdict
from worker.text.lines import LINE_NEWEST, line_similarity
from worker.text.simhash import hamming


@dataclass(slots=True)
class _Record:
    content_hash: bytes
    verdict: Verdict
    entry: Entry | None  # its place in the buckets, if indexed there
    original: str  # the first article of its cluster
    alive_ms: int  # when it last started its retention (first seen, or renewed)
    position: tuple[int, int] | None = None  # of the message that decided it


class MemoryIndex:
    def __init__(
        self,
        layout: Layout | Bands | None = None,
        options: IndexOptions | None = None,
        *,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        """`layout`: SimHash tables (default: the default settings') or bands over the
        sketch; `options` (IndexOptions); `clock_ms` (default: the system's) stamps
        decisions."""
        options = options or IndexOptions()
        self.layout = layout or default_layout()
        self.max_bucket_read = options.max_bucket_read  # (SimHash tables; bands: Bands.newest)
        self._postings: Postings
        self._lines: LinePostings
        if isinstance(self.layout, Bands):
            self.rule = Rule.of_bands(self.layout, options.similarity)
            self.threshold = self.rule.threshold
            self._postings = BandPostings(self.layout)
            self._lines = LinePostings(self.layout.newest)
        else:
            self.threshold = duplicate_threshold(self.layout, options.threshold)
            self.rule = Rule.of(self.layout, self.threshold, options.similarity)
            self._postings = TablePostings(self.layout, options.max_bucket_read)
            self._lines = LinePostings(LINE_NEWEST)
        self.retention_s = options.retention_s
        self.renew_on_match = options.renew_on_match
        self.redelivery_window_s = options.redelivery_window_s
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._exact: dict[bytes, str] = {}
        self._records: dict[str, _Record] = {}
        # What a message (id, position) did, once a later message deleted or replaced its
        # article (its record) or for a deletion (its answer), with when it is let go (ms).
        self._gone: dict[tuple[str, tuple[int, int]], tuple[_Record | bool, int]] = {}
        self._claims: dict[str, int] = {}  # "scope/partition" -> the generation that owns it
        self._seq = 0

    async def decide(self, ops: Sequence[Op], owner: Owner | None = None) -> list[Verdict | bool]:
        if owner is not None:
            self._claim(owner, {op.position[0] for op in ops if op.position is not None})
        return [
            self.check_and_insert_one(op) if isinstance(op, Probe) else self._forget(op)
            for op in ops
        ]

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        return [self.check_and_insert_one(p) for p in probes]

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        return [self._forget(Forget(i)) for i in ids]

    def _claim(self, owner: Owner, partitions: set[int]) -> None:
        keys = [f"{owner.scope}/{p}" for p in partitions]
        for key in keys:
            if self._claims.get(key, -1) > owner.generation:
                raise IndexFenced(
                    f"{key} was claimed by generation {self._claims[key]}, this batch comes "
                    f"from generation {owner.generation}"
                )
        self._claims.update(dict.fromkeys(keys, owner.generation))

    def _forget(self, op: Forget) -> bool:
        now = self._clock_ms()
        kept = self._kept_of(op.id, op.position, now)
        if isinstance(kept, bool):  # this deletion was applied before
            return kept
        record = self._records.get(op.id)
        if record is not None and _later_in_partition(record.position, op.position):
            return False
        was = self._remove(op.id, keep=True)
        if op.position is not None and self.redelivery_window_s > 0:
            self._gone[op.id, op.position] = (was, now + self.redelivery_window_s * 1000)
        return was

    async def expire(self, limit: int = 1000) -> int:
        cutoff = self._cutoff_s(self._clock_ms())
        if cutoff is None:
            return 0
        old = [i for i, r in self._records.items() if r.alive_ms < cutoff * 1000]
        for article_id in old[:limit]:
            self._remove(article_id)
        return min(len(old), limit)

    def _cutoff_s(self, now_ms: int) -> int | None:
        """Articles alive before this second have expired (as in the Lua script)."""
        return now_ms // 1000 - self.retention_s if self.retention_s else None

    def check_and_insert_one(self, probe: Probe) -> Verdict:
        now = self._clock_ms()
        held = self._records.get(probe.id)
        known = held
        if known is None or known.content_hash != probe.content_hash:
            kept = self._kept_of(probe.id, probe.position, now)
            known = kept if isinstance(kept, _Record) else None
            if known is not None and known.content_hash != probe.content_hash:
                known = None
        if known is not None:
            return replace(
                known.verdict, replayed=True, candidates=0, hot_buckets=0, replaced=False
            )
        if held is not None and _later_in_partition(held.position, probe.position):
            # a redelivery whose record is no longer kept: decided, neither indexed nor kept
            return replace(self._judge(probe, now)[0], replayed=True)
        replaced = self._remove(probe.id, keep=True)
        verdict, original = self._judge(probe, now)
        verdict = replace(verdict, replaced=replaced)
        entry = None
        if verdict.kind is not Kind.EXACT:
            self._exact.setdefault(probe.content_hash, probe.id)
            if probe.fingerprint is not None or probe.line:
                near = self._records.get(verdict.duplicate_of or "")
                matched = near.entry if near is not None and verdict.kind is Kind.NEAR else None
                entry = self._insert(probe, now, matched)
        self._records[probe.id] = _Record(
            probe.content_hash, verdict, entry, original, now, probe.position
        )
        if self.renew_on_match and verdict.is_duplicate and verdict.duplicate_of:
            self._renew(verdict.duplicate_of, now)
        return verdict

    def _insert(self, probe: Probe | Entry, now: int, match: Entry | None) -> Entry:
        """Index an article (or an entry again) under a new sequence number."""
        self._seq += 1
        line = probe.line or b""
        fingerprint = probe.fingerprint if probe.fingerprint is not None else 0
        entry = Entry(probe.id, fingerprint, self._seq, now, probe.sketch or b"", line)
        self._postings_of(entry).post(entry, match)
        return entry

    def _postings_of(self, entry: Entry) -> Postings | LinePostings:
        return self._lines if entry.line else self._postings

    def _renew(self, article_id: str, now: int) -> None:
        """The article starts its retention again: it moves to the end of its buckets."""
        record = self._records.get(article_id)
        if record is None:
            return
        record.alive_ms = now
        if record.entry is not None:
            old = record.entry
            record.entry = self._insert(old, now, None)
            self._postings_of(old).unpost(old, successor=record.entry)

    def _kept_of(
        self, article_id: str, position: tuple[int, int] | None, now: int
    ) -> _Record | bool | None:
        """What the message at `position` did to `article_id`, if kept: the record of the
        article it decided (a later message deleted or replaced it), or a deletion's answer."""
        kept = self._gone.get((article_id, position)) if position is not None else None
        return kept[0] if kept is not None and kept[1] > now else None

    def _remove(self, article_id: str, keep: bool = False) -> bool:
        """Remove an article; with `keep` (a deletion or a replacement, not expiry), keep its
        record for a redelivery of the message that decided it."""
        record = self._records.pop(article_id, None)
        if record is None:
            return False
        if keep and record.position is not None and self.redelivery_window_s > 0:
            until = self._clock_ms() + self.redelivery_window_s * 1000
            self._gone[article_id, record.position] = (record, until)
        if record.entry is not None:
            self._postings_of(record.entry).unpost(record.entry)
        if self._exact.get(record.content_hash) == article_id:
            del self._exact[record.content_hash]
        return True

    def _judge(self, probe: Probe, now: int) -> tuple[Verdict, str]:
        """The verdict, and the first article of the probe's cluster."""
        cutoff = self._cutoff_s(now)
        exact_id = self._exact.get(probe.content_hash)
        if (
            exact_id is not None
            and cutoff is not None
            and (self._records[exact_id].alive_ms < cutoff * 1000)
        ):
            self._remove(exact_id)
            exact_id = None
        if exact_id is not None:
            record = self._records[exact_id]
            original = _cluster_of(record.original, exact_id, probe.id)
            matched = record.verdict.fingerprint
            distance = (
                hamming(probe.fingerprint, matched)
                if probe.fingerprint is not None and matched is not None
                else 0
            )
            return Verdict(
                id=probe.id,
                kind=Kind.EXACT,
                fingerprint=probe.fingerprint,
                duplicate_of=exact_id,
                distance=distance,
                duplicate_of_fingerprint=matched,
                similarity=1.0,
                original=original,
                seen_at_ms=now,
            ), original
        read, found = self._find(probe, cutoff)
        if found is not None:
            entry, near, similarity = found
            original = _cluster_of(self._records[entry.id].original, entry.id, probe.id)
            matched_fingerprint = self._records[entry.id].verdict.fingerprint
            return Verdict(
                id=probe.id,
                kind=Kind.NEAR if near else Kind.RELATED,
                fingerprint=probe.fingerprint,
                duplicate_of=entry.id,
                distance=(
                    hamming(probe.fingerprint, matched_fingerprint)
                    if probe.fingerprint is not None and matched_fingerprint is not None
                    else None
                ),
                duplicate_of_fingerprint=matched_fingerprint,
                similarity=similarity,
                original=original if near else None,
                seen_at_ms=now,
                candidates=read.entries,
                hot_buckets=read.hot,
            ), original if near else probe.id
        return Verdict(
            id=probe.id,
            kind=Kind.UNIQUE,
            fingerprint=probe.fingerprint,
            seen_at_ms=now,
            candidates=read.entries,
            hot_buckets=read.hot,
        ), probe.id

    def _find(self, probe: Probe, cutoff: int | None) -> tuple[Read, _Found | None]:
        """The probe's candidates, and its match among them: a short line's by the line
        rule, any other's by the sketch rule."""
        if probe.line:
            read = self._lines.read(probe.line, cutoff)
            line = match_line(probe.line, read.candidates, probe.id)
            return read, (line, True, line_similarity(probe.line, line.line)) if line else None
        if probe.fingerprint is None or not probe.sketch:
            return Read(), None
        read = self._postings.read(probe.fingerprint, probe.sketch, cutoff)
        found = match(self.rule, probe.fingerprint, probe.sketch, read.candidates, probe.id)
        if found is None:
            return read, None
        return read, (found.entry, found.near, self.rule.similarity_of(found.agreeing))

    async def close(self) -> None:
        return None


_Found = tuple[Entry, bool, float]  # the match, whether a near-duplicate, the similarity


def _later_in_partition(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    """Whether position `a` comes after `b` in the same input partition."""
    return a is not None and b is not None and a[0] == b[0] and a[1] > b[1]


def _cluster_of(original: str, matched: str, article_id: str) -> str:
    """The first article of the cluster an article joins by matching `matched`: an article
    sent again with new text may match what repeated its old text, whose cluster then starts
    at `matched`, never at the article itself (as in the Lua script)."""
    return matched if original == article_id else original
