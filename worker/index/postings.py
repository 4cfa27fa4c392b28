"""Where the in-memory index posts its entries and finds an article's candidates: under the
SimHash tables' keys (TablePostings) or under the set sketch's bands (BandPostings). Both
keep each bucket in the order inserted and read the newest entries, as Redis does."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Protocol

from worker.index import sealed
from worker.index.base import Entry
from worker.index.sealed import Sealed
from worker.layout.bands import Bands
from worker.layout.tables import Layout, neighbours
from worker.text.lines import line_keys


@dataclass
class Read:
    """An article's candidates, and what finding them took."""

    candidates: list[Entry] = field(default_factory=list)  # to judge by the rule
    entries: int = 0  # bucket entries read
    hot: int = 0  # buckets holding more entries than are read


class Postings(Protocol):
    def post(self, entry: Entry, match: Entry | None) -> None:
        """Index `entry`, a near-duplicate of `match` (None: not a near-duplicate)."""
        ...

    def unpost(self, entry: Entry, successor: Entry | None = None) -> None:
        """Take `entry` out (`successor`: the same article, posted again)."""
        ...

    def read(self, fingerprint: int, sketch: bytes, cutoff_s: int | None) -> Read:
        """The candidates of an article, without entries indexed before `cutoff_s`."""
        ...


class TablePostings:
    """Every entry under its key in each table; an article reads every key within each
    table's probe radius of its own, up to `max_bucket_read` newest entries of each."""

    def __init__(self, layout: Layout, max_bucket_read: int) -> None:
        self.layout = layout
        self.max_bucket_read = max_bucket_read
        self._buckets: defaultdict[tuple[int, int], list[Entry]] = defaultdict(list)

    def post(self, entry: Entry, match: Entry | None) -> None:
        for table, key in enumerate(self.layout.keys(entry.fingerprint)):
            self._buckets[table, key].append(entry)

    def unpost(self, entry: Entry, successor: Entry | None = None) -> None:
        for table, key in enumerate(self.layout.keys(entry.fingerprint)):
            _remove(self._buckets.get((table, key)), entry)

    def read(self, fingerprint: int, sketch: bytes, cutoff_s: int | None) -> Read:
        read = Read()
        if self.max_bucket_read <= 0:
            return read
        keys = self.layout.keys(fingerprint)
        for number, (table, key) in enumerate(zip(self.layout.tables, keys, strict=True)):
            for value in neighbours(key, table.width, table.probe_radius):
                bucket = _live(self._buckets.get((number, value), []), cutoff_s)
                read.candidates += bucket[-self.max_bucket_read :]
                read.hot += len(bucket) > self.max_bucket_read
        read.entries = len(read.candidates)
        return read


