"""The worker end to end on real Kafka and Redis, beside Kafka's own rates, a bare aiokafka
passthrough and a faust passthrough through the same broker, in one run.

0. Kafka's own rates for the same records on this machine: an aiokafka producer, then a
   consumer reading them back.
1. Throughput: N articles are loaded into the input topic first; then one process drains it:
   a bare aiokafka passthrough (the client's ceiling), a faust passthrough (faust's stream),
   the worker, and the worker with exactly-once output, in turn, three rounds; the ratios
   are taken within each round; with the CPU per article of the process, Redis and Kafka.
   Articles/s are taken from the output records' own timestamps, first to last, so start-up
   time is left out; the records are read after the drain, so that reading them does not
   take CPU from the drain.
2. Latency: at a steady publish rate of half the measured maximum (the median of the drains),
   the time from the broker's appending an article to the input topic to its appending the
   article's first output (the topics stamp records with their append time), p50 and p99,
   after 3 s of warm-up, and the p99 of each second of arrival (its median and its worst: a
   slow stretch, as a rewrite of Redis's append-only file, shows as a second or two); the
   topics are read after the run, so that reading them takes no CPU from it.
3. Scale-out: one, two and four worker processes on the input topic's four partitions, in
   turn, two rounds (`--scale-rounds`), the ratios to one worker taken within each round:
   of the rates from the first output, and of the rates once every process had its
   partitions (from its log's last assignment before the last output to the last output),
   as the first process to join the group drains every partition alone until the others
   have joined. Then two workers apart, each with its own topics and index and half of the
   articles, while both were at work: what the machine gives two workers that share nothing.
   Then one, two and four workers again, each held to a share of a core (`--worker-cpu`, a
   CPU quota per process, as a container's CPU limit): workers with CPU of their own, the
   cores left to Redis and Kafka. Needs root and writable CPU control groups; else skipped.

Needs Kafka and Redis (`bash stack/local-stack.sh up`). Each run starts on an emptied Redis
database (`--redis-url`, db 13 by default) with no AOF rewrite pending.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from benchmarks.cpu_quota import CpuQuota, available
from benchmarks.redis_state import aof_rewrites, fresh, persistence, script_stats
from tests.support.corpus import make_articles
from tests.support.tenant import Tenant, WorkerProcess
from worker.settings import Settings
from worker.wiring import fingerprinter

WORKER = ("-m", "worker", "worker")
WARM_UP_S = 3.0
SPEED_LOOP = 20_000_000
SPEED_ARTICLES = 5_000  # fingerprinted in the worker's batches, for the machine's speed
SEND_INTERVAL_S = 0.005  # the load generator sends what is due this often
READ_WAIT_MS = 5  # the longest a fetch of the outputs waits for more
PASSTHROUGH = ("-m", "benchmarks.passthrough")
BARE = ("-m", "benchmarks.bare_passthrough")
EXACTLY_ONCE = {"DEDUP_PROCESSING_GUARANTEE": "exactly_once"}
SERVICES = {"Redis": "redis-server", "Kafka": "kafka.Kafka"}  # command lines, for their CPU


async def produce(
    kafka: str, topic: str, articles: list[dict[str, Any]], rate: float | None = None
) -> None:
    """Publish the articles (encoded beforehand, keyed by their ids), at `rate` per second if
    given. At a rate, the articles due are sent together each time this process wakes (every
    SEND_INTERVAL_S, the producer's linger: the broker takes them in such batches anyway),
    not one sleep per article: the load generator shares the machine's cores with the
    worker, and takes as little of them as it can."""
    records = [(a["id"].encode(), json.dumps(a).encode()) for a in articles]
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka, acks="all", linger_ms=round(SEND_INTERVAL_S * 1000)
    )
    await producer.start()
    try:
        start = time.monotonic()
        pending = []
        done = 0
        while done < len(records):
            due = len(records)
            if rate is not None:
                due = min(due, int((time.monotonic() - start) * rate) + 1)
            for key, value in records[done:due]:
                pending.append(await producer.send(topic, value, key=key))
            done = due
            if rate is not None and done < len(records):
                await asyncio.sleep(max(SEND_INTERVAL_S, start + done / rate - time.monotonic()))
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


@asynccontextmanager
async def reader(
    kafka: str, topics: list[str]
) -> AsyncIterator[tuple[AIOKafkaConsumer, list[TopicPartition]]]:
    """A started consumer (no group) and every partition of the topics."""
    # read_committed: a verdict counts once its transaction commits (exactly-once runs); the
    # same as read_uncommitted for output written without transactions. Its fetches wait up
    # to READ_WAIT_MS for more: fewer, larger fetches.
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka,
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        fetch_max_wait_ms=READ_WAIT_MS,
        fetch_min_bytes=1 << 20,
    )
    await consumer.start()
    try:
        await consumer._client.force_metadata_update()
        yield (
            consumer,
            [TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t) or ()],
        )
    finally:
        await consumer.stop()


async def consume(
    kafka: str, topics: list[str], expected: int, give_up_after: float
) -> list[tuple[int, bytes | None]]:
    """(record timestamp ms, key) of the first `expected` records of the topics, not
    parsed."""
    async with reader(kafka, topics) as (consumer, parts):
        consumer.assign(parts)
        await consumer.seek_to_beginning(*parts)
        out: list[tuple[int, bytes | None]] = []
        deadline = time.monotonic() + give_up_after
        while len(out) < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(out)} of {expected} outputs in {give_up_after:.0f} s")
            batch = await consumer.getmany(timeout_ms=200)
            for records in batch.values():
                out += [(r.timestamp, r.key) for r in records]
        return out


class Run:
    """Fresh topics, namespace and group for one measurement, an emptied Redis database, and
    the processes under test; as a context manager, the processes are stopped and the topics
    deleted on leaving it."""

    def __init__(
        self,
        kafka: str,
        redis_url: str,
        logs: Path,
        command: tuple[str, ...],
        processes: int = 1,
        env: dict[str, str] | None = None,
        cores_each: float | None = None,
    ) -> None:
        """`cores_each`: each process held to that share of a core (CpuQuota)."""
        asyncio.run(fresh(redis_url))
        self.tenant = Tenant(kafka, redis_url, f"bench{uuid.uuid4().hex[:6]}", dict(env or {}))
        self.tenant.create_topics()
        asyncio.run(stamp_on_append(kafka, self.tenant.settings))
        self.logs, self.command, self.processes = logs, command, processes
        self.started: list[WorkerProcess] = []
        self.quota = CpuQuota(cores_each) if cores_each is not None else None

    @property
    def outputs(self) -> list[str]:
        return list(self.tenant.outputs.values())

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        for i in range(self.processes):
            log = self.logs / f"{self.tenant.name}-{i}.log"
            self.started.append(WorkerProcess(self.tenant, log, self.command))
            if self.quota is not None:
                self.quota.hold(self.started[-1].proc.pid, i)

    def wait_ready(self) -> None:
        for process in self.started:
            process.wait_ready(timeout=120)

    def stop(self) -> None:
        for process in self.started:
            process.stop()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        """The processes stopped and the topics deleted: each run meets a broker in the same
        state, and a machine's disk does not fill with runs' records."""
        self.stop()
        self.tenant.delete_topics()
        if self.quota is not None:
            self.quota.remove()


async def stamp_on_append(kafka: str, settings: Settings) -> None:
    """The topics stamp their records with the broker's time of appending them
    (LogAppendTime), so that a record's timestamp says when its article was in or its verdict
    out, whenever the benchmark reads it: a latency is one stamp of the broker's clock less
    another, and leaves out the load generator's own delays (its producer's batching; the
    cores it shares)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
    await admin.start()
    try:
        stamped = {"message.timestamp.type": "LogAppendTime"}
        # (alter_configs sets a topic's whole config: ensure_topics' setting too)
        output = {**stamped, "max.message.bytes": str(settings.output_max_bytes)}
        configs = {settings.input_topic: stamped}
        for topic in (settings.unique_topic, settings.duplicates_topic, settings.rejected_topic):
            configs[topic] = output
        await admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t, c) for t, c in configs.items()]
        )
    finally:
        await admin.close()


