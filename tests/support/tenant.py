"""Running real worker processes against real Kafka and Redis, and reading what they emit."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import GroupCoordinatorNotAvailableError

from tests.support.services import free_port
from worker.settings import ENV, Settings
from worker.stream.kafka import ensure_topics


@dataclass
class Tenant:
    """One test's private set of topics, namespace and consumer group."""

    kafka: str
    redis_url: str
    name: str
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env())

    def env(self) -> dict[str, str]:
        values = {
            "kafka_bootstrap": self.kafka,
            "redis_url": self.redis_url,
            "namespace": self.name,
            "app_id": f"dedup-test-{self.name}",
            "input_topic": f"{self.name}.articles",
            "unique_topic": f"{self.name}.unique",
            "duplicates_topic": f"{self.name}.duplicates",
            "rejected_topic": f"{self.name}.rejected",
            "input_partitions": "4",
            "http_port": "0",  # each worker process gets a free port of its own (WorkerProcess)
        }
        env = {ENV[k]: v for k, v in values.items()}
        env.update(self.extra_env)
        return env

    @property
    def outputs(self) -> dict[str, str]:
        s = self.settings
        return {
            "unique": s.unique_topic,
            "duplicates": s.duplicates_topic,
            "rejected": s.rejected_topic,
        }

    def create_topics(self) -> None:
        asyncio.run(ensure_topics(self.settings))

    @property
    def topic_prefixes(self) -> tuple[str, str]:
        """The names of the tenant's topics start with these: its own, and those faust made
        for its app id."""
        return f"{self.name}.", f"{self.settings.app_id}-"

    def delete_topics(self) -> None:
        """Delete the tenant's topics. A broker that keeps every run's topics fills its disk
        and carries ever more partitions."""
        asyncio.run(delete_topics(self.kafka, self.topic_prefixes))


DELETE_CHUNK = 200  # topics per deletion request (a session's tenants made a few thousand)


async def delete_topics(kafka: str, prefixes: tuple[str, ...]) -> None:
    """Delete every topic whose name starts with one of `prefixes`."""
    if not prefixes:
        return
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(prefixes)]
        for at in range(0, len(names), DELETE_CHUNK):
            await admin.delete_topics(names[at : at + DELETE_CHUNK])
    finally:
        await admin.close()


def topics(kafka: str) -> set[str]:
    """The names of the broker's topics."""

    async def listed() -> set[str]:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
        await admin.start()
        try:
            return set(await admin.list_topics())
        finally:
            await admin.close()

    return asyncio.run(listed())


_ASSIGNED = "Setting newly assigned partitions"


def assignment_times(log: str) -> list[float]:
    """When a consumer's log says it got each of its assignments (aiokafka's lines), first to
    last: Unix seconds, from the time that the log's default format puts first, in local time."""
    times = []
    for line in log.splitlines():
        found = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]", line)
        if found is not None and _ASSIGNED in line:
            times.append(datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S,%f").timestamp())
    return times


WORKER_COMMAND = ("-m", "worker", "worker")


class WorkerProcess:
    """`python -m worker worker` (or another faust program) as a child process, logging to a
    file."""

    def __init__(
        self, tenant: Tenant, log_path: Path, command: tuple[str, ...] = WORKER_COMMAND
    ) -> None:
        self.log_path = log_path
        self.command = command
        env = {**os.environ, **tenant.env(), "PYTHONUNBUFFERED": "1"}
        if env[ENV["http_port"]] == "0":  # (its /readyz tells when it is ready)
            env[ENV["http_port"]] = str(free_port())
        self.http_port = int(env[ENV["http_port"]])
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, *command], env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60) -> None:
        """Until the worker's /readyz answers 200 (Redis and Kafka answer it); another faust
        program (the benchmarks' passthrough) serves none: until faust logs that it is."""
        deadline = time.monotonic() + timeout
        serves_health = self.command == WORKER_COMMAND
        while not (self.ready() if serves_health else "Worker]: Ready" in self.log()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"worker did not start:\n{self.log()[-3000:]}")
            time.sleep(0.2)

    def ready(self) -> bool:
        url = f"http://127.0.0.1:{self.http_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:  # (not listening yet, or 503: not ready)
            return False

    def _assignments(self) -> list[str]:
        """The log's lines of the consumer's assignments (aiokafka's), first to last."""
        return [line for line in self.log().splitlines() if _ASSIGNED in line]

    def assigned(self, topic: str) -> tuple[int, ...]:
        """The partitions of `topic` in the worker's last assignment (from its log)."""
        lines = self._assignments()
        if not lines:
            return ()
        pattern = rf"TopicPartition\(topic='{re.escape(topic)}', partition=(\d+)\)"
        return tuple(sorted(int(p) for p in re.findall(pattern, lines[-1])))

    def assigned_times(self) -> list[float]:
        """When the process got each of its assignments (assignment_times)."""
        return assignment_times(self.log())

    def kill(self) -> None:
        """kill -9: no shutdown, no last commit."""
        self.proc.kill()
        self.proc.wait()
        self._log.close()

    def stop(self) -> None:
        if self._log.closed:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


