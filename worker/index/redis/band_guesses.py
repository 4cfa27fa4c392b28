"""The worker's guesses of a batch's decisions over band postings, made from what it read of
the index (band_reads.py), so that check_bands.lua need not search: for each article in
turn, the way it goes (a replay, an exact copy, a short line, or a search) and, for a
search, what the script's own search would find. Pure: no Redis.

The guesses replay the script's rules over the state read, with the batch's earlier articles
posted as guessed: each bucket's newest `newest` postings, the `compared` sharing the most
bands with the article (between equals, the newest), the match with the most sketch bins
agreeing (then the fewest bits apart, then the first seen). The script takes them while the
index is as read (no other call or removal since: lua/check_bands.lua); where a guess would
need what was not read, or what only the script may do (an update's removal, an expired
article taken out), the guesses stop, and the script decides the rest itself.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from worker.index.redis.band_layout import BandLayout
from worker.index.redis.format import RECORD, SKETCH_BYTES, Field, pack_number
from worker.layout.bands import Bands
from worker.model import Probe

# A bucket with more than SPILL postings in its group string has a string of its own
# (lua/postings.lua); a guess gives OWN for such a bucket, else its postings in the group.
SPILL = 8
OWN = 255
NO_ALIVE = 0xFFFFFFFF  # the oldest first-seen second when none was compared


@dataclass
class BucketState:
    """A bucket as check_bands.lua would read it: its postings' numbers (oldest first; of a
    bucket with its own string, the newest read), whether it has its own string, and how
    many of its postings its group string holds."""

    found: list[int]
    own: bool
    count: int


class Known(NamedTuple):
    """An indexed article as its record gives it: what a search compares."""

    id: str
    seq: int
    alive_s: int
    sketch: bytes
    fingerprint: int

    @property
    def bins(self) -> int:
        """The sketch as one integer: two sketches agree on the zero bytes of their XOR."""
        return int.from_bytes(self.sketch)


def _span(f: Field) -> slice:
    return slice(f.start, f.start + f.size)


_SEQ, _ALIVE, _SKETCH, _FP = (
    _span(RECORD[name]) for name in ("seq", "alive_s", "sketch", "fingerprint")
)


def known_from(article_id: str, record: bytes) -> Known:
    return Known(
        article_id,
        int.from_bytes(record[_SEQ]),
        int.from_bytes(record[_ALIVE]),
        record[_SKETCH],
        int.from_bytes(record[_FP]),
    )


@dataclass
class Batch:
    """What was read for a batch (band_reads.py), at one count of the index's calls."""

    since: int  # the index's count of calls (lua/guesses.lua)
    head: bytes  # the head of its log of calls: call `since`'s entry
    counter: int  # the sequence counter
    front: int  # the expiry sweep's: postings of lower numbers are no one's (lua/expire.lua)
    cutoff_s: int | None  # first-seen seconds before this have expired (Redis's clock)
    buckets: dict[tuple[bytes, bytes], BucketState]
    docs: dict[str, bytes]  # the records read: the batch's ids, exact originals, candidates
    exact: dict[bytes, str]  # content hash -> the first article with it
    ids: dict[int, str | None]  # the numbers whose owners were read
    where: dict[bytes, list[tuple[bytes, bytes]]] = field(default_factory=dict)  # sketch -> buckets
    # What the batch's articles guessed so far add: id -> content hash; number -> article.
    fresh: dict[str, bytes] = field(default_factory=dict)
    known: dict[int, Known] = field(default_factory=dict)
    # The owners of numbers read, as their records give them (None: gone, or renumbered), or
    # as the worker read them before (band_known.py).
    owners: dict[int, Known | None] = field(default_factory=dict)


def top_compared(
    states: Sequence[BucketState], bands: Bands, front: int
) -> tuple[list[int], int, int]:
    """The numbers a search over buckets `states` compares (Bands.ranked, those below the
    sweep's `front` passed over), the postings read, and the buckets read in part."""
    buckets = [state.found for state in states]
    return bands.ranked(buckets, lowest=front), *bands.read_of(buckets)


class _Stop(Exception):
    """The guesses go no further: what comes next needs what was not read (`missing`: the
    owners of those numbers, which a further read gives), or what only the script may do."""

    def __init__(self, missing: Sequence[int] = ()) -> None:
        super().__init__()
        self.missing = list(missing)


@dataclass
class Guesses:
    """A batch's guesses so far, in check_bands.lua's form, and where they stopped."""

    counter: int  # the numbers given out so far, as guessed
    made: list[bytes] = field(default_factory=list)
    # The owners the next article's search needs and were not read (none: the guesses ended,
    # or went to the end).
    missing: list[int] = field(default_factory=list)

    def of(self, probes: Sequence[Probe]) -> list[bytes]:
        """Each probe's guess; b"" from the first that was not guessed."""
        return self.made + [b""] * (len(probes) - len(self.made))


