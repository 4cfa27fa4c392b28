"""How the worker cuts a batch into check_and_insert.lua calls."""

from __future__ import annotations

import random

import pytest

from tests.support.factories import probe
from worker.index.base import Rule
from worker.index.redis import check_and_insert
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import BucketRead, Nearest
from worker.layout.planner import default_layout


def calls_of(max_bucket_read: int = 1000) -> check_and_insert.CheckAndInsertCalls:
    layout = default_layout()
    return check_and_insert.CheckAndInsertCalls(
        NamespaceKeys("calls"),
        layout,
        Rule.of(layout, layout.search_radius, 0.6),
        max_bucket_read=max_bucket_read,
        retention_s=0,
        renew_on_match=False,
        redelivery_window_s=0,
    )


def test_a_call_holds_at_most_one_article_whose_buckets_the_script_searches() -> None:
    # Articles the worker read nothing for (None: a bucket of theirs over the read limit) cost
    # the script a search of their buckets, which grows with a cluster of copies.
    rng = random.Random(2)
    probes = [probe(f"a{i}", rng.getrandbits(64)) for i in range(250)]
    hot = {3, 4, 90, 180}
    read = BucketRead(1, Nearest(b"", 0, 0), [])
    reads = [None if i in hot else read for i in range(len(probes))]
    calls = calls_of()
    assert calls._groups(probes, reads) == [(0, 4), (4, 90), (90, 180), (180, 250)]
    assert len(calls.calls(probes, reads, "epoch")) == 4


@pytest.mark.parametrize("max_bucket_read", [1000, 0])
def test_calls_of_articles_read_by_the_worker_hold_a_hundred(max_bucket_read: int) -> None:
    rng = random.Random(3)
    probes = [probe(f"a{i}", rng.getrandbits(64)) for i in range(250)]
    read = BucketRead(1, Nearest(b"", 0, 0), [])
    # (with no bucket read at all, the script reads nothing either: nothing to cut for)
    reads = [read if max_bucket_read else None] * len(probes)
    assert len(calls_of(max_bucket_read).calls(probes, reads, "epoch")) == 3
