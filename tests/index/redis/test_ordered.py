"""Batches of commands sent one after another on the index's own connection, each before the
replies of the one before are read."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from tests.support.proxy import proxy
from worker.index.redis.ordered import OrderedConnection


async def test_batches_run_in_the_order_sent_and_get_their_own_replies(
    redis_client: aioredis.Redis,
) -> None:
    line = OrderedConnection(redis_client)
    first = await line.send([("SET", "k", "a"), ("APPEND", "k", "b")])
    second = await line.send([("APPEND", "k", "c"), ("GET", "k")])
    assert await second == [3, b"abc"]  # (read after the first batch's replies)
    assert await first == [b"OK", 2]  # (as Redis answered: no parsing)
    await line.close()


async def test_an_error_reply_is_returned_in_its_place(redis_client: aioredis.Redis) -> None:
    line = OrderedConnection(redis_client)
    failed = await line.send([("EVALSHA", "0" * 40, 0), ("PING",)])
    after = await line.send([("ECHO", "still in step")])
    missing, pong = await failed
    assert isinstance(missing, redis.exceptions.NoScriptError)
    assert pong == b"PONG"
    assert await after == [b"still in step"]
    await line.close()


async def test_a_read_given_up_fails_the_batches_behind_it_and_a_new_connection_serves(
    redis_client: aioredis.Redis,
) -> None:
    line = OrderedConnection(redis_client)
    blocked = await line.send([("BLPOP", "nothing", 5)])  # (a reply that takes a while)
    behind = await line.send([("PING",)])
    await asyncio.sleep(0.05)
    blocked.cancel()  # its reply is never read: the connection is out of step
    with pytest.raises(redis.exceptions.ConnectionError):
        await behind
    assert await (await line.send([("ECHO", "new")])) == [b"new"]
    await line.close()


async def test_settled_waits_for_every_batch_sent(redis_client: aioredis.Redis) -> None:
    line = OrderedConnection(redis_client)
    slow = await line.send([("BLPOP", "nothing", 0.2), ("PING",)])
    await line.settled()
    assert slow.done()
    await line.close()


async def test_an_idle_connection_the_server_closed_is_replaced_before_a_send(
    redis_url: str,
) -> None:
    # (a restart or a network cut while nothing was in flight: the first send after it must
    # not be written to the dead connection)
    port = int(redis_url.split(":")[-1].split("/")[0])
    with proxy(port) as through:
        client = aioredis.Redis.from_url(f"redis://127.0.0.1:{through.port}/15")
        line = OrderedConnection(client)
        try:
            assert await (await line.send([("PING",)])) == [b"PONG"]
            through.switch(port)  # (closes the connections open now, as a cut does)
            await asyncio.sleep(0.2)
            assert await (await line.send([("ECHO", "after")])) == [b"after"]
        finally:
            await line.close()
            await client.aclose()
