from __future__ import annotations

import numpy as np
import pytest

from worker.text.lines import (
    LINE_BANDS,
    LINE_MAX_UNITS,
    LINE_MIN_UNITS,
    line_distance,
    line_keys,
    line_of,
    line_rule,
    line_similarity,
)


def made(*units: int) -> bytes:
    found = line_of(np.array(units, dtype=np.uint64))
    assert found is not None
    return found


def test_a_line_is_its_units_16_bits_each_within_the_length_bounds() -> None:
    assert made(1, 2, 3, 0x1_0004) == b"\x00\x01\x00\x02\x00\x03\x00\x04"
    assert line_of(np.arange(LINE_MIN_UNITS - 1, dtype=np.uint64)) is None
    assert line_of(np.arange(LINE_MAX_UNITS + 1, dtype=np.uint64)) is None


def test_keys_depend_on_the_set_of_units_and_are_one_per_band() -> None:
    keys = line_keys(made(1, 2, 3, 4, 5))
    assert len(set(keys)) == LINE_BANDS
    assert keys == line_keys(made(5, 4, 3, 2, 1, 1))  # (a set: order and repeats aside)
    assert not set(keys) & set(line_keys(made(11, 12, 13, 14, 15)))


def test_lines_sharing_most_units_share_bands() -> None:
    rng = np.random.default_rng(3)
    shared = []
    for _ in range(200):
        units = rng.integers(0, 2**16, size=10)
        other = units.copy()
        other[4] = rng.integers(0, 2**16)  # one word of ten changed: 9 of 11 shared
        shared.append(len(set(line_keys(made(*units))) & set(line_keys(made(*other)))))
    assert min(shared) >= 1  # (1 - (1 - (9/11)^2)^16: every pair, all but ~1e-12)


@pytest.mark.parametrize(
    ("a", "b", "distance", "near"),
    [
        ((1, 2, 3, 4, 5), (1, 2, 3, 4, 9), 1, True),
        ((1, 2, 3, 4, 5), (1, 2, 8, 4, 9), 2, False),  # two of five: too many
        ((1, 2, 3, 4, 5, 6, 7), (1, 2, 8, 4, 5, 6, 9), 2, True),  # two of seven
        ((1, 2, 3, 4, 5, 6, 7), (1, 8, 3, 9, 5, 10, 7), 3, False),
        ((1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6, 7), 1, True),  # a word added
    ],
)
def test_the_rule_counts_units_changed(
    a: tuple[int, ...], b: tuple[int, ...], distance: int, near: bool
) -> None:
    x, y = made(*a), made(*b)
    assert line_distance(x, y) == distance
    assert line_rule(distance, x, y) is near


def test_similarity_is_the_jaccard_of_the_units() -> None:
    assert line_similarity(made(1, 2, 3, 4), made(1, 2, 3, 5)) == 0.6


def test_a_fingerprinter_keeps_a_short_texts_units() -> None:
    from worker.text.fingerprint import Fingerprinter

    text = "Fix the race between the bucket cache and its reload"
    line = Fingerprinter()(text).line
    assert line is not None
    assert len(line) == 2 * 10  # ten units, 16 bits each
    assert Fingerprinter()(f"{text} {text} {text}").line is None  # 30 units
