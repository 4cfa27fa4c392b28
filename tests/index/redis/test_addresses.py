import random

import numpy as np
import pytest

from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.keys import NamespaceKeys
from worker.layout.tables import Layout, blocks, multi_index, neighbours, pigeonhole, sampled

LAYOUTS = [
    pigeonhole(3),
    multi_index(7, 3),
    multi_index(7, 5),
    blocks(5, 8),
    sampled(5, 4, 20),
    multi_index(5, 2),
]  # the last two: tables wider than 16 bits


def one_by_one(layout: Layout, fingerprint: int) -> list[str]:
    """The definition: each table's keys within its radius, named one at a time."""
    return [
        NamespaceKeys("ns").bucket(i, probe, table.width)
        for i, (table, key) in enumerate(zip(layout.tables, layout.keys(fingerprint), strict=True))
        for probe in neighbours(key, table.width, table.probe_radius)
    ]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.spec())
def test_a_batch_is_named_as_one_fingerprint_at_a_time(layout: Layout) -> None:
    rng = random.Random(7)
    simhashes = [0, 2**64 - 1] + [rng.getrandbits(64) for _ in range(20)]
    probed = BucketAddresses(NamespaceKeys("ns").buckets, layout)
    names = probed.names(simhashes)
    assert probed.per_fingerprint == layout.probes
    assert names == [name for fp in simhashes for name in one_by_one(layout, fp)]


def test_no_fingerprints_no_names() -> None:
    assert BucketAddresses(NamespaceKeys("ns").buckets, multi_index(7, 3)).names([]) == []


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.spec())
def test_table_keys_of_many_equal_the_key_of_each(layout: Layout) -> None:
    rng = random.Random(3)
    simhashes = [rng.getrandbits(64) for _ in range(50)]
    for table in layout.tables:
        many = table.keys(np.array(simhashes, dtype=np.uint64)).tolist()
        assert many == [table.key(fp) for fp in simhashes]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.spec())
@pytest.mark.parametrize("group", [1, 3, 50])
def test_joined_groups_are_the_names_encoded(layout: Layout, group: int) -> None:
    rng = random.Random(group)
    simhashes = [rng.getrandbits(64) for _ in range(7)]
    probed = BucketAddresses(NamespaceKeys("ns").buckets, layout, lambda name: f"<{name}>".encode())
    names = probed.names(simhashes)
    per = probed.per_fingerprint
    expected = [
        b"".join(f"<{n}>".encode() for n in names[start * per : (start + group) * per])
        for start in range(0, len(simhashes), group)
    ]
    assert probed.joined(simhashes, group) == expected


@pytest.mark.parametrize(
    "layout",
    [layout for layout in LAYOUTS if max(t.width for t in layout.tables) <= 16],
    ids=lambda layout: layout.spec(),
)
def test_bucket_numbers_stand_one_for_one_for_names(layout: Layout) -> None:
    rng = random.Random(11)
    simhashes = [rng.getrandbits(64) for _ in range(200)]
    probed = BucketAddresses(NamespaceKeys("ns").buckets, layout)
    assert probed.slot_count == sum(1 << t.width for t in layout.tables)
    pairs = set(zip(probed.slots(simhashes).ravel().tolist(), probed.names(simhashes), strict=True))
    assert len({slot for slot, _ in pairs}) == len({name for _, name in pairs}) == len(pairs)
    assert all(0 <= slot < probed.slot_count for slot, _ in pairs)
    # A fingerprint's own bucket in each table is among those it probes.
    own = np.stack(probed.own_slots(np.array(simhashes, dtype=np.uint64)), axis=1)
    assert all(
        set(row) <= set(probed_row)
        for row, probed_row in zip(own.tolist(), probed.slots(simhashes).tolist(), strict=True)
    )


def test_tables_too_wide_are_not_numbered() -> None:
    assert BucketAddresses(NamespaceKeys("ns").buckets, multi_index(5, 2)).slot_count is None
