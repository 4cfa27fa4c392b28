from __future__ import annotations

import pytest

from worker.layout.bands import Bands, parse_bands
from worker.text.sketch import SketchShape


def test_keys_are_the_band_number_then_its_bins() -> None:
    sketch = bytes(range(64))
    keys = Bands(16, 4).keys(sketch)
    assert len(keys) == 16
    assert keys[0] == 0x00_00010203
    assert keys[15] == 0x0F_3C3D3E3F
    assert len(set(Bands(16, 4).keys(bytes(64)))) == 16  # equal bins, distinct bands
    assert Bands(21, 3).keys(sketch)[20] == 0x14_3C3D3E


def test_ranked_reads_the_newest_of_each_bucket_and_prefers_the_most_shared() -> None:
    bands = Bands(16, 4, newest=3, compared=2)
    # (larger numbers are newer)
    ranked = bands.ranked([[1, 2, 3, 4], [2, 9], [9, 7]])
    assert ranked == [9, 2]  # 9 and 2 share two bands; 1 is past the newest 3 of its bucket
    assert bands.ranked([[5], [6]]) == [6, 5]  # between equals, the newest
    assert bands.read_of([[1, 2, 3, 4], [2, 9], [9, 7]]) == (7, 1)  # 3 + 2 + 2; one in part


def test_ranked_passes_over_numbers_below_the_lowest_and_takes_the_next() -> None:
    bands = Bands(16, 4, newest=3, compared=2)
    buckets = [[1, 2, 3, 4], [2, 9], [9, 7], [3]]
    assert bands.ranked(buckets) == [9, 3]
    # (postings the expiry sweep left below its front are no one's: 7 takes 3's place)
    assert bands.ranked(buckets, lowest=4) == [9, 7]
    assert bands.ranked(buckets, lowest=10) == []


def test_recall_is_the_banding_formula() -> None:
    bands = Bands(16, 4)
    assert bands.recall(1.0) == 1.0
    assert bands.recall(0.0) == 0.0
    assert bands.recall(0.6) == pytest.approx(1 - (1 - 0.6**4) ** 16)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("16", "write bands:BxR"),
        ("16x2", "rows must be >= 3"),
        ("0x4", "bands must be 1..255"),
        ("x4", "invalid literal"),
    ],
)
def test_bad_band_layouts_say_the_fix(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_bands(text)


def test_bands_must_fit_the_sketch() -> None:
    Bands(16, 4).check(SketchShape(64, 8))
    with pytest.raises(ValueError, match="need 68 bins; the sketch has 64"):
        Bands(17, 4).check(SketchShape(64, 8))
    assert parse_bands("21x3") == Bands(21, 3)
    assert Bands(21, 3).spec() == "bands:21x3"
