import pytest

from worker.index.redis.band_known import KnownStats
from worker.model import (
    Accepted,
    Article,
    Decision,
    Forgotten,
    Kind,
    Reason,
    Rejection,
    Verdict,
)
from worker.stream.metrics import Metrics
from worker.text.fingerprint import Fingerprinter


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_metrics_count_verdicts_dead_letters_candidates_and_hot_buckets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = Metrics()
    fp = Fingerprinter()("a text")
    article = Article("a", "a text", b"{}")
    metrics.record(
        [
            Accepted(article, fp, Verdict("a", Kind.UNIQUE, 5, candidates=7)),
            Accepted(
                article, fp, Verdict("b", Kind.NEAR, 5, "a", 2, 7, candidates=9, hot_buckets=1)
            ),
            Accepted(article, fp, Verdict("a", Kind.UNIQUE, 5, replayed=True)),
            Rejection(Reason.INVALID_JSON, "bad"),
            Accepted(article, fp, Verdict("c", Kind.UNIQUE, 6, replaced=True)),
            Forgotten("c", True),
            Forgotten("z", False),
        ]
    )
    for change in ("replaced", "deleted", "absent"):
        assert _sample(metrics, "dedup_updates_total", change=change) == 1
    assert _sample(metrics, "dedup_verdicts_total", kind="unique", replayed="false") == 2
    assert _sample(metrics, "dedup_verdicts_total", kind="near", replayed="false") == 1
    assert _sample(metrics, "dedup_verdicts_total", kind="unique", replayed="true") == 1
    assert _sample(metrics, "dedup_dead_letters_total", reason="invalid_json") == 1
    assert _sample(metrics, "dedup_candidates_count") == 3  # replays are not counted
    assert _sample(metrics, "dedup_candidates_sum") == 16
    assert _sample(metrics, "dedup_hot_buckets_total") == 1
    assert "hot bucket" in caplog.text


def test_hot_buckets_are_warned_of_at_most_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    metrics = Metrics(clock=lambda: now[0])
    fp = Fingerprinter()("a text")
    article = Article("a", "a text", b"{}")

    def hot(article_id: str) -> list[Decision]:
        return [Accepted(article, fp, Verdict(article_id, Kind.UNIQUE, 5, hot_buckets=2))]

    for second, article_id in ((0.0, "a"), (10.0, "b"), (59.9, "c"), (60.0, "d"), (61.0, "e")):
        now[0] = second
        metrics.record(hot(article_id))
    warnings = [r.getMessage() for r in caplog.records if "hot bucket" in r.getMessage()]
    assert len(warnings) == 2  # (at 0 s and at 60 s)
    assert warnings[0].startswith("1 article(s)")
    assert "'a' (2 hot bucket(s))" in warnings[0]
    assert warnings[1].startswith("3 article(s)")  # (b, c and d)
    assert "'d'" in warnings[1]
    assert _sample(metrics, "dedup_hot_buckets_total") == 10  # (every one counted)


def test_the_known_cache_metrics_read_its_stats_when_scraped() -> None:
    stats: list[KnownStats | None] = [None]
    metrics = Metrics()
    metrics.watch_known(lambda: stats[0])
    assert metrics.registry.get_sample_value("dedup_known_articles") is None  # (no cache)
    stats[0] = KnownStats(articles=5, asked=40, held=30, dropped=4)
    assert _sample(metrics, "dedup_known_articles") == 5
    assert _sample(metrics, "dedup_known_candidates_total") == 40
    assert _sample(metrics, "dedup_known_candidates_held_total") == 30
    assert _sample(metrics, "dedup_known_dropped_total") == 4


def test_process_build_and_lag_metrics() -> None:
    from types import SimpleNamespace
    from typing import Any, cast

    from worker.stream.deliver import observe

    metrics = Metrics()
    assert _sample(metrics, "process_resident_memory_bytes") > 0
    assert _sample(metrics, "process_cpu_seconds_total") > 0
    build = [s for s in metrics.registry.collect() if s.name == "dedup_build"]
    assert build[0].samples[0].labels["python"].count(".") == 2

    ends = {0: 120, 1: 50}
    source = cast(Any, SimpleNamespace(end_offset=lambda tp: ends[tp.partition]))

    def record(partition: int, offset: int) -> Any:
        return SimpleNamespace(topic="articles", partition=partition, offset=offset, timestamp=0)

    observe(metrics, source, [record(0, 99), record(1, 49), record(0, 100)], [])
    assert _sample(metrics, "dedup_consumer_lag", partition="0") == 19
    assert _sample(metrics, "dedup_consumer_lag", partition="1") == 0
