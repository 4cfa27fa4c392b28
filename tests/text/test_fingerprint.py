import random

import pytest

from evaluation.corpora import lee_news, peoples_daily
from tests.support.texts import PRODUCT_PAGE, PROMOTION, RECIPE
from worker.text.fingerprint import Fingerprinter
from worker.text.idf import IdfTable
from worker.text.markup import Format
from worker.text.simhash import hamming

fingerprint = Fingerprinter()
words = fingerprint


def _fp(text: str) -> int:
    """The classic experiment is about a SimHash of shingles: the verification fingerprint."""
    value = fingerprint(text).verification
    assert value is not None
    return value


def test_product_page_is_about_300_words() -> None:
    assert 300 <= len(PRODUCT_PAGE.split()) <= 400


def test_classic_experiment_shuffled_words_are_far() -> None:
    words = PRODUCT_PAGE.split()
    random.Random(1).shuffle(words)
    assert hamming(_fp(PRODUCT_PAGE), _fp(" ".join(words))) > 10


def test_classic_experiment_unrelated_text_is_near_32_bits() -> None:
    assert hamming(_fp(PRODUCT_PAGE), _fp(RECIPE)) > 15
    page, recipe = fingerprint(PRODUCT_PAGE).search, fingerprint(RECIPE).search
    assert page is not None
    assert recipe is not None
    assert hamming(page, recipe) > 15


def test_case_whitespace_punctuation_changes_keep_content_hash() -> None:
    a = fingerprint("The quick brown fox, jumps over the lazy dog.")
    b = fingerprint("the   QUICK brown fox jumps over the lazy dog")
    assert a.content_hash == b.content_hash
    assert len(a.content_hash) == 16


def test_short_texts_get_no_fingerprint_but_a_content_hash() -> None:
    f = fingerprint("only a few words here")
    assert f.search is None
    assert f.words == 5
    assert len(f.content_hash) == 16


@pytest.mark.parametrize(
    ("text", "has_fp"),
    [
        (" ".join(["word"] * 19), False),
        (" ".join(["word"] * 20), True),
        ("中" * 39, False),
        ("中" * 40, True),
    ],
)
def test_minimum_length_counts_han_characters_as_half_words(text: str, has_fp: bool) -> None:
    assert (fingerprint(text).search is not None) is has_fp


def test_minimum_length_is_configurable() -> None:
    assert Fingerprinter(min_words=3)("one two three").search is not None
    with pytest.raises(ValueError, match="min_words"):
        Fingerprinter(min_words=-1)


def test_options_are_validated_at_construction() -> None:
    with pytest.raises(ValueError, match="ChineseUnits"):
        Fingerprinter(chinese="bigrams")
    with pytest.raises(ValueError, match=r"shingle_size must be 1\.\.10"):
        Fingerprinter(shingle_size=0)


def test_words_mode_has_a_search_and_a_verification_fingerprint() -> None:
    page = words(PRODUCT_PAGE)
    assert page.search is not None
    assert page.verification is not None
    # the verification fingerprint sees word order: the same words in another order are far
    assert page.verification != page.search
    changed = words(PRODUCT_PAGE.replace("Portland", "Denver"))
    assert changed.search is not None
    assert changed.verification is not None
    assert hamming(page.search, changed.search) <= 2
    assert hamming(page.verification, changed.verification) <= 6  # far inside the verification's 14


def test_words_mode_shuffled_words_are_caught_by_the_verification() -> None:
    """A bag of words does not see order: the search fingerprint of shuffled words is the
    same; the shingle fingerprint, which verifies every candidate, is far."""
    shuffled = PRODUCT_PAGE.split()
    random.Random(1).shuffle(shuffled)
    page, mixed = words(PRODUCT_PAGE), words(" ".join(shuffled))
    assert page.search == mixed.search
    assert page.verification is not None
    assert mixed.verification is not None
    assert hamming(page.verification, mixed.verification) > 16


def test_idf_weights_change_the_search_fingerprint() -> None:
    plain = words(PRODUCT_PAGE).search
    table = IdfTable({"the": 0.01, "and": 0.01}, docs=10, cap=5.0)
    weighted = Fingerprinter(idf=table)(PRODUCT_PAGE).search
    assert weighted is not None
    assert weighted != plain


