import random

import pytest

from worker.defaults import MAX_THRESHOLD
from worker.layout.tables import (
    Family,
    Layout,
    Table,
    blocks,
    contiguous_runs,
    multi_index,
    neighbours,
    parse_layout,
    pigeonhole,
    sampled,
)
from worker.text.simhash import hamming


def shares_a_probe(layout: Layout, a: int, b: int) -> bool:
    """What the index does, by brute force: does some table probe b's key when checking a?"""
    return any(
        tb in set(neighbours(ta, t.width, t.probe_radius))
        for t, ta, tb in zip(layout.tables, layout.keys(a), layout.keys(b), strict=True)
    )


def pair_at(rng: random.Random, distance: int) -> tuple[int, int]:
    a = rng.getrandbits(64)
    b = a
    for bit in rng.sample(range(64), distance):
        b ^= 1 << bit
    return a, b


EXACT = [
    pigeonhole(0),
    pigeonhole(3),
    pigeonhole(7),
    multi_index(3, 2),
    multi_index(7, 3),
    multi_index(7, 4),
    multi_index(10, 4),
    blocks(3, 5),
    blocks(4, 7),
    blocks(7, 9),
]


@pytest.mark.parametrize("layout", EXACT, ids=Layout.name)
def test_exact_layouts_find_every_pair_within_k(layout: Layout) -> None:
    rng = random.Random(layout.spec())
    for d in range(layout.search_radius + 1):
        assert layout.recall(d) == 1.0
        for _ in range(150):
            a, b = pair_at(rng, d)
            assert hamming(a, b) == d
            assert shares_a_probe(layout, a, b), (d, hex(a), hex(b))
    assert layout.reaches_all(layout.search_radius)


@pytest.mark.parametrize("layout", [*EXACT, sampled(5, 12, 16)], ids=Layout.name)
def test_recall_beyond_k_matches_a_simulation(layout: Layout) -> None:
    """The computed recall is what the tables do, also where they are not exact."""
    rng = random.Random(7)
    for d in (layout.search_radius + 1, layout.search_radius + 4):
        n = 1500
        found = sum(shares_a_probe(layout, *pair_at(rng, d)) for _ in range(n))
        expected = layout.recall(d)
        sigma = max((expected * (1 - expected) / n) ** 0.5, 1e-3)
        assert abs(found / n - expected) < 5 * sigma, (d, found / n, expected)


def test_sampled_recall_is_the_lsh_formula() -> None:
    layout = sampled(7, 20, 16)
    # P(16 sampled bits avoid 7 differing ones) = C(48, 7) / C(64, 7)
    one = 73629072 / 621216192
    assert layout.recall(7) == pytest.approx(1 - (1 - one) ** 20)
    assert not layout.exact
    assert layout.recall(0) == 1.0
    assert layout.reaches_all(0)
    assert not layout.reaches_all(1)


def test_layouts_are_reproducible_and_described_exactly() -> None:
    assert sampled(7, 20, 16) == sampled(7, 20, 16)  # every worker draws the same bits
    assert pigeonhole(3).spec() == "63-48/0 47-32/0 31-16/0 15-0/0"
    assert multi_index(7, 3).spec() == "63-42/2 41-21/2 20-0/1"
    assert blocks(3, 5).tables[0].spec() == "63-38/0"  # blocks 0 and 1: 13 + 13 bits
    assert len(blocks(7, 9).tables) == 36


@pytest.mark.parametrize("k", range(MAX_THRESHOLD + 1))
def test_pigeonhole_bands_cover_64_bits(k: int) -> None:
    layout = pigeonhole(k)
    assert len(layout.tables) == max(k + 1, 2)
    positions = sorted(p for t in layout.tables for p in t.positions)
    assert positions == list(range(64))


def test_table_keys_take_their_bits_in_order() -> None:
    fp = 0x0123456789ABCDEF
    assert [t.key(fp) for t in pigeonhole(3).tables] == [0x0123, 0x4567, 0x89AB, 0xCDEF]
    scattered = Table((63, 0, 1))
    assert scattered.key(1 << 63 | 0b01) == 0b110  # bit 63 -> key bit 2, bit 0 -> key bit 1
    assert scattered.spec() == "63.0.1/0"


def test_neighbours_are_every_key_within_the_radius_once() -> None:
    keys = list(neighbours(0b1010, 6, 2))
    assert len(keys) == len(set(keys)) == 1 + 6 + 15 == Table(tuple(range(6)), 2).probes
    assert all(bin(k ^ 0b1010).count("1") <= 2 for k in keys)


def test_split_is_contiguous_widest_first() -> None:
    runs = contiguous_runs(3)
    assert [len(r) for r in runs] == [22, 21, 21]
    assert runs[0][0] == 63
    assert runs[-1][-1] == 0


@pytest.mark.parametrize(
    ("text", "family", "tables"),
    [
        ("pigeonhole", Family.PIGEONHOLE, 8),
        ("multi-index:3", Family.MULTI_INDEX, 3),
        ("blocks:9", Family.BLOCKS, 36),
        ("sampled:20x16", Family.SAMPLED, 20),
    ],
)
def test_parse_names_from_settings(text: str, family: Family, tables: int) -> None:
    layout = parse_layout(text, 7)
    assert (layout.family, len(layout.tables), layout.search_radius) == (family, tables, 7)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("multi-index:9", "2..7 substrings"),
        ("blocks:4", "more than k\\+1"),
        ("sampled:20x40", "1..32 bits"),
        ("lsh", "is not one of"),
        ("multi-index:x", "invalid"),
    ],
)
def test_parse_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_layout(text, 7)


def test_blocks_too_wide_for_a_key_are_refused() -> None:
    with pytest.raises(ValueError, match="33 bits, more than 32; use more blocks"):
        blocks(3, 6)


def test_out_of_range_threshold_is_refused() -> None:
    for bad in (-1, MAX_THRESHOLD + 1):
        with pytest.raises(ValueError, match="threshold"):
            pigeonhole(bad)
