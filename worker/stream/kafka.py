"""Kafka plumbing outside the stream app: client security options, a credentials check, topic
creation, the producers' sending in batches built here (send_all), and the producer and
consumer of `publish` and `alerts`. Kafka errors become KafkaUnavailable (retry may help) or
KafkaRefused (it will not) here."""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.conn import create_conn
from aiokafka.errors import (
    AuthenticationFailedError,
    AuthenticationMethodNotSupported,
    ClusterAuthorizationFailedError,
    KafkaError,
    SaslAuthenticationFailed,
    TopicAuthorizationFailedError,
    UnsupportedSaslMechanismError,
)
from aiokafka.helpers import create_ssl_context
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer.message_accumulator import BatchBuilder

from worker.errors import KafkaRefused, KafkaUnavailable
from worker.pipeline.outputs import Destination
from worker.settings import Settings

log = logging.getLogger(__name__)
TOPIC_ALREADY_EXISTS = 36  # Kafka protocol error code
# The largest record batch a producer builds for one partition. A batch's verdicts then go out
# in a request or two rather than one per 16 KB (aiokafka's default, a dozen verdicts): fewer
# requests and acknowledgements for the worker and the broker to handle (docs/performance.md).
# Well under the 1 MB a topic accepts by default.
PRODUCER_BATCH_BYTES = 256 * 1024
Client = TypeVar("Client", AIOKafkaProducer, AIOKafkaConsumer)
Message = tuple[str, bytes | None, bytes | None]  # topic, key, value (None: a tombstone)
_PARTITIONER = DefaultPartitioner()  # (send's own: a key goes where send would put it)
_REFUSALS = (
    AuthenticationFailedError,
    AuthenticationMethodNotSupported,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanismError,
    ClusterAuthorizationFailedError,
    TopicAuthorizationFailedError,
)


def _translate(exc: KafkaError, what: str) -> KafkaUnavailable | KafkaRefused:
    if isinstance(exc, _REFUSALS):
        return KafkaRefused(
            f"{what}: Kafka refused the credentials or rights "
            f"(DEDUP_KAFKA_USERNAME / DEDUP_KAFKA_PASSWORD / ACLs): {exc!r}"
        )
    return KafkaUnavailable(f"{what}: {exc!r}")