async def wait_for_drain(tenant: Tenant, give_up_after: float) -> None:
    """Until the processes' consumer group has committed the input topic's end offsets: every
    output is out by then (with transactions, too; the output topics' end offsets would not
    say so, as commit markers take offsets). Watching offsets, not reading the records, takes
    no CPU from the processes under test, on the same two cores."""
    settings = tenant.settings
    admin = AIOKafkaAdminClient(bootstrap_servers=tenant.kafka)
    await admin.start()
    try:
        async with reader(tenant.kafka, [settings.input_topic]) as (consumer, parts):
            ends = await consumer.end_offsets(parts)
            deadline = time.monotonic() + give_up_after
            while True:
                done = await admin.list_consumer_group_offsets(settings.app_id, partitions=parts)
                behind = sum(ends[tp] - (done[tp].offset if tp in done else 0) for tp in parts)
                if behind <= 0:
                    return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{behind} inputs not done in {give_up_after:.0f} s")
                await asyncio.sleep(0.2)
    finally:
        await admin.close()


@dataclass
class Drain:
    rate: float  # articles/s, first output to last
    cpu_us: dict[str, float]  # CPU per article of the processes under test, Redis, Kafka
    busy: float  # the share of the machine's cores those used during the drain
    # The processes' context switches per 100 articles, (voluntary: waits; involuntary:
    # preempted): each puts the cores' caches to other work, so every step costs more after.
    switches: tuple[float, float]
    # Redis's script calls per 100 articles and the time it spent in them per article (us).
    scripts: tuple[float, float]
    # Articles/s from the moment the last process got its partitions to the last output (None:
    # the processes log no assignment): with several processes, the first to join the group
    # drains every partition alone until the others have joined and the group is rebalanced.
    formed_rate: float | None = None

    def describe(self) -> str:
        cpu = ", ".join(f"{name} {us:,.0f}" for name, us in self.cpu_us.items())
        out = f"{self.rate:9,.0f} articles/s   CPU us/article: {cpu}; cores {self.busy:.0%} busy"
        out += (
            f"; context switches per 100 articles {self.switches[0]:.1f} waiting, "
            f"{self.switches[1]:.1f} preempted"
            f"; Redis scripts {self.scripts[0]:.1f} per 100 articles, {self.scripts[1]:.0f} us"
            " per article"
        )
        if self.formed_rate is not None:
            out += f"; {self.formed_rate:,.0f}/s once every process had its partitions"
        return out


