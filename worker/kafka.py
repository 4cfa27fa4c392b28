"""Kafka plumbing outside the stream app: topic creation, and the producer and consumer that
the `publish` and `alerts` commands use. Kafka errors become KafkaUnavailable here."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar

from aiokafka import AIOKafkaClient, AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

from worker.errors import KafkaUnavailable
from worker.settings import Settings

log = logging.getLogger(__name__)
TOPIC_ALREADY_EXISTS = 36  # Kafka protocol error code
Client = TypeVar("Client", AIOKafkaProducer, AIOKafkaConsumer)


async def ensure_topics(settings: Settings) -> None:
    """Create the input and output topics if they do not exist yet (existing ones are kept)."""
    configs = {"max.message.bytes": str(settings.output_max_bytes)}
    topics = [NewTopic(settings.input_topic, settings.input_partitions,
                       settings.replication_factor)]
    topics += [NewTopic(name, settings.input_partitions, settings.replication_factor,
                        topic_configs=configs)
               for name in (settings.unique_topic, settings.duplicates_topic,
                            settings.rejected_topic)]
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    try:
        await admin.start()
        existing = set(await admin.list_topics())
        missing = [t for t in topics if t.name not in existing]
        if not missing:
            return
        response = await admin.create_topics(missing)
    except KafkaError as exc:
        raise KafkaUnavailable(
            f"cannot create topics on {settings.kafka_bootstrap}: {exc!r}") from exc
    finally:
        await admin.close()
    for topic, code, *rest in response.topic_errors:
        if code not in (0, TOPIC_ALREADY_EXISTS):
            raise KafkaUnavailable(f"creating topic {topic!r} failed: error {code} {rest}")
        if code == 0:
            log.info("created topic %s", topic)


def producer(settings: Settings) -> AbstractAsyncContextManager[AIOKafkaProducer]:
    client = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all",
                              linger_ms=5, max_request_size=settings.output_max_bytes)
    return _running(client, settings)


def consumer(settings: Settings, topics: list[str],
             from_beginning: bool) -> AbstractAsyncContextManager[AIOKafkaConsumer]:
    client = AIOKafkaConsumer(*topics, bootstrap_servers=settings.kafka_bootstrap,
                              group_id=None, enable_auto_commit=False,
                              auto_offset_reset="earliest" if from_beginning else "latest")
    return _running(client, settings)


@asynccontextmanager
async def _running(client: Client, settings: Settings) -> AsyncIterator[Client]:
    """The client, started; stopped on exit. A failed start raises KafkaUnavailable."""
    try:
        await client.start()
    except KafkaError as exc:
        await client.stop()
        raise KafkaUnavailable(f"cannot reach Kafka at {settings.kafka_bootstrap}: {exc!r}") \
            from exc
    try:
        yield client
    finally:
        await client.stop()


class KafkaProbe:
    """A readiness check: one metadata request to the cluster (connects on first use)."""

    def __init__(self, settings: Settings) -> None:
        self.bootstrap = settings.kafka_bootstrap
        self._client: AIOKafkaClient | None = None

    async def __call__(self) -> None:
        if self._client is None:
            client = AIOKafkaClient(bootstrap_servers=self.bootstrap)
            await client.bootstrap()
            self._client = client
        await self._client.fetch_all_metadata()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