def client_options(settings: Settings) -> dict[str, Any]:
    """Security options for any aiokafka client (admin, producer, consumer)."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_bootstrap,
        "security_protocol": settings.kafka_security_protocol,
    }
    if settings.kafka_uses_ssl:
        options["ssl_context"] = ssl_context(settings)
    if settings.kafka_uses_sasl:
        options.update(
            sasl_mechanism=settings.kafka_sasl_mechanism,
            sasl_plain_username=settings.kafka_username,
            sasl_plain_password=settings.kafka_password,
        )
    return options


def ssl_context(settings: Settings) -> ssl.SSLContext:
    context: ssl.SSLContext = create_ssl_context(cafile=settings.kafka_ssl_cafile or None)
    return context


async def check_credentials(settings: Settings) -> None:
    """With SASL, log in to the first bootstrap server once: aiokafka's clients only log a
    refused password and report the broker unreachable, which would be retried in vain."""
    if not settings.kafka_uses_sasl:
        return
    host, _, port = settings.kafka_bootstrap.split(",")[0].rpartition(":")
    options = client_options(settings)
    del options["bootstrap_servers"]
    try:
        connection = await create_conn(host, int(port), **options)
    except KafkaError as exc:
        raise _translate(exc, f"cannot log in to Kafka at {host}:{port}") from exc
    except OSError as exc:
        raise KafkaUnavailable(f"cannot reach Kafka at {host}:{port}: {exc!r}") from exc
    connection.close()


async def ensure_topics(settings: Settings) -> None:
    """Create the input and output topics if they do not exist yet (existing ones are kept)."""
    configs = {"max.message.bytes": str(settings.output_max_bytes)}
    topics = [
        NewTopic(settings.input_topic, settings.input_partitions, settings.replication_factor)
    ]
    topics += [
        NewTopic(
            name, settings.input_partitions, settings.replication_factor, topic_configs=configs
        )
        for name in (settings.unique_topic, settings.duplicates_topic, settings.rejected_topic)
    ]
    admin = AIOKafkaAdminClient(**client_options(settings))
    try:
        await admin.start()
        existing = set(await admin.list_topics())
        missing = [t for t in topics if t.name not in existing]
        if not missing:
            return
        response = await admin.create_topics(missing)
    except KafkaError as exc:
        raise _translate(exc, f"cannot create topics on {settings.kafka_bootstrap}") from exc
    finally:
        await admin.close()
    for topic, code, *rest in response.topic_errors:
        if code not in (0, TOPIC_ALREADY_EXISTS):
            raise KafkaUnavailable(f"creating topic {topic!r} failed: error {code} {rest}")
        if code == 0:
            log.info("created topic %s", topic)


def producer(
    settings: Settings, linger_ms: int = 5, idempotent: bool = False
) -> AbstractAsyncContextManager[AIOKafkaProducer]:
    """A producer that waits for every replica (acks=all); `idempotent`: retries can neither
    repeat nor reorder a message."""
    client = AIOKafkaProducer(
        **client_options(settings),
        acks="all",
        linger_ms=linger_ms,
        enable_idempotence=idempotent,
        max_request_size=settings.output_max_bytes,
        max_batch_size=PRODUCER_BATCH_BYTES,
    )
    return started(client, settings)


async def send_all(out: AIOKafkaProducer, messages: Iterable[Message]) -> list[asyncio.Future[Any]]:
    """Queue the messages in record batches built here, one per partition (each full one
    followed by the next), a key going to the partition that `out.send` would choose; returns
    the batches' futures, done once Kafka has them. aiokafka's send runs its metadata,
    partitioner and batch checks for every message: much of its CPU per message
    (docs/performance.md)."""
    partitions: dict[str, tuple[list[int], list[int]]] = {}  # every one, those available
    building: dict[tuple[str, int], BatchBuilder] = {}
    sent: list[asyncio.Future[Any]] = []
    for topic, key, value in messages:
        if topic not in partitions:
            every = sorted(await out.partitions_for(topic))
            available = out.client.cluster.available_partitions_for_topic(topic)
            partitions[topic] = every, list(available)
        partition = _PARTITIONER(key, *partitions[topic])
        batch = building.get((topic, partition))
        if batch is not None and batch.append(timestamp=None, key=key, value=value) is not None:
            continue
        if batch is not None:  # full: out it goes, and the message starts the next
            sent.append(await out.send_batch(batch, topic, partition=partition))
        batch = building[topic, partition] = out.create_batch()
        batch.append(timestamp=None, key=key, value=value)  # (a first message always fits)
    for (topic, partition), batch in building.items():
        sent.append(await out.send_batch(batch, topic, partition=partition))
    return sent


def output_topics(settings: Settings) -> dict[Destination, str]:
    return {
        Destination.UNIQUE: settings.unique_topic,
        Destination.DUPLICATES: settings.duplicates_topic,
        Destination.REJECTED: settings.rejected_topic,
    }


def consumer(
    settings: Settings, topics: list[str], from_beginning: bool
) -> AbstractAsyncContextManager[AIOKafkaConsumer]:
    client = AIOKafkaConsumer(
        *topics,
        **client_options(settings),
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest" if from_beginning else "latest",
        # (an exactly-once worker's aborted outputs are decided again: only the committed
        # ones are its verdicts)
        isolation_level="read_committed",
    )
    return started(client, settings)


@asynccontextmanager
async def started(client: Client, settings: Settings) -> AsyncIterator[Client]:
    """The client, started; stopped on exit. A failed start raises KafkaUnavailable."""
    try:
        await client.start()
    except KafkaError as exc:
        await client.stop()
        raise _translate(exc, f"cannot reach Kafka at {settings.kafka_bootstrap}") from exc
    try:
        yield client
    finally:
        await client.stop()
