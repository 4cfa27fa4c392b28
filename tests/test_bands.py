import random

import pytest

from worker.bands import MAX_THRESHOLD, band_values, band_widths


@pytest.mark.parametrize("k", range(MAX_THRESHOLD + 1))
def test_k_plus_one_bands_cover_64_bits(k: int) -> None:
    widths = band_widths(k)
    assert len(widths) == k + 1
    assert sum(widths) == 64
    assert max(widths) - min(widths) <= 1


def test_default_threshold_gives_four_16_bit_bands() -> None:
    assert band_widths(3) == (16, 16, 16, 16)


def test_band_values_reassemble_the_fingerprint() -> None:
    fp = 0x0123456789ABCDEF
    widths = band_widths(4)  # 13,13,13,13,12
    value = 0
    for v, w in zip(band_values(fp, widths), widths, strict=True):
        value = (value << w) | v
    assert value == fp


@pytest.mark.parametrize("k", [0, 1, 3, 5, 7, 10])
def test_pigeonhole_any_pair_within_k_shares_a_band(k: int) -> None:
    rng = random.Random(k)
    widths = band_widths(k)
    for _ in range(2000):
        a = rng.getrandbits(64)
        flips = rng.sample(range(64), rng.randint(0, k))
        b = a
        for bit in flips:
            b ^= 1 << bit
        shared = [x == y for x, y in zip(band_values(a, widths), band_values(b, widths),
                                         strict=True)]
        assert any(shared)


def test_out_of_range_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        band_widths(MAX_THRESHOLD + 1)
    with pytest.raises(ValueError, match="threshold"):
        band_widths(-1)
