"""Precision as the index grows, on a tiny collection."""

from evaluation.growth import measure, report
from tests.support.texts import PRODUCT_PAGE, PROMOTION, RECIPE


def test_copies_are_counted_true_and_unrelated_texts_are_not_compared() -> None:
    texts = [
        ("shop", PRODUCT_PAGE),
        ("shop", PRODUCT_PAGE.replace("complete your kit,", PROMOTION)),
        ("food", RECIPE),
        ("shop", PRODUCT_PAGE),  # an exact copy: settled by the content hash, not compared
    ]
    pairs = measure(texts, radius=11, similarity=0.6)
    assert (pairs.texts, pairs.pairs) == (3, 3)
    assert (pairs.judged_near, pairs.true, pairs.false, pairs.gray) == (1, 1, 0, 0)
    assert pairs.within == 1  # the recipe is far from both
    text = report(pairs, 11, 0.6)
    assert "false matches per million comparisons: 0.00; taken as 3,000,000.00" in text
    assert "| 100,000,000 |" in text
