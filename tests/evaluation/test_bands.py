"""Candidates from bands over the set sketch, with their bounds."""

from __future__ import annotations

import random

import pytest

from evaluation.bands import decide_by_bands
from worker.layout.bands import COMPARED
from worker.model import Fingerprint
from worker.text.sketch import SketchShape

SHAPE = SketchShape(64, 8)


def _fp(rng: random.Random, sketch: bytes) -> Fingerprint:
    return Fingerprint(rng.randbytes(16), rng.getrandbits(64), 300.0, sketch)


def _near(rng: random.Random, sketch: bytes, changed: int) -> bytes:
    out = bytearray(sketch)
    for at in rng.sample(range(len(out)), changed):
        out[at] ^= 0x5A
    return bytes(out)


def test_a_copy_is_found_through_a_band_and_an_unrelated_text_is_not() -> None:
    rng = random.Random(1)
    original = rng.randbytes(64)
    fps = [_fp(rng, original), _fp(rng, rng.randbytes(64)), _fp(rng, _near(rng, original, 10))]
    decided = decide_by_bands(fps, ["a", "b", "c"], (16, 4), 0.6, SHAPE)
    assert decided.predicted == [None, None, "a"]
    assert decided.compared == 1  # b met nothing; c met a alone


def test_a_cluster_of_copies_keeps_its_buckets_small_and_every_copy_found() -> None:
    rng = random.Random(2)
    story = rng.randbytes(64)
    fps = [_fp(rng, story)] + [_fp(rng, _near(rng, story, rng.randint(1, 6))) for _ in range(999)]
    ids = [f"s{n}" for n in range(1000)]
    decided = decide_by_bands(fps, ids, (16, 4), 0.6, SHAPE)
    assert decided.predicted[0] is None
    assert all(f is not None for f in decided.predicted[1:])
    assert decided.compared <= COMPARED * 1000
    # A copy is posted only under the bands it changed: far fewer than 1,000 per bucket.
    assert decided.largest_bucket < 100


def test_more_bins_than_the_sketch_has_are_refused() -> None:
    with pytest.raises(ValueError, match="the sketch has 64"):
        decide_by_bands([], [], (17, 4), 0.6, SHAPE)


def test_short_lines_are_judged_by_their_words_when_asked() -> None:
    from worker.text.fingerprint import Fingerprinter

    texts = [f"Storm closes the harbour for a {n} day" for n in ("second", "third")]
    fps = Fingerprinter().many(texts)
    assert all(f.line is not None for f in fps)
    with_lines = decide_by_bands(fps, ["a", "b"], (16, 4), 0.6, SHAPE, lines=True)
    assert with_lines.predicted == [None, "a"]
    assert decide_by_bands(fps, ["a", "b"], (16, 4), 0.6, SHAPE).predicted == [None, None]