def throughput(run: Run, articles: list[dict[str, Any]], timeout: float) -> Drain:
    """Articles/s of the processes draining a topic that already holds all the articles, and
    the CPU that the processes, Redis and Kafka spent on it. The outputs are read once they
    are all out."""
    asyncio.run(produce(run.tenant.kafka, run.tenant.settings.input_topic, articles))
    try:
        run.start()
        services = {name: _pids(pattern) for name, pattern in SERVICES.items()}
        meters = {"process": [p.proc.pid for p in run.started], **services}
        before = {name: cpu_seconds(pids) for name, pids in meters.items()}
        switches_before = context_switches(meters["process"])
        scripts_before = asyncio.run(script_stats(run.tenant.redis_url))
        start = time.monotonic()
        asyncio.run(wait_for_drain(run.tenant, timeout))
        elapsed = time.monotonic() - start
        spent = {name: cpu_seconds(pids) - before[name] for name, pids in meters.items()}
        scripts_after = asyncio.run(script_stats(run.tenant.redis_url))
        waited, preempted = (
            (after - first) / len(articles) * 100
            for after, first in zip(
                context_switches(meters["process"]), switches_before, strict=True
            )
        )
    finally:
        run.stop()
    records = asyncio.run(consume(run.tenant.kafka, run.outputs, len(articles), timeout))
    stamps = sorted(r[0] for r in records)
    cpu_us = {name: seconds / len(articles) * 1e6 for name, seconds in spent.items()}
    busy = sum(spent.values()) / (elapsed * (os.cpu_count() or 1))
    rate = (len(stamps) - 1) / ((stamps[-1] - stamps[0]) / 1000)
    calls = scripts_after[0] - scripts_before[0]
    scripts = (calls / len(articles) * 100, (scripts_after[1] - scripts_before[1]) / len(articles))
    return Drain(rate, cpu_us, busy, (waited, preempted), scripts, formed_rate(run, stamps))


