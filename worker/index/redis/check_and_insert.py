"""check_and_insert.lua's calls: the arguments every call of one index shares, made once, then
each article's (lua/tables.lua's header describes its KEYS and ARGV), and the reading of its
replies; and the records that calls sent in order leave for the calls after them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from worker.index.base import Rule
from worker.index.redis.format import pack_line, pack_position
from worker.index.redis.frame import Frame
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import BucketRead, earlier_within, within_earlier_calls
from worker.index.redis.replies import verdict_of
from worker.index.redis.scripts import ARTICLES_PER_CALL, SEARCHED_PER_CALL
from worker.layout.tables import Layout, Table
from worker.model import Probe, Verdict
from worker.text.simhash import to_bytes


@dataclass(frozen=True)
class CallRecord:
    """A check-and-insert call that leaves a record (lua/tables.lua, ARGV[b]) under
    `key`: a call sent after it, whose read predates it, takes its articles from the record
    (those within the search radius: the worker finds them among `simhashes`, its articles'
    SimHashes) rather than comparing its ring entries in the script."""

    key: str
    simhashes: list[int | None]


@dataclass(frozen=True)
class InOrder:
    """A batch's calls sent before the replies of those before them are read: the snapshot
    its reads were made at (the cache's last number and that number's ring entry, which the
    script checks), the calls sent since the snapshot whose records to take, and a new key
    for each call's own record."""

    snapshot: int
    snapshot_entry: bytes
    earlier: Sequence[CallRecord]
    record_key: Callable[[], str]


@dataclass(frozen=True)
class Call:
    argv: list[Any]  # numkeys, KEYS, ARGV
    record: CallRecord | None


class CheckAndInsertCalls:
    """Builds check_and_insert.lua's calls for one index: the arguments every call shares,
    made once, then each article's; and reads its replies."""

    def __init__(
        self,
        keys: NamespaceKeys,
        layout: Layout,
        rule: Rule,
        *,
        max_bucket_read: int,
        retention_s: int,
        renew_on_match: bool,
        redelivery_window_s: int,
    ) -> None:
        self.layout = layout
        self.rule = rule
        self._reads_buckets = max_bucket_read > 0
        self._frame = Frame(keys, retention_s, renew_on_match, redelivery_window_s)
        shape = [(t.width, t.probe_radius, _first_half(t)) for t in layout.tables]
        # The script's own shared arguments (lua/tables.lua, ARGV[A+1] on).
        self._shared = [
            rule.threshold,
            rule.search_radius,
            max_bucket_read,
            rule.duplicate_bins,
            rule.related_bins,
            rule.max_candidates,
            int(layout.reaches_all(rule.search_radius)),
            len(shape),
            *itertools.chain.from_iterable(shape),
        ]

    def calls(
        self,
        probes: Sequence[Probe],
        reads: Sequence[BucketRead | None],
        epoch: str,
        guard: Callable[[], bytes] = bytes,
        in_order: InOrder | None = None,
    ) -> list[Call]:
        """One call per ARTICLES_PER_CALL probes, in order, for the index of `epoch`, each
        with the guard `guard` gives (guard.py; it numbers the calls of a chain); with
        `in_order`, each leaves a record and takes those of the earlier calls."""
        out = []
        in_flight: list[Any] = [b"", b"", 0]  # (ARGV[b+1] on: lua/tables.lua)
        before: list[int | None] = []
        if in_order is not None:
            in_flight = [in_order.snapshot_entry, in_order.snapshot, len(in_order.earlier)]
            for earlier_call in in_order.earlier:
                in_flight += [earlier_call.key, len(earlier_call.simhashes)]
                before += earlier_call.simhashes
        for start, stop in self._groups(probes, reads):
            group = probes[start:stop]
            simhashes = [p.table_key for p in group]
            record = None if in_order is None else CallRecord(in_order.record_key(), simhashes)
            call = [
                *self._frame.head(epoch, guard()),
                *self._shared,
                record.key if record is not None else b"",
                *in_flight,
            ]
            earlier = earlier_within(simhashes, self.rule.search_radius)
            among = within_earlier_calls(simhashes, before, self.rule.search_radius)
            for probe, read, close, close_before in zip(
                group, reads[start:stop], earlier, among, strict=True
            ):
                call += self._article(probe, read, close, close_before)
            out.append(Call(call, record))
        return out

    def _groups(
        self, probes: Sequence[Probe], reads: Sequence[BucketRead | None]
    ) -> list[tuple[int, int]]:
        """Where each call's articles start and stop: ARTICLES_PER_CALL of them, and at most
        SEARCHED_PER_CALL that the script searches the buckets for (the worker read none: a
        bucket over the read limit), whose cost grows with a cluster of copies; so that no one
        call holds Redis's thread up for long."""
        groups, start, searched = [], 0, 0
        for i, (probe, read) in enumerate(zip(probes, reads, strict=True)):
            here = read is None and probe.table_key is not None and self._reads_buckets
            if i > start and (
                i - start == ARTICLES_PER_CALL or searched + here > SEARCHED_PER_CALL
            ):
                groups.append((start, i))
                start, searched = i, 0
            searched += here
        if start < len(probes):
            groups.append((start, len(probes)))
        return groups

    def _article(
        self, probe: Probe, read: BucketRead | None, earlier: bytes, earlier_calls: bytes
    ) -> list[Any]:
        fp = probe.fingerprint
        argv: list[Any] = [
            probe.id.encode("utf-8"),
            probe.content_hash,
            to_bytes(fp) if fp is not None else b"",
            probe.sketch if fp is not None and probe.sketch else b"",
            pack_position(probe.position),
            pack_line(probe.line) if probe.line else b"",
        ]
        if read is None:  # the worker read nothing: the script searches the buckets
            argv += [b"", b"", b"", b"", 0, 0, 0]
        else:
            argv += [
                read.snapshot,
                read.found.entries,
                earlier,
                earlier_calls,
                read.found.candidates,
                read.found.hot,
                len(read.expired),
                *read.expired,
            ]
        if fp is not None:
            argv += self.layout.keys(fp)
        return argv

    def verdict(self, probe: Probe, reply: list[bytes | int]) -> Verdict:
        """The verdict in one article's reply."""
        return verdict_of(self.rule, probe, reply)


def _first_half(table: Table) -> int:
    """Which half of a candidate the script compares first: the one this table's key covers
    less (0: the high 32 bits, bytes 1-4; 4: the low 32 bits), as candidates found through
    the table nearly agree on its key bits and differ most elsewhere."""
    high = sum(p >= 32 for p in table.positions)
    return 4 if high > table.width - high else 0
