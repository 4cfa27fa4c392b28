"""The composition root, and the one source of defaults: the library classes built without
arguments decide as the worker does with its default settings."""

from __future__ import annotations

import inspect
from dataclasses import replace

import pytest

from worker import defaults, wiring
from worker.errors import ConfigError
from worker.index import MemoryIndex
from worker.index.redis import RedisBandIndex, RedisIndex
from worker.index.redis.client import connect
from worker.layout.bands import Bands
from worker.layout.tables import Layout
from worker.settings import Settings
from worker.text.fingerprint import Fingerprinter


def test_the_layout_is_named_or_planned() -> None:
    assert wiring.layout(Settings(threshold=3, layout="multi-index:2")).spec() == ("63-32/1 31-0/1")
    planned = wiring.layout(Settings(threshold=7, expected_docs=1_000_000))
    assert isinstance(planned, Layout)
    assert planned.family == "multi-index"
    assert planned.search_radius == 7


def test_past_a_million_expected_articles_auto_takes_bands() -> None:
    large = Settings(expected_docs=1_000_001)
    assert large.layout_spec == "bands:16x4"
    assert wiring.layout(large) == Bands(16, 4)
    assert isinstance(wiring.redis_index(large), RedisBandIndex)  # (never connects)
    assert large.alert_threshold == 64
    related = Settings(expected_docs=5_000_000, threshold=7, related_threshold=9)
    assert related.layout_spec == "auto"  # related alerts need the tables
    assert isinstance(wiring.layout(related), Layout)
    named = Settings(expected_docs=5_000_000, layout="multi-index:4")
    assert named.layout_spec == "multi-index:4"


def test_a_band_layout_makes_band_indexes() -> None:
    settings = Settings(layout="bands:16x4")
    assert wiring.memory_index(settings).layout == Bands(16, 4)
    shared = wiring.redis_index(settings)  # (never connects)
    assert isinstance(shared, RedisBandIndex)
    assert shared.bands == Bands(16, 4)
    assert shared._replica_reads is None
    assert (
        shared._known.most
        == RedisBandIndex(connect("redis://127.0.0.1:1/0"), "n", Bands(16, 4))._known.most
    )
    small = wiring.redis_index(replace(settings, known_articles=1000))
    assert isinstance(small, RedisBandIndex)
    assert small._known.most == 1000
    on_replica = wiring.redis_index(replace(settings, redis_read_url="redis://replica:6379/0"))
    assert isinstance(on_replica, RedisBandIndex)
    assert on_replica._replica_reads is not None  # (its reads go to the replica)
    assert on_replica._replica_reads.client is not on_replica.client
    with pytest.raises(ConfigError, match="related_threshold needs SimHash tables"):
        Settings(layout="bands:16x4", related_threshold=14)
    with pytest.raises(ConfigError, match="rows must be >= 3"):
        Settings(layout="bands:32x2")


def test_a_related_threshold_lays_the_tables_out_for_it() -> None:
    s = Settings(threshold=3, related_threshold=10, layout="multi-index:4")
    index = wiring.memory_index(s)
    assert index.layout.search_radius == 10
    assert index.threshold == 3


def test_library_defaults_are_the_workers() -> None:
    settings = Settings()
    worker_index = wiring.memory_index(settings)
    library_index = MemoryIndex()
    redis_index = RedisIndex(connect("redis://127.0.0.1:1/0"))  # (never connects)
    for index in (library_index, redis_index):
        assert index.layout == worker_index.layout
        assert (
            index.threshold,
            index.rule,
            index.max_bucket_read,
            index.retention_s,
            index.renew_on_match,
            index.redelivery_window_s,
        ) == (
            worker_index.threshold,
            worker_index.rule,
            worker_index.max_bucket_read,
            worker_index.retention_s,
            worker_index.renew_on_match,
            worker_index.redelivery_window_s,
        )
    worker_fp, library_fp = wiring.fingerprinter(settings), Fingerprinter()
    assert (
        library_fp.shingle_size,
        library_fp.chinese,
        library_fp.min_words,
        library_fp.sketch_shape,
        library_fp.tf,
    ) == (
        worker_fp.shingle_size,
        worker_fp.chinese,
        worker_fp.min_words,
        worker_fp.sketch_shape,
        worker_fp.tf,
    )
    assert library_fp.idf == worker_fp.idf


def test_every_default_is_a_setting_default() -> None:
    """Settings spells no default of its own where worker.defaults has one."""
    names = {
        "threshold": "THRESHOLD",
        "related_threshold": "RELATED_THRESHOLD",
        "similarity": "SIMILARITY",
        "renew_on_match": "RENEW_ON_MATCH",
        "redelivery_window_s": "REDELIVERY_WINDOW_S",
        "shingle_size": "SHINGLE_SIZE",
        "chinese_units": "CHINESE_UNITS",
        "min_words": "MIN_WORDS",
        "layout": "LAYOUT",
        "expected_docs": "EXPECTED_DOCS",
        "recall": "RECALL",
        "max_bucket_read": "MAX_BUCKET_READ",
        "detect_format": "DETECT_FORMAT",
        "html_main_content": "MAIN_CONTENT",
    }
    settings = Settings()
    for field, constant in names.items():
        assert getattr(settings, field) == getattr(defaults, constant), field
    signature = inspect.signature(Fingerprinter)
    assert signature.parameters["min_words"].default == defaults.MIN_WORDS
