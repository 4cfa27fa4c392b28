"""Stream order is the specification: per input partition, the verdicts the worker's stream
loop publishes (with the real pipeline and Redis) are those of deciding the partition's
messages one after another, whatever the batch boundaries, the overlap of batches, deletions
and updates inside them, Redis outages of any length and revocations; and a batch of a worker
whose partition went to another is never applied."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.support.proxy import Proxy, proxy
from tests.support.scripted import ScriptedInput, article, deletion, in_sequence, run_loop
from tests.support.services import free_port
from tests.support.texts import PRODUCT_PAGE, PROMOTION, RECIPE
from worker.errors import IndexFenced
from worker.settings import Settings

COPY = PRODUCT_PAGE.replace("complete your kit,", PROMOTION)  # one sentence added: near


def words(rng: random.Random, vocabulary: list[str], n: int = 120) -> list[str]:
    return [rng.choice(vocabulary) for _ in range(n)]


@pytest.fixture
def redis_port(redis_url: str) -> int:
    return int(redis_url.split(":")[-1].split("/")[0])


@pytest.fixture
def through(redis_port: int) -> Iterator[Proxy]:
    """Redis behind a proxy that a test can cut (an outage) and bring back."""
    with proxy(redis_port) as running:
        yield running


def settings_for(port: int, cache: bool) -> Settings:
    return Settings(
        redis_url=f"redis://127.0.0.1:{port}/15",
        namespace=f"order{uuid.uuid4().hex[:8]}",
        bucket_cache=cache,
    )


CACHE = pytest.mark.parametrize("cache", [True, False], ids=["bucket cache", "no cache"])


@CACHE
async def test_a_deletion_inside_a_batch_comes_before_the_next_batch(
    redis_port: int, cache: bool
) -> None:
    # X, then [F, delete X], then X with new text, then Y (a near copy of the new text): Y
    # repeats X, which stays indexed. And [G, delete Z, A], then B (a near copy of A): A first.
    settings = settings_for(redis_port, cache)
    readd = [article("X", RECIPE), article("F", "filler " * 30), deletion("X")]
    readd += [article("X", PRODUCT_PAGE), article("Y", COPY)]
    first = [article("G", "other " * 30), deletion("Z"), article("A", PRODUCT_PAGE)]
    first += [article("B", COPY)]
    for values, sizes in ((readd, [1, 2, 1, 1]), (first, [3, 1])):
        got = await run_loop(settings, ScriptedInput([values], sizes=sizes))
        want = await in_sequence(settings, [values])
        assert {k: v[0] for k, v in got.items()} == want
        settings = settings_for(redis_port, cache)
    assert want[0, 3] == ("near", "A")


@CACHE
@pytest.mark.parametrize("outage_s", [0.5, 0.9, 1.7, 3.3])
async def test_after_a_redis_outage_the_batches_are_decided_in_the_order_they_came(
    through: Proxy, redis_port: int, cache: bool, outage_s: float
) -> None:
    # A, then B (a near copy of A) 0.4 s later, while A's batch waits for Redis (their tries
    # are then 0.4 s apart): A stays the original.
    settings = settings_for(through.port, cache)
    source = ScriptedInput([[article("A", PRODUCT_PAGE)]])
    through.switch(free_port())  # (nothing listens there)

    async def outage() -> None:
        await asyncio.sleep(0.4)
        source.add(0, article("B", COPY))
        await asyncio.sleep(outage_s - 0.4)
        through.switch(redis_port)

    got = await run_loop(settings, source, events=outage)
    assert {k: v[0] for k, v in got.items()} == {(0, 0): ("unique", None), (0, 1): ("near", "A")}


@CACHE
async def test_a_batch_of_a_worker_whose_partition_was_taken_over_is_never_applied(
    through: Proxy, redis_port: int, cache: bool
) -> None:
    # Worker A decides X, then its Redis is cut while it holds [delete X]; it pauses past its
    # session, so the group gives the partition to B (the next generation), which applies the
    # deletion and X's new text. A's Redis comes back: its batch is refused, and A stops.
    settings = settings_for(through.port, cache)
    direct = Settings(redis_url=f"redis://127.0.0.1:{redis_port}/15", namespace=settings.namespace)
    values = [article("X", RECIPE), deletion("X"), article("X", PRODUCT_PAGE)]
    a = ScriptedInput([values[:1]], generation=1, current_always=True)

    async def meanwhile() -> None:
        while a.committed[0] < 1:  # (X decided and published)
            await a.progress.wait()
            a.progress.clear()
        through.switch(free_port())
        a.add(0, values[1])
        await asyncio.sleep(0.5)  # (A fetched it, and waits for Redis)
        b = ScriptedInput([values], generation=2)
        b.start_at([1])
        await run_loop(direct, b)
        through.switch(redis_port)

    with pytest.raises(IndexFenced):
        await run_loop(settings, a, events=meanwhile)
    check = ScriptedInput([[*values, article("Y", COPY)]], generation=3)
    check.start_at([3])
    got = await run_loop(direct, check)
    assert got[0, 3] == [("near", "X")]


def random_stream(rng: random.Random, partitions: int, length: int) -> list[list[bytes]]:
    """Per partition (texts and ids of its own): originals, near copies (a few words changed),
    exact copies, updates of an id (a near copy, or a new text) and deletions."""
    out = []
    for p in range(partitions):
        vocabulary = [f"p{p}w{rng.randrange(10**6)}" for _ in range(3000)]
        texts: list[list[str]] = []
        ids: list[str] = []
        values = []
        for i in range(length):
            roll = rng.random()
            new_id = f"{p}-{i}"
            if roll < 0.3 or not texts:
                text = words(rng, vocabulary)
            elif roll < 0.85:
                text = list(rng.choice(texts))
                for _ in range(rng.choice([0, 2, 4, 8])):
                    text[rng.randrange(len(text))] = rng.choice(vocabulary)
            if roll >= 0.85:
                values.append(deletion(rng.choice(ids) if ids and rng.random() < 0.9 else new_id))
                continue
            texts.append(text)
            target = rng.choice(ids) if ids and roll >= 0.7 else new_id  # (an update)
            ids.append(target)
            values.append(article(target, " ".join(text)))
        out.append(values)
    return out


@CACHE
@pytest.mark.parametrize("seed", range(4))
async def test_random_streams_with_outages_and_revocations_are_decided_in_stream_order(
    through: Proxy, redis_port: int, cache: bool, seed: int
) -> None:
    rng = random.Random(seed)
    partitions = random_stream(rng, partitions=2, length=90)
    source = ScriptedInput(partitions, batch_size=rng.randint(2, 30), rng=rng)
    settings = settings_for(through.port, cache)
    schedule = random.Random(seed + 1000)

    async def events() -> None:
        for _ in range(4):
            await asyncio.sleep(schedule.uniform(0.0, 0.3))
            if schedule.random() < 0.6:
                through.switch(free_port())
                await asyncio.sleep(schedule.uniform(0.1, 1.2))
                through.switch(redis_port)
            else:
                source.revoke()

    got = await run_loop(settings, source, events=events)
    want = await in_sequence(settings, partitions)
    wrong = {k: (v, want[k]) for k, v in got.items() if any(s != want[k] for s in v)}
    assert wrong == {}
    assert set(got) == set(want)
    kinds = Counter(kind for kind, _ in want.values())
    assert kinds["near"] + kinds["exact"] > 20  # (the stream holds copies to get wrong)
    assert kinds["deleted"] > 5
