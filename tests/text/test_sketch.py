import random

import numpy as np
import pytest

from worker.text.sketch import (
    SketchShape,
    agreeing_bins,
    bins_needed,
    estimate,
    similarity,
    sketches,
)

SHAPE = SketchShape(64, 8)


def _sketch(items: set[int], shape: SketchShape = SHAPE) -> bytes:
    hashes = np.array(sorted(items), dtype=np.uint64)
    return sketches(hashes, np.array([len(hashes)]), shape)[0]


def _pair(rng: random.Random, size: int, jaccard: float) -> tuple[set[int], set[int]]:
    """Two sets of `size` random 64-bit items each whose Jaccard similarity is `jaccard`."""
    shared = round(2 * size * jaccard / (1 + jaccard))
    common = {rng.getrandbits(64) for _ in range(shared)}
    return (
        common | {rng.getrandbits(64) for _ in range(size - shared)},
        common | {rng.getrandbits(64) for _ in range(size - shared)},
    )


@pytest.mark.parametrize("jaccard", [0.0, 0.3, 0.6, 0.9, 1.0])
@pytest.mark.parametrize("size", [5, 40, 400])
def test_the_estimate_is_unbiased_within_its_sampling_error(jaccard: float, size: int) -> None:
    rng = random.Random(size * 10 + int(jaccard * 10))
    errors = []
    for _ in range(200):
        a, b = _pair(rng, size, jaccard)
        truth = len(a & b) / len(a | b)
        errors.append(similarity(_sketch(a), _sketch(b), SHAPE) - truth)
    # the mean error of 200 pairs; one pair's error is bounded once the sets fill the bins
    # (a few shingles spread over 64 bins are about as few samples as shingles)
    assert abs(sum(errors) / len(errors)) < 0.03
    if size >= SHAPE.bins:
        assert max(map(abs, errors)) < 0.3


def test_short_sets_fill_every_bin_and_an_empty_one_fills_none() -> None:
    """Densification: three shingles still give 64 comparable bins."""
    few = sketches(np.array([1 << 62, 1 << 63, 3 << 61], dtype=np.uint64), np.array([3]), SHAPE)
    assert len(few[0]) == SHAPE.nbytes
    assert _sketch({5, 6, 7}) == _sketch({5, 6, 7})
    none = sketches(np.array([], dtype=np.uint64), np.array([0]), SHAPE)[0]
    assert none == bytes([0xFF]) * SHAPE.nbytes


def test_a_batch_gives_each_text_its_own_sketch() -> None:
    rng = random.Random(3)
    sets = [{rng.getrandbits(64) for _ in range(n)} for n in (1, 7, 300, 2)]
    hashes = np.array([h for s in sets for h in sorted(s)], dtype=np.uint64)
    batch = sketches(hashes, np.array([len(s) for s in sets]), SHAPE)
    assert batch == [_sketch(s) for s in sets]
    assert sketches(np.array([], dtype=np.uint64), np.array([], dtype=np.intp), SHAPE) == []


def test_bins_needed_is_the_fewest_bins_whose_estimate_reaches_the_similarity() -> None:
    for shape in (SketchShape(64, 8), SketchShape(128, 16), SketchShape(8, 8)):
        for s in (0.05, 0.3, 0.6, 0.61, 0.99, 1.0):
            need = bins_needed(s, shape)
            assert estimate(need, shape) >= s - 1e-12
            assert need == 0 or estimate(need - 1, shape) < s


def test_agreeing_bins_counts_equal_bins() -> None:
    a = bytes(range(64))
    b = bytes([x if x % 4 else 255 for x in range(64)])
    assert agreeing_bins(a, b, SHAPE) == 48
    assert similarity(a, a, SHAPE) == 1.0
    wide = SketchShape(4, 16)
    assert (
        agreeing_bins(
            b"\x00\x01\x00\x02\x00\x03\x00\x04", b"\x00\x01\x01\x02\x00\x03\x00\x05", wide
        )
        == 2
    )


@pytest.mark.parametrize(
    ("bins", "bits", "message"),
    [
        (63, 8, "power of two"),
        (1, 8, "from 2 to 1024"),
        (2048, 8, "from 2 to 1024"),
        (64, 4, "8, 16 or 32"),
    ],
)
def test_shapes_are_validated(bins: int, bits: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SketchShape(bins, bits)
    assert SketchShape(128, 16).nbytes == 256
    assert SketchShape().spec() == "oph64x8"
