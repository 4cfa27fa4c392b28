"""The shared index in Redis with band postings (worker/layout/bands.py): check_bands.lua
decides a batch's articles, one after another. The worker reads their buckets first and
guesses what the script's search would find (band_reads.py, band_guesses.py); the script
takes the guesses while the index is as read, and else searches the buckets itself (a short
line's under its line keys). The worker keeps no copy of the index.
Deletions, expiry and the guarantees are RedisIndex's."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from worker import defaults
from worker.errors import IndexStoreError
from worker.index.base import IndexOptions, Rule
from worker.index.redis import guard
from worker.index.redis.band_calls import BandCalls
from worker.index.redis.band_guesses import Batch, Guesser, Known, searched
from worker.index.redis.band_known import KNOWN_MOST, KnownCache, KnownStats
from worker.index.redis.band_layout import BandLayout
from worker.index.redis.band_reads import BandReads
from worker.index.redis.client import Client
from worker.index.redis.format import BANDS_FORMAT
from worker.index.redis.namespace_index import NamespaceIndex
from worker.index.redis.nearest import BucketRead
from worker.index.redis.replies import numbers_of, verdicts_of
from worker.index.redis.scripts import Script
from worker.layout.bands import Bands
from worker.model import SIMHASH_BITS, Kind, Probe, Verdict

# The worker reads a batch and guesses it only where the script's own search costs Redis more
# than those reads: while the articles of late read this many postings each, on average
# (template text, a large index). Below, the script searches about as cheaply.
GUESS_FROM = 16
# Reads of further owners a batch's guesses may take, after the first read (copies of one
# story in a batch move others into the newest postings read: each round lets the guesses go
# further, for a round trip of reads).
OWNER_ROUNDS = 2
# After the replica the reads go to fails (down, loading its data, cut off), the worker reads
# on the primary this long before it tries the replica again: a replica never stops decisions.
REPLICA_PAUSE_S = 10.0

log = logging.getLogger(__name__)


class RedisBandIndex(NamespaceIndex):
    # (the calls carry the worker's guesses, made from what it read)
    _read_before = frozenset({Script.CHECK_BANDS})

    def __init__(
        self,
        client: Client,
        namespace: str,
        bands: Bands,
        options: IndexOptions | None = None,
        *,
        expected_docs: int = defaults.EXPECTED_DOCS,
        fingerprint_spec: str | None = None,
        on_reset: Callable[[str], None] | None = None,
        replicas_acked: int = 0,
        guesses: bool | None = None,
        replicas: Client | None = None,
        known_articles: int = KNOWN_MOST,
    ) -> None:
        """The index of one namespace on one Redis (or one Redis Cluster), with band postings
        in group strings sized for `expected_docs` articles (format.group_bits); with
        `guesses` the worker guesses every batch (band_guesses.py), with False none (the
        script searches every article itself), by default those whose articles read many
        postings (GUESS_FROM); with `replicas` (client.connect_replicas) the worker's reads
        before each call go there; it keeps up to `known_articles` of the indexed articles
        it read (band_known.py); the other arguments as RedisIndex's."""
        options = options or IndexOptions()
        super().__init__(
            client, namespace, options, fingerprint_spec, on_reset, expected_docs, replicas_acked
        )
        self.bands = bands
        self.guesses = guesses
        self._postings = 0.0  # postings read per article, a moving average over the batches
        self.threshold = SIMHASH_BITS
        self.rule = Rule.of_bands(bands, options.similarity)
        layout = BandLayout(self.keys.buckets.encode(), bands, self.groups)
        self._guesser = Guesser(layout, self.rule.duplicate_bins)
        self._known = KnownCache(known_articles)
        self._reads = BandReads(
            client, self.keys, layout, retention_s=self.retention_s, known=self._known
        )
        self._replica_reads = (
            BandReads(replicas, self.keys, layout, retention_s=self.retention_s, known=self._known)
            if replicas is not None
            else None
        )
        self._replica_back = 0.0  # (time.monotonic(): when the replica is tried again)
        self._band_calls = BandCalls(
            self.keys,
            bands,
            self.rule,
            retention_s=self.retention_s,
            renew_on_match=self.renew_on_match,
            redelivery_window_s=self.redelivery_window_s,
        )

    @property
    def known_stats(self) -> KnownStats:
        return self._known.stats()

    @property
    def description(self) -> dict[str, str]:
        described = {
            "format": BANDS_FORMAT,
            "layout": "bands",
            "duplicate_bins": str(self.rule.duplicate_bins),
            "sketch": self.rule.shape.spec(),
            "tables": self.bands.spec(),  # (the stored name of the postings' spec)
            "groups": str(self.groups),
            "exact_groups": str(self.exact_groups),
        }
        if self.fingerprint_spec is not None:
            described["fingerprints"] = self.fingerprint_spec
        return described

    async def close(self) -> None:
        await super().close()
        if self._replica_reads is not None:
            await self._replica_reads.client.aclose()

    async def run_checks(
        self,
        probes: Sequence[Probe],
        reads: Sequence[BucketRead | None],
        claims: Sequence[tuple[str, int]] = (),
    ) -> list[Verdict]:
        # (renewing moves a match to a new number: not guessed)
        wanted = self._postings >= GUESS_FROM if self.guesses is None else self.guesses
        guessing = wanted and not self.renew_on_match
        guesses = await self._guess(probes) if guessing else None
        batch = guesses[1] if guesses is not None else None
        replies = await self._run(
            Script.CHECK_BANDS,
            lambda epoch: self._band_calls.calls(
                probes,
                epoch,
                lambda: guard.pack(None, claims),
                guesses[0] if guesses is not None else None,
                batch,
            ),
        )
        verdicts = verdicts_of(self.rule, probes, replies)
        if batch is not None:
            self._keep_indexed(probes, verdicts, numbers_of(replies))
        searched = [v.candidates for v in verdicts if v.kind is not Kind.EXACT and not v.replayed]
        if searched:
            self._postings = 0.7 * self._postings + 0.3 * sum(searched) / len(searched)
        return verdicts

    def _keep_indexed(
        self, probes: Sequence[Probe], verdicts: Sequence[Verdict], numbers: Sequence[int]
    ) -> None:
        """The batch's articles just indexed under band buckets, as later batches' guesses
        compare them (they are the newest postings of their buckets)."""
        for probe, verdict, number in zip(probes, verdicts, numbers, strict=True):
            fp, sketch = probe.fingerprint, probe.sketch
            if number and not verdict.replayed and searched(probe) and fp is not None and sketch:
                self._known.keep(
                    Known(
                        probe.id,
                        number,
                        verdict.seen_at_ms // 1000,  # (when its retention started)
                        sketch,
                        fp,
                    )
                )

    async def _reload(self) -> None:
        self._known.clear()  # (its numbers may be given out again)

    async def _guess(self, probes: Sequence[Probe]) -> tuple[list[bytes], Batch]:
        """The batch read and guessed. Where a search needs owners the read did not give (the
        batch's own postings moved others into the newest read, as copies of one story do),
        those are read too and the guesses go on, up to OWNER_ROUNDS times."""
        reads, batch = await self._read(probes)
        guesses = self._guesser.guess(probes, batch)
        for _ in range(OWNER_ROUNDS):
            if not guesses.missing:
                break
            try:
                await reads.owners(batch, guesses.missing)
            except IndexStoreError:
                if reads is self._reads:
                    raise
                break  # (the replica failed since: the script searches the rest)
            guesses = self._guesser.guess(probes, batch, guesses)
        return guesses.of(probes), batch

    async def _read(self, probes: Sequence[Probe]) -> tuple[BandReads, Batch]:
        """What the batch's guesses need, read on the replica when there is one that works;
        and the reads that gave it."""
        if self._replica_reads is not None and time.monotonic() >= self._replica_back:
            try:
                return self._replica_reads, await self._replica_reads.read(probes)
            except IndexStoreError as exc:
                self._replica_back = time.monotonic() + REPLICA_PAUSE_S
                log.warning(
                    "reading on the replica failed (%s); reading on the primary for %.0f s",
                    exc,
                    REPLICA_PAUSE_S,
                )
        return self._reads, await self._reads.read(probes)