def test_fingerprint_is_deterministic_across_instances() -> None:
    assert Fingerprinter()(RECIPE) == Fingerprinter()(RECIPE)


VARIANT = (
    ("Slate Grey", "Storm Blue"),
    ("forty litres", "thirty five litres"),
    ("one point four", "one point two"),
    ("sixteen inches", "fifteen inches"),
)


def test_classic_experiment_promotion_and_product_variant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The classic experiment's other variants: both stay far closer than unrelated text.
    Deterministic: the texts and the hash are fixed."""
    promoted = PRODUCT_PAGE.replace("complete your kit,", PROMOTION)
    variant = PRODUCT_PAGE
    for old, new in VARIANT:
        assert old in variant
        variant = variant.replace(old, new)
    base = _fp(PRODUCT_PAGE)
    d_promo, d_variant = hamming(base, _fp(promoted)), hamming(base, _fp(variant))
    d_recipe = hamming(base, _fp(RECIPE))
    with capsys.disabled():
        print(
            f"\nclassic experiment: promotion {d_promo}, variant {d_variant}, "
            f"recipe {d_recipe} bits"
        )
    assert 3 <= d_promo <= 12
    assert d_variant <= 8
    assert d_recipe >= 24


# Fingerprints pinned: a change that moves any of them would leave existing indexes unable to
# find what they hold (and messages' "words" changing type).
PINNED: list[tuple[str | tuple[str, int], str, float, str, str]] = [
    # (text, or a corpus and the place in it; content hash, words, search, verification)
    (("lee", 0), "a9a85f25b382b93c87f488718da19bc2", 323, "c810181237e2bbb9", "03019adc09747e10"),
    (("lee", 150), "f78dc20968e4c35702a6227c49f5cbfa", 245, "8b1297b862cffd9e", "e3a54571c5136fc7"),
    (
        ("peoples_daily", 0),
        "28b7fd5d5a226dd5c6f62ee9661454af",
        276.5,
        "113e74254f44ce66",
        "a4ddb9ef44e78f21",
    ),
    (
        ("peoples_daily", 700),
        "9ef74a2061cc7e893280f16beca5a53b",
        290.5,
        "c3483a3df31a991e",
        "c81537ba5bd063c1",
    ),
    (
        "Ｈｅｌｌｏ ｗｏｒｌｄ 你好，世界 " * 20,
        "bd98c5962150b2e0f762d3b605799629",
        80.0,
        "9545cc615462ed7d",
        "0d50d20501509fc1",
    ),
    (
        "Straße café naïve " * 30,
        "b1344b4d6becb484ea3c758d4fb14212",
        90,
        "4cc2f850e207720c",
        "ec99019adb74c74d",
    ),
]


def _pinned_texts() -> list[str]:
    corpora = {"lee": list(lee_news()), "peoples_daily": list(peoples_daily())}
    return [t if isinstance(t, str) else corpora[t[0]][t[1]] for t, *_ in PINNED]


def test_fingerprints_do_not_change() -> None:
    texts = _pinned_texts()
    for batch in (words.many(texts + texts), [words(t) for t in texts]):  # batched, and alone
        pinned = PINNED * (len(batch) // len(PINNED))
        for fp, (_, content, count, search, verify) in zip(batch, pinned, strict=True):
            assert (fp.content_hash.hex(), fp.words, type(fp.words)) == (
                content,
                count,
                type(count),
            )
            assert (f"{fp.search:016x}", f"{fp.verification:016x}") == (search, verify)


def test_markup_and_mail_are_fingerprinted_as_what_a_reader_sees() -> None:
    as_html = "<html><head><style>p{}</style></head><body><p>" + PRODUCT_PAGE + "</p></body></html>"
    plain, html = fingerprint.many([PRODUCT_PAGE, as_html])
    assert html.format is Format.HTML
    assert plain.format is Format.TEXT
    assert html.content_hash == plain.content_hash  # an exact duplicate across formats
    assert html.search == plain.search
    as_text = fingerprint.many([as_html], [Format.TEXT])[0]  # the format given, not detected
    assert as_text.format is Format.TEXT
    assert as_text.content_hash != plain.content_hash
    literal = Fingerprinter(detect_format=False)(as_html)
    assert literal.content_hash == as_text.content_hash
    with pytest.raises(ValueError, match="formats for"):
        fingerprint.many([PRODUCT_PAGE], [])
