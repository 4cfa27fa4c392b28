import numpy as np
import pytest

from evaluation.datasets import Item, with_truth
from evaluation.metrics import Score, score
from evaluation.truth import jaccard_matrix, reader_text, shingle_set, stream_truth, units


def test_jaccard_matrix_is_exact() -> None:
    sets = [shingle_set(t) for t in ["a b c d e", "a b c d f", "x y z w v"]]
    sim = jaccard_matrix(sets)
    for i in range(3):
        for j in range(3):
            expected = len(sets[i] & sets[j]) / len(sets[i] | sets[j])
            assert sim[i, j] == pytest.approx(expected)
    assert sim[0, 1] == pytest.approx(2 / 4)
    assert sim[0, 2] == 0


def test_scripts_without_spaces_count_characters_as_units() -> None:
    assert shingle_set("我来到北京") == {"我 来 到", "来 到 北", "到 北 京"}
    assert units("ภาษาไทย abc") == ["ภ", "า", "ษ", "า", "ไ", "ท", "ย", "abc"]
    assert units("Hello, WORLD!") == ["hello", "world"]
    assert np.allclose(jaccard_matrix([shingle_set("我来到北京")] * 2), 1.0)


def test_a_reader_sees_an_html_pages_text_and_a_mails_subject_and_parts() -> None:
    page = (
        "<html><head><title>t</title><style>p{color:red}</style></head><body><p>Visible "
        "words</p><script>var hidden = 1;</script></body></html>"
    )
    assert reader_text(page).split() == ["Visible", "words"]
    mail = (
        "From: a@example.com\nTo: b@example.com\nSubject: Lunch plans\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: "
        "quoted-printable\n\nSee you at no=\non\n"
    )
    assert reader_text(mail).split() == ["Lunch", "plans", "See", "you", "at", "noon"]
    assert reader_text("plain words") == "plain words"


def test_truth_is_by_jaccard_with_earlier_items() -> None:
    base = " ".join(f"w{i}" for i in range(100))
    near = base.replace("w50", "x50")  # 3 of 98 shingles change: J = 95/101
    half = " ".join(f"w{i}" for i in range(50)) + " " + " ".join(f"y{i}" for i in range(50))
    other = " ".join(f"z{i}" for i in range(100))
    assert stream_truth([base, near, half, other]) == [
        frozenset(),
        frozenset({0}),
        None,
        frozenset(),
    ]
    s = with_truth("t", "en", "news", [("a", base, "x"), ("b", near, "x")])
    assert [i.truth for i in s.items] == [frozenset(), frozenset({"a"})]
    with pytest.raises(ValueError, match="repeat"):
        with_truth("t", "en", "news", [("a", base, "x"), ("a", near, "x")])


def test_strict_scores() -> None:
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
    wrong.add(frozenset({"a"}), "z")  # a duplicate, but of the wrong item: missed
    assert (wrong.tp, wrong.fn, wrong.wrong_pointer) == (0, 1, 1)
    nothing = Score()  # nothing to find and nothing flagged: no error made
    assert nothing.precision == nothing.recall == nothing.f1 == 1.0