async def abort_one_then_commit_one(
    kafka: str, topic: str, aborted: tuple[bytes, bytes], committed: tuple[bytes, bytes]
) -> None:
    """Publish (key, value) `aborted` in a transaction that is aborted once the broker has the
    message (it is in partition 0's log), then `committed` in one that commits."""
    producer = AIOKafkaProducer(bootstrap_servers=kafka, transactional_id=f"{topic}-publisher")
    await producer.start()
    try:
        for (key, value), commit in ((aborted, False), (committed, True)):
            await producer.begin_transaction()
            await (await producer.send(topic, value, key=key, partition=0))
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await producer.stop()


def produce(
    kafka: str, topic: str, messages: list[tuple[bytes | None, bytes | None, int | None]]
) -> None:
    """Send (key, value, partition) triples in order; None partition: by key."""

    async def run() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=kafka, acks="all", max_request_size=4 * 1024 * 1024
        )
        await producer.start()
        try:
            pending = [
                await producer.send(topic, value, key=key, partition=partition)
                for key, value, partition in messages
            ]
            await asyncio.gather(*pending)
        finally:
            await producer.stop()

    asyncio.run(run())


# name -> messages on that topic (dicts), and name + "_tombstones" -> keys of tombstones
Outputs = dict[str, list[Any]]


def collect(
    kafka: str, topics: dict[str, str], expected: int, timeout: float = 90, quiet: float = 3.0
) -> Outputs:
    """Everything on `topics` (name -> topic) from the beginning, once `expected` messages have
    arrived and `quiet` seconds passed without more. Fails on timeout."""
    return collect_until(
        kafka, topics, lambda out: sum(map(len, out.values())) >= expected, timeout, quiet
    )


def collect_until(
    kafka: str,
    topics: dict[str, str],
    done: Callable[[Outputs], bool],
    timeout: float = 90,
    quiet: float = 3.0,
    isolation_level: str = "read_uncommitted",
) -> Outputs:
    """Everything on `topics` from the beginning, once `done(outputs)` holds and `quiet`
    seconds passed without more (quiet=0: as soon as it holds). Fails on timeout.
    Tombstones on topic `name` are listed, by key, under `name + "_tombstones"`."""

    async def run() -> Outputs:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=kafka,
            group_id=None,
            enable_auto_commit=False,
            isolation_level=isolation_level,
        )
        await consumer.start()
        try:
            by_topic = {topic: name for name, topic in topics.items()}
            parts = [
                TopicPartition(t, p)
                for t in by_topic
                for p in (consumer.partitions_for_topic(t) or await _partitions(consumer, t))
            ]
            consumer.assign(parts)
            await consumer.seek_to_beginning(*parts)
            count, deadline, last = 0, time.monotonic() + timeout, time.monotonic()
            out: Outputs = defaultdict(list)
            while True:
                batch = await consumer.getmany(timeout_ms=200)
                for tp, records in batch.items():
                    for r in records:
                        if r.value is None:  # a tombstone: the article with this key withdrawn
                            out[f"{by_topic[tp.topic]}_tombstones"].append(r.key.decode())
                        else:
                            out[by_topic[tp.topic]].append(json.loads(r.value))
                        count += 1
                        last = time.monotonic()
                now = time.monotonic()
                if now - last >= quiet and done(out):
                    return dict(out)
                if now > deadline:
                    raise AssertionError(
                        f"timed out after {count} messages: { {k: len(v) for k, v in out.items()} }"
                    )
        finally:
            await consumer.stop()

    return asyncio.run(run())


async def _partitions(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    await consumer._client.force_metadata_update()
    return consumer.partitions_for_topic(topic) or set()


def start_group(
    start: Callable[[Tenant], WorkerProcess], tenant: Tenant, count: int
) -> list[WorkerProcess]:
    """`count` worker processes, started and joined in one consumer group."""
    workers = [start(tenant) for _ in range(count)]
    for worker in workers:
        worker.wait_ready()
    deadline = time.monotonic() + 60
    while group_members(tenant.kafka, tenant.settings.app_id) < count:
        assert time.monotonic() < deadline, f"the {count} workers never formed one group"
        time.sleep(0.5)
    return workers


def group_members(kafka: str, group: str) -> int:
    async def run() -> int:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
        await admin.start()
        try:
            try:
                [description] = await admin.describe_consumer_groups([group])
            except GroupCoordinatorNotAvailableError:  # no member has joined yet
                return 0
            groups = description.groups
            return len(groups[0][5]) if groups and groups[0][2] == "Stable" else 0
        finally:
            await admin.close()

    return asyncio.run(run())


def http_get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        return str(response.read().decode())