class Guesser:
    def __init__(self, layout: BandLayout, duplicate_bins: int) -> None:
        self.layout = layout
        self.duplicate_bins = duplicate_bins

    def guess(
        self, probes: Sequence[Probe], batch: Batch, so_far: Guesses | None = None
    ) -> Guesses:
        """The probes' guesses, from where `so_far` stopped (once the owners it missed are in
        `batch`) or from the first."""
        done = so_far or Guesses(batch.counter)
        done.missing = []
        for probe in probes[len(done.made) :]:
            try:
                guess, takes = self._one(probe, batch, done.counter + 1)
            except _Stop as stop:
                done.missing = stop.missing
                break
            done.made.append(guess)
            done.counter += takes
        return done

    def _one(self, probe: Probe, batch: Batch, seq: int) -> tuple[bytes, int]:
        held = batch.fresh.get(probe.id) or batch.docs.get(probe.id)
        if held is not None:
            if held[:16] == probe.content_hash:
                return b"R", 0
            raise _Stop  # (new text: the old article is removed)
        first = batch.exact.get(probe.content_hash)
        if first is not None and first in batch.fresh:
            batch.fresh[probe.id] = probe.content_hash
            return b"E", 0
        original = batch.docs.get(first) if first is not None else None
        if original is not None:
            alive = int.from_bytes(original[_ALIVE])
            if batch.cutoff_s is not None and alive < batch.cutoff_s:
                raise _Stop  # (the script removes it)
            batch.fresh[probe.id] = probe.content_hash
            return b"E", 0
        if probe.line:
            guess, takes = b"N", 1
        elif not searched(probe):
            guess, takes = b"X", 0
        else:
            guess, takes = self._search(probe, batch, seq), 1
        batch.exact[probe.content_hash] = probe.id
        batch.fresh[probe.id] = probe.content_hash
        return guess, takes

    def _search(self, probe: Probe, batch: Batch, seq: int) -> bytes:
        sketch, fp = probe.sketch or b"", probe.fingerprint or 0
        mine = int.from_bytes(sketch)
        buckets = batch.where.get(sketch) or self.layout.buckets(sketch)
        states = [batch.buckets[b] for b in buckets]
        seqs, read, hot = top_compared(states, self.layout.bands, batch.front)
        best: tuple[tuple[int, int, int], Known] | None = None
        oldest = NO_ALIVE
        unread = [n for n in seqs if n not in batch.owners and n not in batch.ids]
        missing = [n for n in unread if n not in batch.known]
        if missing:
            raise _Stop(missing)
        for number in seqs:
            known = batch.known.get(number) or owner_of(batch, number)
            if known is None:
                continue
            if batch.cutoff_s is not None and known.alive_s < batch.cutoff_s:
                raise _Stop  # (the script takes it out)
            if known.seq <= batch.counter:
                oldest = min(oldest, known.alive_s)
            if known.id == probe.id:
                continue
            n = (mine ^ known.bins).to_bytes(SKETCH_BYTES).count(0)
            if n < self.duplicate_bins:
                continue
            key = (-n, (fp ^ known.fingerprint).bit_count(), number)
            if best is None or key < best[0]:
                best = (key, known)
        guess = (
            b"S"
            + b"".join(
                bytes([OWN if s.own else min(s.count, OWN - 1)]) + key[-3:] + check
                for s, (key, check) in zip(states, buckets, strict=True)
            )
            + struct.pack(">HBI", min(read, 0xFFFF), min(hot, 0xFF), oldest)
        )
        posted: Sequence[int] = range(len(buckets))
        if best is not None:
            (n, d, _), match = (-best[0][0], best[0][1], best[0][2]), best[1]
            # (one of the batch's: its number is the script's to give)
            number = match.seq if match.seq <= batch.counter else 0
            guess += pack_number(number) + bytes([n, d]) + match.id.encode("utf-8")
            rows = self.layout.bands.rows
            posted = [
                b
                for b in range(len(buckets))
                if sketch[b * rows : (b + 1) * rows] != match.sketch[b * rows : (b + 1) * rows]
            ]
        for b in posted:
            _post(states[b], seq, self.layout.bands.newest + 1)
        batch.known[seq] = Known(probe.id, seq, NO_ALIVE, sketch, fp)
        return guess


def owner_of(batch: Batch, number: int) -> Known | None:
    """The article indexed under `number`, as the batch read it (None: none)."""
    if number in batch.owners:
        return batch.owners[number]
    owner = batch.ids.get(number)
    record = batch.docs.get(owner) if owner is not None else None
    known = known_from(owner, record) if owner is not None and record is not None else None
    batch.owners[number] = known if known is not None and known.seq == number else None
    return batch.owners[number]


def searched(probe: Probe) -> bool:
    """Whether check_bands.lua searches the probe's band buckets (not a short line's)."""
    return (
        not probe.line
        and probe.fingerprint is not None
        and len(probe.sketch or b"") == SKETCH_BYTES
    )


def _post(state: BucketState, seq: int, kept: int) -> None:
    """A posting appended to the bucket, as lua/groups.lua's post_all makes it."""
    if not state.own and state.count >= SPILL:
        state.own = True
    if not state.own:
        state.count += 1
    state.found.append(seq)
    if state.own:
        del state.found[:-kept]
