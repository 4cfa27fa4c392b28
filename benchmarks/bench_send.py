"""The producer's CPU per output message on real Kafka: the worker's way (send_all: record
batches it builds, one per partition) against aiokafka's `send` per message. The producer is
the worker's (worker.stream.kafka.producer: idempotent, acks=all, linger 0); each batch of
messages is sent, then its acknowledgements awaited, as the worker publishes a batch of
verdicts; the two take turns, and each round prints their ratio."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.support.tenant import delete_topics
from worker.settings import Settings
from worker.stream.kafka import Message, producer, send_all


async def run(args: argparse.Namespace) -> None:
    topic = f"bench-send-{uuid.uuid4().hex[:6]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=args.kafka)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 4, 1)])
    finally:
        await admin.close()
    try:
        async with producer(
            Settings(kafka_bootstrap=args.kafka), linger_ms=0, idempotent=True
        ) as out:
            await measure(out, topic, args)
    finally:  # (a broker that keeps every run's records fills its disk)
        await delete_topics(args.kafka, (topic,))


async def measure(out: AIOKafkaProducer, topic: str, args: argparse.Namespace) -> None:
    messages: list[Message] = [
        (topic, f"article-{i}".encode(), os.urandom(args.bytes // 2).hex().encode())
        for i in range(args.messages)
    ]

    async def one_by_one() -> None:
        sent = [await out.send(t, value, key=key) for t, key, value in messages]
        await asyncio.gather(*sent)

    async def batched() -> None:
        await asyncio.gather(*await send_all(out, messages))

    ways: dict[str, Callable[[], Awaitable[None]]] = {
        "send_all": batched,
        "send per message": one_by_one,
    }
    for way in ways.values():  # (metadata, connections)
        await way()
    count = args.messages * args.batches
    print(f"{args.batches} batches of {args.messages} messages of {args.bytes} bytes")
    for round_ in range(1, args.rounds + 1):
        cpu: dict[str, float] = {}
        for name, way in ways.items():
            start, wall = time.process_time(), time.perf_counter()
            for _ in range(args.batches):
                await way()
            cpu[name] = (time.process_time() - start) / count * 1e6
            wall_us = (time.perf_counter() - wall) / count * 1e6
            print(
                f"round {round_} {name:<17} CPU {cpu[name]:6.1f} us/message, "
                f"wall {wall_us:6.1f} us/message"
            )
        ratio = cpu["send_all"] / cpu["send per message"]
        print(f"round {round_} send_all's CPU {ratio:.2f}x send's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kafka", default="127.0.0.1:9092")
    parser.add_argument("--messages", type=int, default=100, help="messages per batch")
    parser.add_argument("--batches", type=int, default=100, help="batches per round and way")
    parser.add_argument("--bytes", type=int, default=1300, help="bytes per message")
    parser.add_argument("--rounds", type=int, default=3)
    logging.getLogger("aiokafka").setLevel(logging.ERROR)  # (a new topic's first leaders)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
