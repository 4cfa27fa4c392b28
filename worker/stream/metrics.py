"""The worker's Prometheus metrics, and an index whose round trips they time."""

from __future__ import annotations

import collections
import logging
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from worker.index.base import Index, Op
from worker.index.redis.band_known import KnownStats
from worker.model import Decision, Forgotten, Owner, Probe, Rejection, Verdict

log = logging.getLogger(__name__)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
COUNT_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
# At most one warning of hot buckets this often: on template text every article may have them.
HOT_WARNING_S = 60.0


class Metrics:
    """The worker's metrics, in a registry of their own (nothing global)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """`clock`: seconds, for how often hot buckets are warned of."""
        self._clock = clock
        self._hot_warned_at: float | None = None
        self._hot_unwarned = 0  # (articles with hot buckets since the last warning)
        self.registry = CollectorRegistry()
        r = self.registry
        ProcessCollector(registry=r)  # process_resident_memory_bytes, process_cpu_seconds_total
        PlatformCollector(registry=r)
        Info("dedup_build", "The worker's version and runtime", registry=r).info(
            {"version": _version(), "python": platform.python_version()}
        )
        self.lag = Gauge(
            "dedup_consumer_lag",
            "Input messages after the worker's last batch of the partition (its end offset then "
            "minus the batch's last offset, minus 1)",
            ["partition"],
            registry=r,
        )
        self.cached_entries = Gauge(
            "dedup_bucket_cache_entries",
            "Bucket entries in the worker's copy of the index's buckets (about 20 bytes each)",
            registry=r,
        )
        self.verdicts = Counter(
            "dedup_verdicts",
            "Verdicts sent, by kind; replayed: a message decided before (redelivery)",
            ["kind", "replayed"],
            registry=r,
        )
        self.dead_letters = Counter(
            "dedup_dead_letters",
            "Messages sent to the dead-letter topic, by reason",
            ["reason"],
            registry=r,
        )
        self.updates = Counter(
            "dedup_updates",
            "Index changes by message: replaced (an id sent "
            "again with new text), deleted (a tombstone for an indexed id), "
            "absent (a tombstone for an id not indexed)",
            ["change"],
            registry=r,
        )
        self.expired = Counter("dedup_expired", "Articles removed by the expiry sweep", registry=r)
        self.latency = Histogram(
            "dedup_latency_seconds",
            "From an input message's timestamp to its verdict acknowledged by Kafka",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.batch_seconds = Histogram(
            "dedup_batch_seconds", "Deciding one batch", buckets=LATENCY_BUCKETS, registry=r
        )
        self.index_seconds = Histogram(
            "dedup_index_seconds",
            "One batch's index work (bucket reads, comparison, Lua calls)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.candidates = Histogram(
            "dedup_candidates",
            "Bucket entries compared per article",
            buckets=COUNT_BUCKETS,
            registry=r,
        )
        self.hot_buckets = Counter(
            "dedup_hot_buckets",
            "Buckets read only in part (over DEDUP_MAX_BUCKET_READ entries)",
            registry=r,
        )
        self.index_resets = Counter(
            "dedup_index_resets",
            "Times the index was found emptied or rolled back under the worker (a flush, a "
            "restart without its data, a failover): articles indexed before may be unmatched",
            registry=r,
        )
        # When the index was last found emptied or rolled back, and why (readiness says so).
        self.last_index_reset: tuple[float, str] | None = None
        self.index_retries = Counter(
            "dedup_index_retries", "Batches retried because the index failed", registry=r
        )

    def watch_known(self, stats: Callable[[], KnownStats | None]) -> None:
        """Export the band worker's cache of the articles it read, as `stats` gives it."""
        self.registry.register(_KnownCollector(stats))

    def index_reset(self, why: str) -> None:
        """The index was found emptied or rolled back under the worker."""
        self.index_resets.inc()
        self.last_index_reset = (time.time(), why)

    def record(self, decisions: Sequence[Decision]) -> None:
        # Tallied per batch, then added: a labelled increment costs more than a tally.
        tally: collections.Counter[tuple[Counter, tuple[str, ...]]] = collections.Counter()
        hot: Verdict | None = None
        for decision in decisions:
            if isinstance(decision, Rejection):
                tally[self.dead_letters, (decision.reason.value,)] += 1
            elif isinstance(decision, Forgotten):
                tally[self.updates, ("deleted" if decision.was_indexed else "absent",)] += 1
            else:
                verdict = decision.verdict
                if verdict.replaced:
                    tally[self.updates, ("replaced",)] += 1
                replayed = "true" if verdict.replayed else "false"
                tally[self.verdicts, (verdict.kind.value, replayed)] += 1
                if not verdict.replayed and verdict.fingerprint is not None:
                    self.candidates.observe(verdict.candidates)
                if verdict.hot_buckets:
                    self.hot_buckets.inc(verdict.hot_buckets)
                    self._hot_unwarned += 1
                    hot = verdict
        for (counter, labels), count in tally.items():
            counter.labels(*labels).inc(count)
        if hot is not None:
            self._warn_hot(hot)

    def _warn_hot(self, example: Verdict) -> None:
        now = self._clock()
        if self._hot_warned_at is not None and now - self._hot_warned_at < HOT_WARNING_S:
            return
        log.warning(
            "%d article(s) read buckets only in part since the last warning (or the start), "
            "such as %r (%d hot bucket(s)): repeated boilerplate, or with SimHash tables raise "
            "DEDUP_MAX_BUCKET_READ (band layouts read each bucket's newest postings by design)",
            self._hot_unwarned,
            example.id,
            example.hot_buckets,
        )
        self._hot_warned_at, self._hot_unwarned = now, 0


class _KnownCollector(Collector):
    """The cache's figures, read when scraped (none without a cache)."""

    def __init__(self, stats: Callable[[], KnownStats | None]) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        stats = self.stats()
        if stats is None:
            return
        yield GaugeMetricFamily(
            "dedup_known_articles",
            "Articles in the worker's cache of those it read (DEDUP_KNOWN_ARTICLES at most)",
            value=stats.articles,
        )
        yield CounterMetricFamily(
            "dedup_known_candidates",
            "Candidates the worker's guesses looked up in that cache",
            value=stats.asked,
        )
        yield CounterMetricFamily(
            "dedup_known_candidates_held",
            "Of those, the ones the cache held (the others were read from Redis)",
            value=stats.held,
        )
        yield CounterMetricFamily(
            "dedup_known_dropped",
            "Articles the cache dropped to make room (it is full)",
            value=stats.dropped,
        )


def _version() -> str:
    try:
        return metadata.version("dedup-worker")
    except metadata.PackageNotFoundError:  # run from a source tree that was not installed
        return "unknown"


class TimedIndex:
    """An index whose round trips are timed into the metrics."""

    def __init__(self, index: Index, metrics: Metrics) -> None:
        self.index, self.metrics, self.threshold = index, metrics, index.threshold

    async def decide(self, ops: Sequence[Op], owner: Owner | None = None) -> list[Verdict | bool]:
        with self.metrics.index_seconds.time():
            return await self.index.decide(ops, owner)

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        with self.metrics.index_seconds.time():
            return await self.index.check_and_insert(probes)

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        with self.metrics.index_seconds.time():
            return await self.index.forget(ids)

    async def expire(self, limit: int = 1000) -> int:
        removed = await self.index.expire(limit)
        self.metrics.expired.inc(removed)
        return removed

    async def close(self) -> None:
        await self.index.close()
