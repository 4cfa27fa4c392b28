"""Each detector on a tiny stream: an article, its copy, and an unrelated one."""

import pytest

from evaluation.datasets import Item
from evaluation.methods import DedupWorkerDetector, Detector, MinHashLSH, SimhashLibrary
from tests.support.texts import PRODUCT_PAGE, RECIPE

STREAM = [
    Item("page", PRODUCT_PAGE, frozenset(), "original"),
    Item("recipe", RECIPE, frozenset(), "original"),
    Item("copy", PRODUCT_PAGE.replace("Portland", "Denver"), frozenset({"page"}), "copy"),
]


@pytest.mark.parametrize(
    "detector",
    [DedupWorkerDetector(), MinHashLSH(0.5), MinHashLSH(0.8), SimhashLibrary()],
    ids=lambda d: d.name,
)
def test_detector_finds_the_copy_only(detector: Detector) -> None:
    assert detector.run(STREAM, "en") == [None, None, "page"]


def test_our_detector_takes_settings() -> None:
    strict = DedupWorkerDetector({"similarity": 1.0})
    assert strict.name == "dedup-worker (similarity=1.0)"
    assert strict.run(STREAM, "en") == [None, None, None]  # a changed word: not all shingles
