import numpy as np
import pytest

from evaluation.datasets import Item
from evaluation.metrics import Score, score
from evaluation.truth import jaccard_matrix, shingle_set


def test_jaccard_matrix_is_exact() -> None:
    texts = ["a b c d e", "a b c d f", "x y z w v"]
    sim = jaccard_matrix(texts, "en")
    sets = [shingle_set(t, "en") for t in texts]
    for i in range(3):
        for j in range(3):
            expected = len(sets[i] & sets[j]) / len(sets[i] | sets[j])
            assert sim[i, j] == pytest.approx(expected)
    assert sim[0, 1] == pytest.approx(2 / 4)
    assert sim[0, 2] == 0


def test_chinese_truth_uses_character_trigrams() -> None:
    assert shingle_set("我来到北京", "zh") == {"我来到", "来到北", "到北京"}
    assert np.allclose(jaccard_matrix(["我来到北京", "我来到北京"], "zh"), 1.0)


def test_scores() -> None:
    items = [
        Item("a", "t", frozenset(), "original"),
        Item("b", "t", frozenset({"a"}), "copy"),
        Item("c", "t", frozenset({"a"}), "copy"),
        Item("d", "t", frozenset(), "other"),
        Item("e", "t", None, "unscored"),
    ]
    result = score(items, [None, "a", None, "a", "a"]).overall
    assert (result.tp, result.fp, result.fn, result.tn) == (1, 1, 1, 1)
    assert result.precision == 0.5
    assert result.recall == 0.5
    assert result.f1 == 0.5
    wrong = Score()
    wrong.add(frozenset({"a"}), "z")
    assert wrong.tp == 1
    assert wrong.wrong_original == 1
    nothing = Score()  # nothing to find and nothing flagged: no error made
    assert nothing.precision == nothing.recall == nothing.f1 == 1.0
