import pytest

from worker.model import Accepted, Article, Forgotten, Kind, Reason, Rejection, Verdict
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