def apart(runs: list[Run], parts: list[list[dict[str, Any]]], timeout: float) -> float | None:
    """Articles/s of runs that share nothing but the machine (each its own topics and index,
    and its part of the articles), while all of them were at work: from the last of their
    first outputs to the first of their last outputs (None: they were not at work together)."""
    for run, part in zip(runs, parts, strict=True):
        asyncio.run(produce(run.tenant.kafka, run.tenant.settings.input_topic, part))
    try:
        for run in runs:
            run.launch()
        for run in runs:
            run.wait_ready()
        for run in runs:
            asyncio.run(wait_for_drain(run.tenant, timeout))
    finally:
        for run in runs:
            run.stop()
    stamps = [
        sorted(
            stamp for stamp, _ in asyncio.run(consume(r.tenant.kafka, r.outputs, len(p), timeout))
        )
        for r, p in zip(runs, parts, strict=True)
    ]
    start, end = max(s[0] for s in stamps), min(s[-1] for s in stamps)
    if end <= start:
        return None
    together = sum(bisect.bisect_right(s, end) - bisect.bisect_left(s, start) for s in stamps)
    return together / ((end - start) / 1000)


def formed_rate(run: Run, stamps: list[int]) -> float | None:
    """Outputs per second from when the last of the processes got its partitions to the last
    output (`stamps`: the outputs' append times, ms, sorted). Assignments after the last output
    (as the processes stop, one after another) are left out."""
    formed_ms = 0.0
    for process in run.started:
        times = [t * 1000 for t in process.assigned_times() if t * 1000 < stamps[-1]]
        if not times:
            return None
        formed_ms = max(formed_ms, times[-1])
    after = len(stamps) - bisect.bisect_left(stamps, formed_ms)
    return after / ((stamps[-1] - formed_ms) / 1000) if after > 1 else None


