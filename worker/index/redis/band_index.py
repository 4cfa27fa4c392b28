"""The shared index in Redis with band postings (worker/layout/bands.py): check_bands.lua
finds an article's candidates under its sketch's bands (a short line's under its line keys)
and decides it, in one call; the worker reads nothing first and keeps no copy of the index.
Deletions, expiry and the guarantees are RedisIndex's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from worker import defaults
from worker.index.base import IndexOptions, Rule
from worker.index.redis import guard
from worker.index.redis.band_calls import BandCalls
from worker.index.redis.client import Client
from worker.index.redis.format import BANDS_FORMAT
from worker.index.redis.namespace_index import NamespaceIndex
from worker.index.redis.nearest import BucketRead
from worker.index.redis.replies import verdicts_of
from worker.index.redis.scripts import Script
from worker.layout.bands import Bands
from worker.model import SIMHASH_BITS, Probe, Verdict


class RedisBandIndex(NamespaceIndex):
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
    ) -> None:
        """The index of one namespace on one Redis (or one Redis Cluster), with band postings
        in group strings sized for `expected_docs` articles (format.group_bits); the other
        arguments as RedisIndex's."""
        options = options or IndexOptions()
        super().__init__(
            client, namespace, options, fingerprint_spec, on_reset, expected_docs, replicas_acked
        )
        self.bands = bands
        self.threshold = SIMHASH_BITS
        self.rule = Rule.of_bands(bands, options.similarity)
        self._band_calls = BandCalls(
            self.keys,
            bands,
            self.rule,
            retention_s=self.retention_s,
            renew_on_match=self.renew_on_match,
            redelivery_window_s=self.redelivery_window_s,
        )

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

    async def run_checks(
        self,
        probes: Sequence[Probe],
        reads: Sequence[BucketRead | None],
        claims: Sequence[tuple[str, int]] = (),
    ) -> list[Verdict]:
        replies = await self._run(
            Script.CHECK_BANDS,
            lambda epoch: self._band_calls.calls(probes, epoch, lambda: guard.pack(None, claims)),
        )
        return verdicts_of(self.rule, probes, replies)
