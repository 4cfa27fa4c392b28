"""The client's own ceiling for bench_end_to_end: the passthrough without faust. A bare aiokafka
loop on the same topics: take up to 500 records, send each to the unique topic, wait for every
acknowledgement, commit the batch's offsets, repeat."""

from __future__ import annotations

import asyncio
import signal

from aiokafka import AIOKafkaConsumer

from worker.settings import Settings
from worker.stream.kafka import client_options, producer

READY = "[^Worker]: Ready"  # the line WorkerProcess.wait_ready looks for (faust's)


async def forward(settings: Settings) -> None:
    consumer = AIOKafkaConsumer(
        settings.input_topic,
        **client_options(settings),
        group_id=settings.app_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=500,
    )
    await consumer.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        async with producer(settings, linger_ms=0, idempotent=True) as out:
            print(READY, flush=True)
            while not stop.is_set():
                batch = await consumer.getmany(timeout_ms=100, max_records=500)
                pending = [
                    await out.send(settings.unique_topic, r.value, key=r.key)
                    for records in batch.values()
                    for r in records
                ]
                await asyncio.gather(*pending)
                if batch:
                    await consumer.commit()
    finally:
        await consumer.stop()


if __name__ == "__main__":
    asyncio.run(forward(Settings.from_env()))