def _pids(pattern: str) -> list[int]:
    """The processes whose command line holds `pattern` (Linux's /proc)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if pattern in cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def context_switches(pids: list[int]) -> tuple[int, int]:
    """The processes' context switches so far, voluntary and involuntary (0 for any that is
    gone)."""
    counts = {"voluntary_ctxt_switches": 0, "nonvoluntary_ctxt_switches": 0}
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            name, _, value = line.partition(":")
            if name in counts:
                counts[name] += int(value)
    return counts["voluntary_ctxt_switches"], counts["nonvoluntary_ctxt_switches"]


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds the processes have used (0 for any that is gone)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


async def broker_ceiling(kafka: str, topic: str, articles: list[dict[str, Any]]) -> str:
    """Kafka's own rates on this machine for the same records: an aiokafka producer sending
    them (encoded beforehand, acks=all), then a consumer reading them back."""
    bodies = [(json.dumps(a).encode(), a["id"].encode()) for a in articles]
    producer = AIOKafkaProducer(bootstrap_servers=kafka, acks="all", linger_ms=5)
    await producer.start()
    try:
        start = time.monotonic()
        pending = [await producer.send(topic, body, key=key) for body, key in bodies]
        await asyncio.gather(*pending)
        produced = len(bodies) / (time.monotonic() - start)
    finally:
        await producer.stop()
    async with reader(kafka, [topic]) as (consumer, parts):
        consumer.assign(parts)
        await consumer.seek_to_beginning(*parts)
        start, count = time.monotonic(), 0
        while count < len(bodies):
            batch = await consumer.getmany(timeout_ms=200, max_records=10_000)
            count += sum(len(records) for records in batch.values())
        consumed = count / (time.monotonic() - start)
    return f"produce {produced:,.0f} records/s, consume {consumed:,.0f} records/s"


def latency(
    run: Run,
    articles: list[dict[str, Any]],
    rate: float,
    timeout: float,
    warm_up: float = WARM_UP_S,
) -> Latency:
    """The delays from the broker's appending an article to the input topic to its appending
    the article's first output (their timestamps: stamp_on_append), at a steady `rate`, for
    the articles in after the first `warm_up` seconds (connections, first batches), and how
    many times Redis rewrote its append-only file meanwhile (a forked process writing the
    whole index, on the same machine: a slow stretch). The topics are read once the processes
    are done with every article."""
    topic = run.tenant.settings.input_topic
    rewrites = asyncio.run(aof_rewrites(run.tenant.redis_url))
    try:
        run.start()
        asyncio.run(produce(run.tenant.kafka, topic, articles, rate))
        asyncio.run(wait_for_drain(run.tenant, timeout))
    finally:
        run.stop()
    rewrites = asyncio.run(aof_rewrites(run.tenant.redis_url)) - rewrites
    records = asyncio.run(consume(run.tenant.kafka, run.outputs, len(articles), timeout))
    inputs = asyncio.run(consume(run.tenant.kafka, [topic], len(articles), timeout))
    arrived = {key: stamp for stamp, key in inputs}
    since = min(arrived.values()) + warm_up * 1000
    out: dict[bytes, int] = {}
    for stamp, key in sorted(records, key=lambda r: r[0]):  # an article's first output
        if key is not None:
            out.setdefault(key, stamp)
    by_second: dict[int, list[int]] = {}
    for key, stamp in out.items():
        if arrived[key] >= since:
            by_second.setdefault((arrived[key] - since) // 1000, []).append(stamp - arrived[key])
    return Latency([sorted(delays) for _, delays in sorted(by_second.items())], rewrites)


def p99(delays: list[int]) -> int:
    return delays[int(0.99 * (len(delays) - 1))]


@dataclass(frozen=True)
class Latency:
    seconds: list[list[int]]  # the delays (ms) of the articles in each second of arrival, sorted
    rewrites: int  # of Redis's append-only file during the run

    def describe(self) -> str:
        """p50 and p99, and the p99 of each second of arrival, apart: a slow stretch (a
        rewrite) shows as one or two seconds."""
        delays = sorted(d for second in self.seconds for d in second)
        seconds = sorted(p99(second) for second in self.seconds if second)
        return (
            f"p50 {statistics.median(delays):6.1f} ms   p99 {p99(delays):6.1f} ms; p99 of each "
            f"second: median {statistics.median(seconds):.0f} ms, worst {seconds[-1]:.0f} ms; "
            f"Redis rewrote its append-only file {self.rewrites} times meanwhile"
        )


def machine_state(articles: list[dict[str, Any]]) -> str:
    """The load average, and two speeds of the machine: the seconds one core takes for a
    CPU-bound Python loop, and the CPU the worker's fingerprinter takes per article (native
    code, memory). Machines of one kind differ, and one machine from hour to hour, by up to
    ~2x in each, and not always in both alike: every figure moves with them."""
    start = time.process_time()
    total = 0
    for i in range(SPEED_LOOP):
        total += i
    seconds = time.process_time() - start
    sample = [a["text"] for a in articles[:SPEED_ARTICLES]]
    settings = Settings()
    batch = settings.batch_size
    printer = fingerprinter(settings)
    printer.many(sample[:batch])  # (first use: tables, the native extension)
    start = time.process_time()
    for at in range(0, len(sample), batch):
        printer.many(sample[at : at + batch])
    per_article = (time.process_time() - start) / len(sample) * 1e6
    one, five, fifteen = os.getloadavg()
    return (
        f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min); "
        f"{SPEED_LOOP:,} additions in a Python loop took {seconds:.2f} s; "
        f"fingerprinting {len(sample):,} articles took {per_article:.1f} us each"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--latency-seconds", type=float, default=20.0)
    parser.add_argument("--kafka", default="127.0.0.1:9092")
    parser.add_argument(
        "--redis-url",
        default="redis://127.0.0.1:6379/13",
        help="a database of its own: emptied before each run",
    )
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument(
        "--pairs", type=int, default=3, help="passthrough and worker drains, taking turns"
    )
    parser.add_argument(
        "--scale-rounds", type=int, default=2, help="rounds of 1, 2 and 4 workers in turn"
    )
    parser.add_argument(
        "--worker-cpu",
        type=float,
        default=0.35,
        help="the share of a core each worker is held to in the second scale-out (two such "
        "workers, Redis and Kafka fit in two cores)",
    )
    parser.add_argument(
        "--layouts",
        default="",
        help="comma-separated DEDUP_LAYOUT values: a worker with each joins the throughput "
        "rounds and the latency runs, beside the worker with the default layout",
    )
    parser.add_argument(
        "--settings",
        default="",
        help="comma-separated NAME=VALUE environment settings: a worker with each joins the "
        "throughput rounds and the latency runs, beside the worker with the defaults (e.g. "
        "DEDUP_REDIS_REPLICAS_ACKED=1, given a replica of --redis-url's Redis)",
    )
    parser.add_argument(
        "--sections",
        default="throughput,latency,scale-out",
        help="which parts to run (comma-separated; the throughput rounds always run)",
    )
    args = parser.parse_args()
    sections = set(args.sections.split(","))

    articles = make_articles(args.articles)
    # This process publishes at a steady rate and times each send: its own full garbage
    # collections, which re-scan the articles it holds, would pause it and bunch the sends.
    gc.freeze()
    logs = Path(tempfile.mkdtemp(prefix="dedup-bench-"))
    print(
        f"{len(articles):,} articles (Lee news, 10% exact copies, 5% one-word edits); "
        f"4 partitions; logs in {logs}"
    )
    print(f"machine     {os.cpu_count()} cores; before: {machine_state(articles)}")
    print(f"redis       {asyncio.run(persistence(args.redis_url))}")

    def new(
        command: tuple[str, ...],
        processes: int = 1,
        env: dict[str, str] | None = None,
        cores_each: float | None = None,
    ) -> Run:
        return Run(args.kafka, args.redis_url, logs, command, processes, env, cores_each)

    # A broker just started runs slower for a minute or so (its JVM compiles as it goes), and
    # it would slow whichever run came first: warm it up with a passthrough run, not reported.
    with new(PASSTHROUGH) as run:
        throughput(run, articles[: max(5_000, len(articles) // 10)], args.timeout)
    with new(BARE) as run:
        topic = run.tenant.settings.input_topic
        print(f"broker      {asyncio.run(broker_ceiling(args.kafka, topic, articles))}")

    # The machine's speed drifts over minutes: the ratios are taken within each round of
    # neighbouring runs, and the median reported.
    kinds: dict[str, tuple[tuple[str, ...], dict[str, str] | None]] = {
        "bare client": (BARE, None),
        "passthrough": (PASSTHROUGH, None),
        "worker": (WORKER, None),
        "exactly-once": (WORKER, EXACTLY_ONCE),
    }
    for spec in filter(None, args.layouts.split(",")):
        kinds[f"worker {spec}"] = (WORKER, {"DEDUP_LAYOUT": spec})
    for setting in filter(None, args.settings.split(",")):
        name, _, value = setting.partition("=")
        kinds[f"worker {setting}"] = (WORKER, {name: value})
    runs: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(args.pairs):
        for name, (command, env) in kinds.items():
            with new(command, env=env) as run:
                drain = throughput(run, articles, args.timeout)
            runs[name].append(drain.rate)
            print(f"throughput  {name:<12} {drain.describe()}")
        last = {name: rates[-1] for name, rates in runs.items()}
        print(
            f"            worker / passthrough = {last['worker'] / last['passthrough']:.0%}, "
            f"worker / bare client = {last['worker'] / last['bare client']:.0%}, "
            f"passthrough / bare client = {last['passthrough'] / last['bare client']:.0%}, "
            f"exactly-once / worker = {last['exactly-once'] / last['worker']:.0%}"
            + "".join(
                f", {name} / worker = {last[name] / last['worker']:.0%}"
                for name in kinds
                if name.startswith("worker ")
            )
        )
    ratios = [w / p for w, p in zip(runs["worker"], runs["passthrough"], strict=True)]
    costs = [e / w for e, w in zip(runs["exactly-once"], runs["worker"], strict=True)]
    rates = {name: statistics.median(values) for name, values in runs.items()}
    print(
        f"throughput  median of {args.pairs} rounds: bare client {rates['bare client']:,.0f}/s, "
        f"passthrough {rates['passthrough']:,.0f}/s, "
        f"worker {rates['worker']:,.0f}/s, worker / passthrough {statistics.median(ratios):.0%}; "
        f"exactly-once {rates['exactly-once']:,.0f}/s, {statistics.median(costs):.0%} of the "
        "worker"
    )

    for name in kinds:
        if name.startswith("worker "):
            ratio = statistics.median(
                a / w for a, w in zip(runs[name], runs["worker"], strict=True)
            )
            print(f"throughput  {name}: {rates[name]:,.0f}/s, {ratio:.0%} of the worker")

    for name, (command, env) in kinds.items():
        if name == "bare client" or "latency" not in sections:
            continue
        rate = rates[name] / 2
        count = max(100, int(rate * (args.latency_seconds + WARM_UP_S)))
        steady = articles[:count] if count <= len(articles) else make_articles(count)
        with new(command, env=env) as run:
            measured = latency(run, steady, rate, args.timeout)
        print(
            f"latency     {name:<12} at {rate:7,.0f}/s for {args.latency_seconds:.0f} s after "
            f"{WARM_UP_S:.0f} s of warm-up: {measured.describe()}"
        )

    if "scale-out" in sections:
        scale_out(new, articles, args.scale_rounds, args.timeout)
        if available():
            scale_out(new, articles, args.scale_rounds, args.timeout, args.worker_cpu)
        else:
            print("scale-out   held to a share of a core: skipped (no writable CPU control group)")
    print(
        f"machine     after: {machine_state(articles)} (a busy or slow machine: every figure lower)"
    )


def scale_out(
    new: Callable[..., Run],
    articles: list[dict[str, Any]],
    rounds: int,
    timeout: float,
    cores_each: float | None = None,
) -> None:
    """One, two and four workers in turn, `rounds` times, each ratio to the one worker of its
    round: of the rates once every worker had its partitions (Drain.formed_rate), and of the
    rates from the first output, forming the group included. Without `cores_each`, then two
    workers apart; with it, each worker is held to that share of a core."""
    held = "" if cores_each is None else f", {cores_each:g} core each"
    scaled: dict[int, list[tuple[float, float]]] = {2: [], 4: []}
    separate: list[float] = []
    half = len(articles) // 2
    for _ in range(rounds):
        with new(WORKER, cores_each=cores_each) as run:
            one = throughput(run, articles, timeout)
        one_rate = one.formed_rate or one.rate
        print(f"scale-out   1 worker{held}  {one.describe()}")
        for processes in scaled:
            with new(WORKER, processes=processes, cores_each=cores_each) as run:
                drain = throughput(run, articles, timeout)
            formed = (drain.formed_rate or drain.rate) / one_rate
            scaled[processes].append((formed, drain.rate / one.rate))
            print(
                f"scale-out   {processes} workers{held}  {drain.describe()} ({formed:.2f}x one "
                f"worker once formed; {drain.rate / one.rate:.2f}x from the first output)"
            )
        if cores_each is not None:
            continue
        # What the machine gives two workers that share no index: what two workers lose
        # beyond that is the cost of sharing one.
        with new(WORKER) as first, new(WORKER) as second:
            together = apart([first, second], [articles[:half], articles[half:]], timeout)
        if together is None:
            print("scale-out   2 workers apart: they were not at work at the same time")
        else:
            separate.append(together / one_rate)
            print(
                f"scale-out   2 workers apart, each its own topics, index and half of the "
                f"articles: {together:9,.0f} articles/s while both were at work "
                f"({together / one_rate:.2f}x one worker once formed)"
            )
    print(
        f"scale-out   median of {rounds} rounds{held}: "
        + ", ".join(
            f"{n} workers {statistics.median(f for f, _ in r):.2f}x one once formed, "
            f"{statistics.median(a for _, a in r):.2f}x from the first output"
            for n, r in scaled.items()
        )
        + (f"; 2 workers apart {statistics.median(separate):.2f}x" if separate else "")
    )


if __name__ == "__main__":
    main()