class BandPostings:
    """Entries under their sketch's band keys (worker.layout.bands). A near-duplicate is
    posted only under the bands it does not share with its match, and depends on the match
    for the others: once the match is removed or expires, it is posted under them too.

    New postings go into lists by key; every `seal_postings` of them (default:
    sealed.SEAL_POSTINGS) are sealed into arrays (worker.index.sealed), where a read looks
    too. A bucket is the same either way: its postings in the order posted, without those
    taken out."""

    def __init__(self, bands: Bands, seal_postings: int | None = None) -> None:
        self.bands = bands
        self._seal_postings = seal_postings or sealed.SEAL_POSTINGS
        # The postings not yet sealed: a bucket's one entry, or a list of its entries (most
        # buckets hold one, and a list for each would double what a posting costs).
        self._open: dict[int, Entry | list[Entry]] = {}
        self._open_postings = 0
        self._sealed = Sealed.empty()
        self._live: dict[int, Entry] = {}  # seq -> entry, for every entry posted
        self._dead: set[int] = set()  # taken out, with postings maybe still sealed
        # match -> {dependent: the bands it skipped}, and dependent -> its match
        self._dependents: dict[Entry, dict[Entry, list[int]]] = {}
        self._match_of: dict[Entry, Entry] = {}

    def post(self, entry: Entry, match: Entry | None) -> None:
        shared = set(self.bands.keys(match.sketch)) if match is not None else set()
        skipped = []
        self._live[entry.seq] = entry
        for key in self.bands.keys(entry.sketch):
            if key in shared:
                skipped.append(key)
            else:
                self._post_under(key, entry)
        if match is not None and skipped:
            self._dependents.setdefault(match, {})[entry] = skipped
            self._match_of[entry] = match
        if self._open_postings >= self._seal_postings:
            self._seal()

    def unpost(self, entry: Entry, successor: Entry | None = None) -> None:
        """Take `entry` out; its dependents move to `successor` (the same article posted
        again under every band), or are posted under the bands they skipped."""
        for key in self.bands.keys(entry.sketch):
            self._remove_open(key, entry)
        if self._live.get(entry.seq) == entry:
            del self._live[entry.seq]  # (its sealed postings are passed over from now on)
            self._dead.add(entry.seq)
        match = self._match_of.pop(entry, None)
        if match is not None:
            self._dependents.get(match, {}).pop(entry, None)
        dependents = self._dependents.pop(entry, {})
        if successor is not None:
            self._dependents.setdefault(successor, {}).update(dependents)
            self._match_of.update(dict.fromkeys(dependents, successor))
            return
        for dependent, keys in dependents.items():
            del self._match_of[dependent]
            for key in keys:
                self._post_under(key, dependent)

    @property
    def largest_bucket(self) -> int:
        keys = set(self._open).union(self._sealed.keys.tolist())
        return max((len(self._newest([k], None)[0]) for k in keys), default=0)

    def read(self, fingerprint: int, sketch: bytes, cutoff_s: int | None) -> Read:
        keys = self.bands.keys(sketch)
        if cutoff_s is not None:
            for key in keys:
                for gone in self._cut(key, cutoff_s):
                    self.unpost(gone)
        # (one more than is read tells a bucket holds more)
        buckets = self._newest(keys, self.bands.newest + 1)
        entries, hot = self.bands.read_of(buckets)
        return Read([self._live[seq] for seq in self.bands.ranked(buckets)], entries, hot)

    def _post_under(self, key: int, entry: Entry) -> None:
        held = self._open.get(key)
        if held is None:
            self._open[key] = entry
        elif isinstance(held, Entry):
            self._open[key] = [held, entry]
        else:
            held.append(entry)
        self._open_postings += 1

    def _open_bucket(self, key: int) -> list[Entry]:
        """The entries under `key` not yet sealed, oldest first."""
        held = self._open.get(key)
        return [] if held is None else [held] if isinstance(held, Entry) else held

    def _remove_open(self, key: int, entry: Entry) -> None:
        held = self._open.get(key)
        if isinstance(held, Entry):
            if held == entry:
                del self._open[key]
        else:
            _remove(held, entry)

    def _seal(self) -> None:
        counts, seqs = [], []
        for held in self._open.values():  # (no list made for a bucket of one)
            if isinstance(held, Entry):
                counts.append(1)
                seqs.append(held.seq)
            else:
                counts.append(len(held))
                seqs += [e.seq for e in held]
        newer = Sealed.of(list(self._open), counts, seqs)
        # (the postings of articles taken out are dropped once they are an eighth of them)
        dead = self._dead if len(self._dead) * self.bands.bands * 8 > len(self._sealed) else set()
        self._sealed = self._sealed.merged(newer, dead)
        if dead:
            self._dead = set()
        self._open, self._open_postings = {}, 0

    def _newest(self, keys: list[int], most: int | None) -> list[list[int]]:
        """The numbers of the newest `most` entries under each of `keys` (None: all), oldest
        first."""
        found = [[e.seq for e in self._open_bucket(k)[-(most or 0) :]] for k in keys]
        short = [i for i, f in enumerate(found) if most is None or len(f) < most]
        if short and len(self._sealed):
            for at, start, end in self._sealed.runs([keys[i] for i in short]):
                f = found[short[at]]
                f[:0] = self._older(start, end, most and most - len(f))
        return found

    def _older(self, start: int, end: int, most: int | None) -> list[int]:
        """The numbers of the newest `most` live entries (None: all) of the sealed postings
        start:end, oldest first."""
        seqs = self._sealed.seqs
        if not self._dead:  # (every sealed posting is live)
            tail: list[int] = seqs[start if most is None else max(start, end - most) : end].tolist()
            return tail
        older: list[int] = []
        while end > start and (most is None or len(older) < most):
            # (from the end, a few more at a time than are missing: some are not live)
            first = start if most is None else max(start, end - 2 * (most - len(older)))
            for seq in reversed(seqs[first:end].tolist()):
                if seq in self._live:
                    older.append(seq)
                    if len(older) == most:
                        break
            end = first
        return older[::-1]

    def _cut(self, key: int, cutoff_s: int) -> list[Entry]:
        """The entries under `key` indexed before `cutoff_s`, for the caller to unpost (which
        takes a bucket of one out); a list bucket loses them here, all at once."""
        bucket = (self._live[seq] for seq in self._newest([key], None)[0])
        gone = [e for e in bucket if e.seen_ms // 1000 < cutoff_s]
        held = self._open.get(key)
        if gone and isinstance(held, list):
            _cut(held, cutoff_s)  # (at once: unposting takes them out one by one)
        return gone


class LinePostings:
    """Short lines under their band keys (worker.text.lines); an article reads the newest
    `bands.newest` of each of its buckets, every one a candidate: ranking lines by bands
    shared would put a templated line's many look-alikes before its copy."""

    def __init__(self, newest: int) -> None:
        self.newest = newest
        self._buckets: dict[int, list[Entry]] = {}

    def post(self, entry: Entry, match: Entry | None) -> None:
        for key in line_keys(entry.line):
            self._buckets.setdefault(key, []).append(entry)

    def unpost(self, entry: Entry, successor: Entry | None = None) -> None:
        for key in line_keys(entry.line):
            _remove(self._buckets.get(key), entry)

    def read(self, line: bytes, cutoff_s: int | None) -> Read:
        buckets = [_live(self._buckets.get(k, []), cutoff_s) for k in line_keys(line)]
        read = [e for b in buckets for e in b[-self.newest :]]
        return Read(
            list(dict.fromkeys(read)), len(read), sum(len(b) > self.newest for b in buckets)
        )


def _cut(bucket: list[Entry], cutoff_s: int) -> list[Entry]:
    """The bucket's entries indexed before `cutoff_s`, taken out of it."""
    gone = [e for e in bucket if e.seen_ms // 1000 < cutoff_s]
    if gone:
        bucket[:] = [e for e in bucket if e.seen_ms // 1000 >= cutoff_s]
    return gone


def _live(bucket: list[Entry], cutoff_s: int | None) -> list[Entry]:
    """The bucket without its expired entries (cut for good)."""
    if cutoff_s is not None:
        _cut(bucket, cutoff_s)
    return bucket


def _remove(bucket: list[Entry] | None, entry: Entry) -> None:
    if bucket is not None and entry in bucket:  # (expired entries may have been cut already)
        bucket.remove(entry)
