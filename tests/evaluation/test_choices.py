"""The design-choice comparison decides as the index does."""

from dataclasses import replace

from evaluation.choices import DEFAULTS, Row, decide, table
from evaluation.metrics import Score
from tests.support.texts import PRODUCT_PAGE, RECIPE
from worker.text.fingerprint import Fingerprinter

fingerprinter = Fingerprinter()


def test_a_copy_of_a_copy_is_found_through_the_copy_unless_only_originals_are_indexed() -> None:
    words = PRODUCT_PAGE.split()
    once = " ".join(words[: len(words) * 3 // 4])  # a quarter cut, then a quarter more
    twice = " ".join(words[: len(words) // 2])
    ids = ["page", "recipe", "once", "twice", "again"]
    fps = fingerprinter.many([PRODUCT_PAGE, RECIPE, once, twice, RECIPE])
    decided = decide(DEFAULTS, fps, ids)
    assert decided.predicted == [None, None, "page", "once", "recipe"]
    assert decided.pairs == 10
    assert 2 <= decided.comparisons < decided.pairs  # once and twice meet their elders
    only_originals = replace(DEFAULTS, index_duplicates=False)
    assert decide(only_originals, fps, ids).predicted[3] is None  # half of page: under 0.6


def test_the_table_has_a_row_per_variant_and_both_pools() -> None:
    good = Score()
    good.add(frozenset({"a"}), "a")
    rows = [Row(DEFAULTS, {"news": good, "manuals": Score()}, 3, 1000, 4, 1)]
    text = table(rows)
    assert "| the defaults | 1.000 |" in text
    assert "| 25% of 4 | 3.00 |" in text
    assert "tuning pool: P / R" in text
