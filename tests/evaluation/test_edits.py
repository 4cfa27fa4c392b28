import random

from evaluation.edits import (
    cosmetic,
    delete_run,
    edit_types,
    insert_promotion,
    sentences,
    substitute,
    truncate_head,
)
from tests.support.texts import PRODUCT_PAGE
from worker.text.normalize import normalize

VOCAB = ["apple", "river", "stone", "cloud"]
ZH = (
    "今年的春茶在清明节前陆续上市。茶叶市场的交易明显比去年活跃！多位茶农表示新茶的采摘时间提前了。"
)


def test_cosmetic_changes_leave_the_normalised_text_alone() -> None:
    for seed in range(20):
        edited = cosmetic(PRODUCT_PAGE, random.Random(seed))
        assert edited != PRODUCT_PAGE
        assert normalize(edited) == normalize(PRODUCT_PAGE)


def test_substitution_counts_words_and_keeps_the_spacing() -> None:
    words = PRODUCT_PAGE.split()
    for fraction, expected in (
        (None, 1),
        (0.01, round(len(words) * 0.01)),
        (0.05, round(len(words) * 0.05)),
    ):
        edited = substitute(PRODUCT_PAGE, fraction, random.Random(1), VOCAB)
        assert edited.count("\n") == PRODUCT_PAGE.count("\n")
        assert sum(a != b for a, b in zip(words, edited.split(), strict=True)) == expected


def test_chinese_substitution_replaces_han_characters() -> None:
    edited = substitute(ZH, None, random.Random(2), ["水", "火"])
    assert len(edited) == len(ZH)
    assert sum(a != b for a, b in zip(ZH, edited, strict=True)) == 1


def test_sentence_edits() -> None:
    rng = random.Random(3)
    parts = sentences(PRODUCT_PAGE)
    assert len(parts) > 10
    promoted = insert_promotion(PRODUCT_PAGE, rng, "en")
    assert "Subscribe today" in promoted
    assert len(sentences(promoted)) == len(parts) + 1
    shorter = sentences(delete_run(PRODUCT_PAGE, rng, "en"))
    assert parts[0] == shorter[0]
    assert parts[-1] == shorter[-1]
    assert len(shorter) < len(parts)
    assert len(sentences(ZH)) == 3
    assert len(sentences(delete_run(ZH, rng, "zh"))) == 2


def test_truncation_drops_the_first_tenth() -> None:
    words = PRODUCT_PAGE.split()
    assert truncate_head(PRODUCT_PAGE).split() == words[round(len(words) * 0.1) :]
    assert truncate_head(ZH) == ZH[round(len(ZH) * 0.1) :]


def test_every_edit_type_changes_the_text_and_is_seeded() -> None:
    for language, text in (("en", PRODUCT_PAGE), ("zh", ZH)):
        for name, edit in edit_types(language).items():
            a = edit(text, random.Random(5), VOCAB if language == "en" else ["水"])
            b = edit(text, random.Random(5), VOCAB if language == "en" else ["水"])
            assert a == b, name
            assert a != text, name
