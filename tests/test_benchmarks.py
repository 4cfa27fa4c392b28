"""Every benchmark runs and prints its figures (tiny sizes: what is checked is that it works,
not how fast; no figure is asserted)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import redis

from benchmarks import cpu_quota
from benchmarks.bench_end_to_end import Latency, context_switches, formed_rate
from benchmarks.redis_state import aof_rewrites, script_stats
from tests.support import ROOT
from tests.support.tenant import assignment_times, topics
from worker import defaults


def run(module: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def left_behind(kafka: str, before: set[str]) -> set[str]:
    """The topics made since `before` that are still there a few seconds on (a deletion
    reaches the broker's metadata a moment after it is made), but for Kafka's own (such as
    `__transaction_state`, made at the first transaction)."""
    deadline = time.monotonic() + 10
    while True:
        new = {name for name in topics(kafka) - before if not name.startswith("__")}
        if not new or time.monotonic() > deadline:
            return new
        time.sleep(0.5)


def test_bench_fingerprint() -> None:
    out = run("bench_fingerprint", "--rounds", "1", "--chinese-texts", "20", "--html-pages", "10")
    assert "us/text" in out
    assert "simhash library" in out
    assert "trafilatura" in out


def test_bench_reading() -> None:
    out = run("bench_reading", "--rounds", "1", "--html-pages", "10", "--no-attacks")
    assert "read apart and fingerprinted" in out
    assert "plain-text news" in out


def test_bench_index(redis_url: str) -> None:
    out = run(
        "bench_index",
        "--docs",
        "2000",
        "--measure",
        "200",
        "--layouts",
        "auto",
        "--redis-url",
        redis_url.rsplit("/", 1)[0] + "/14",
    )
    assert "pipelined" in out
    k = defaults.THRESHOLD
    assert f"recall on planted pairs at distance 0..{k}: " + " ".join(["1.00"] * (k + 1)) in out


def test_bench_growth(redis_url: str) -> None:
    out = run(
        "bench_growth",
        "--sizes",
        "1000,2000",
        "--measure",
        "200",
        "--redis-url",
        redis_url.rsplit("/", 1)[0] + "/10",
    )
    for kind in ("template", "news", "random"):
        assert f"{kind}: layout " in out
    assert "planted copies found, by exact Jaccard" in out
    rows = re.findall(r"^ +2,000 \| +[\d,]+ \| +[\d,]+ \|", out, re.MULTILINE)
    assert len(rows) == 3  # each kind reached its second checkpoint


def test_bench_growth_goes_on_from_a_kept_fill(redis_url: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + "/10"
    args = ("--kinds", "template", "--layout", "bands:16x4", "--measure", "100")
    run("bench_growth", *args, "--sizes", "500", "--redis-url", url)
    out = run("bench_growth", *args, "--sizes", "500,1000", "--redis-url", url, "--keep")
    assert "template: layout bands, 16 of 4 bins, 700 kept" in out  # (500 and 2 x 100)
    rows = re.findall(r"^ +([\d,]+) \| +[\d,]+ \|", out, re.MULTILINE)
    assert rows == ["1,000"]  # (the kept checkpoint not measured again)
    assert "planted copies found, by exact Jaccard" in out


def test_bench_expiry(redis_url: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + "/9"
    args = ("--fill", "2000", "--measure", "300", "--redis-url", url)
    out = run("bench_expiry", *args)
    assert "2,000 template pages, the oldest 400 expired" in out
    assert "us per removal" in out
    rows = re.findall(r"^ +[12] \| +[\d,]+ \| +[\d,]+ \| +[\d,]+ \| \d+ of \d+$", out, re.M)
    assert len(rows) == 2
    assert re.search(r"left for the walk: [\d,]+ of [\d,]+ \(\d+% of the live ones\)", out)


def test_redis_bytes_tells_where_a_band_index_s_bytes_go(redis_url: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + "/10"
    args = ("--layout", "bands:16x4", "--kinds", "news", "--sizes", "500", "--measure", "100")
    run("bench_growth", *args, "--redis-url", url)
    out = run("redis_bytes", "--redis-url", url, "--namespace", "growth-news")
    parts = dict(re.findall(r"^  (.+?) +([\d.]+)$", out, re.MULTILINE))
    assert {"band groups", "records", "exact texts", "ids by number", "all"} <= parts.keys()
    shown = [float(v) for k, v in parts.items() if k != "all"]
    assert abs(float(parts["all"]) - sum(shown)) <= 0.05 * len(shown)  # (each rounded)


def test_bench_newest_sets_two_readings_side_by_side(redis_url: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + "/10"
    args = ("--size", "2000", "--newest", "1", "--rounds", "2", "--batch", "100")
    out = run("bench_newest", *args, "--redis-url", url)
    assert "2,000 template pages indexed" in out
    rows = dict(re.findall(r"^ +(\d+) \| .* \| +([\d.]+)$", out, re.MULTILINE))
    assert rows.keys() == {"32", "1"}
    assert float(rows["1"]) < float(rows["32"])  # (a template's buckets hold more than one)


def test_bench_bands() -> None:
    out = run("bench_bands", "--sizes", "500,1000", "--measure", "200")
    for kind in ("template", "news"):
        assert f"{kind}: 16 bands of 4 bins" in out
    assert out.count("planted copies found, by exact Jaccard") == 2
    rows = re.findall(r"^ +1,000 \| +([\d.,]+) \|", out, re.MULTILINE)
    reads = [float(r.replace(",", "")) for r in rows]
    assert len(reads) == 2
    assert all(r <= 16 * 32 for r in reads)  # the design's bound: 16 buckets, newest 32 each


def test_bench_scan(tmp_path: Path) -> None:
    out = run(
        "bench_scan",
        "--kinds",
        "news",
        "--sizes",
        "300",
        "--layouts",
        "bands:16x4,auto",
        "--folder",
        str(tmp_path),
    )
    rows = re.findall(r"^\| news \| 300 \| (.+?) \| [\d.]+ \|.* \| (\d+)/(\d+) \|", out, re.M)
    assert [name for name, _, _ in rows] == [
        "datasketch MinHashLSH 0.8",
        "scan, layout bands:16x4",
        "scan, layout auto",
    ]
    assert all(int(planted) > 0 for _, _, planted in rows)  # (copies were planted)


def test_bench_cache() -> None:
    out = run("bench_cache", "--sizes", "500,2000", "--searches", "200", "--rounds", "1")
    assert re.search(r"2,000 entries:  native +[0-9.]+  numpy +[0-9.]+", out), out


def test_bench_stages(redis_url: str) -> None:
    out = run(
        "bench_stages",
        "--docs",
        "300",
        "--measure",
        "200",
        "--trials",
        "2",
        "--redis-url",
        redis_url.rsplit("/", 1)[0] + "/12",
    )
    assert "Redis CPU per article" in out
    assert re.search(r"append-only file (grew \d+ bytes per article|\(none kept\))", out)
    assert re.search(r"read and its calls: 0 [0-9.]+ us, 50 [0-9.]+ us, .* 400 [0-9.]+ us", out)


@pytest.mark.parametrize("layout", ["auto", "bands:16x4"])
def test_bench_cluster(redis_url: str, layout: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + "/11"
    args = ("--copies", "300", "--every", "1", "--layout", layout)
    out = run("bench_cluster", *args, "--redis-url", url)
    assert re.search(r"300 copies: batch +\d+ ms, script calls +\d+, longest +[0-9.]+ ms", out)
    assert re.search(r"300 fresh: batch .*, Redis CPU +\d+ us per article", out)
    assert re.search(r"a copy \d+ us, a fresh article \d+ us \([0-9.]+x\)", out)


def test_bench_send(kafka_bootstrap: str) -> None:
    before = topics(kafka_bootstrap)
    out = run(
        "bench_send",
        "--kafka",
        kafka_bootstrap,
        "--messages",
        "20",
        "--batches",
        "3",
        "--rounds",
        "1",
    )
    assert re.search(r"round 1 send_all's CPU \d+\.\d\dx send's", out)
    assert left_behind(kafka_bootstrap, before) == set()


def test_bench_end_to_end(kafka_bootstrap: str, redis_url: str) -> None:
    before = topics(kafka_bootstrap)
    out = run(
        "bench_end_to_end",
        "--articles",
        "2000",
        "--latency-seconds",
        "2",
        "--pairs",
        "1",
        "--scale-rounds",
        "1",
        "--kafka",
        kafka_bootstrap,
        "--redis-url",
        redis_url.rsplit("/", 1)[0] + "/13",
    )
    assert "worker / passthrough" in out
    assert re.search(r"redis +appendonly \w+, appendfsync \w+, .*rdbcompression \w+", out)
    assert "exactly-once / worker" in out
    latencies = re.findall(
        r"p99 +[\d.]+ ms; p99 of each second: median \d+ ms, worst \d+ ms; Redis rewrote its "
        r"append-only file \d+ times",
        out,
    )
    assert len(latencies) == 3  # the passthrough, the worker, exactly-once
    assert "2 workers" in out
    assert "x one worker once formed" in out
    assert "/s once every process had its partitions" in out
    assert re.search(r"2 workers apart(, each .* one worker once formed|: they were not)", out)
    assert re.search(r"context switches per 100 articles [\d.]+ waiting, [\d.]+ preempted", out)
    scripts = re.findall(r"(\w+) +[\d,]+ articles/s .*Redis scripts ([\d.]+) per 100 articles", out)
    held = {"each"} if cpu_quota.available() else set()  # "2 workers, 0.35 core each  ..."
    assert {kind for kind, calls in scripts if float(calls) > 0} == {
        "worker",
        "once",
        "workers",
        *held,
    }
    assert ("0.35 core each" in out) == bool(held)
    # the machine before and after: its speed at a Python loop and at fingerprinting
    assert out.count("additions in a Python loop took") == 2
    assert len(re.findall(r"fingerprinting [\d,]+ articles took [\d.]+ us each", out)) == 2
    assert left_behind(kafka_bootstrap, before) == set()  # each run's topics deleted


def test_latency_is_told_overall_and_by_second_of_arrival() -> None:
    quiet = list(range(1, 101))  # p99 99
    slow = [d * 3 for d in quiet]  # p99 297
    told = Latency([quiet, quiet, slow], rewrites=1).describe()
    assert "p50   65.0 ms   p99  291.0 ms" in told  # (300 delays: the 296th, 0-based)
    assert "p99 of each second: median 99 ms, worst 297 ms" in told
    assert "rewrote its append-only file 1 times" in told


def test_context_switches_count_a_process_s_waits() -> None:
    waited, _ = context_switches([os.getpid()])
    time.sleep(0.01)  # gives the core up: a voluntary switch
    assert context_switches([os.getpid()])[0] > waited
    assert context_switches([2**22 + 1]) == (0, 0)  # (no such process: above pid_max)


def test_script_stats_count_the_server_s_script_calls(redis_url: str) -> None:
    calls, _ = asyncio.run(script_stats(redis_url))
    client = redis.Redis.from_url(redis_url)
    try:
        sha = client.script_load("return 1")
        client.evalsha(sha, 0)
        client.eval("return 2", 0)
    finally:
        client.close()
    after, spent = asyncio.run(script_stats(redis_url))
    assert after == calls + 2
    assert spent > 0


def test_aof_rewrites_count_the_server_s_rewrites(redis_url: str) -> None:
    rewrites = asyncio.run(aof_rewrites(redis_url))
    client = redis.Redis.from_url(redis_url)
    try:
        client.bgrewriteaof()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = client.info("persistence")
            if not (state["aof_rewrite_in_progress"] or state["aof_rewrite_scheduled"]):
                break
            time.sleep(0.1)
    finally:
        client.close()
    assert asyncio.run(aof_rewrites(redis_url)) == rewrites + 1


class _Assigned:
    def __init__(self, times: list[float]) -> None:
        self.times = times

    def assigned_times(self) -> list[float]:
        return self.times


def test_formed_rate_counts_from_the_last_assignment_before_the_last_output() -> None:
    stamps = [10_500, 11_000, 11_500, 12_000, 13_000]  # the outputs' append times, ms
    # The group is formed at 11.0 s; 30.0 s is after the last output (a process stopping).
    run = SimpleNamespace(started=[_Assigned([10.0, 11.0, 30.0]), _Assigned([11.0])])
    assert formed_rate(cast(Any, run), stamps) == 4 / 2.0
    assert formed_rate(cast(Any, SimpleNamespace(started=[_Assigned([])])), stamps) is None


def test_assignment_times_are_read_from_the_log() -> None:
    log = (
        "[2026-12-03 17:16:38,314] [10048] [INFO] [^Worker]: Ready\n"
        "[2026-12-03 17:16:38,571] [10048] [INFO] Setting newly assigned partitions {} for g\n"
        "[2026-12-03 17:16:39,605] [10048] [INFO] Setting newly assigned partitions {} for g\n"
    )
    first, second = assignment_times(log)
    assert round(second - first, 3) == 1.034
