import random

import pytest
import xxhash

from evaluation.corpora import lee_news, peoples_daily
from evaluation.damping import DampedFingerprinter
from tests.support.texts import PRODUCT_PAGE, PROMOTION, RECIPE
from worker.model import Format
from worker.text.fingerprint import Fingerprinter
from worker.text.idf import IdfTable
from worker.text.simhash import hamming
from worker.text.sketch import SketchShape, similarity

fingerprint = Fingerprinter()
words = fingerprint


def _fp(text: str) -> int:
    value = fingerprint(text).search
    assert value is not None
    return value


def _similarity(a: str, b: str) -> float:
    x, y = fingerprint(a).sketch, fingerprint(b).sketch
    assert x is not None
    assert y is not None
    return similarity(x, y, fingerprint.sketch_shape)


def test_product_page_is_about_300_words() -> None:
    assert 300 <= len(PRODUCT_PAGE.split()) <= 400


def test_classic_experiment_shuffled_words_share_no_shingles() -> None:
    """The search fingerprint is of a bag of units: shuffled words are its very candidates.
    The sketch, of shingles, sees order: the verdict tells them apart."""
    shuffled = PRODUCT_PAGE.split()
    random.Random(1).shuffle(shuffled)
    assert hamming(_fp(PRODUCT_PAGE), _fp(" ".join(shuffled))) == 0
    assert _similarity(PRODUCT_PAGE, " ".join(shuffled)) < 0.1


def test_classic_experiment_unrelated_text_is_near_32_bits() -> None:
    assert hamming(_fp(PRODUCT_PAGE), _fp(RECIPE)) > 20
    assert _similarity(PRODUCT_PAGE, RECIPE) < 0.1


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
        (" ".join(["word"] * 9), False),
        (" ".join(["word"] * 10), True),
        ("中" * 19, False),
        ("中" * 20, True),
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


def test_a_changed_word_moves_the_search_fingerprint_little_and_the_sketch_little() -> None:
    changed = PRODUCT_PAGE.replace("Portland", "Denver")
    assert hamming(_fp(PRODUCT_PAGE), _fp(changed)) <= 4
    assert _similarity(PRODUCT_PAGE, changed) > 0.9


def test_the_sketch_is_the_configured_size_and_absent_for_short_texts() -> None:
    assert len(fingerprint(PRODUCT_PAGE).sketch or b"") == fingerprint.sketch_shape.nbytes
    assert fingerprint("only a few words here").sketch is None
    wide = Fingerprinter(sketch_shape=SketchShape(128, 16))(PRODUCT_PAGE).sketch
    assert wide is not None
    assert len(wide) == 256


def test_repeated_units_are_damped_in_the_search_fingerprint() -> None:
    """A template's words repeated many times do not take the fingerprint over: with the
    square root of the count, the article under a repeated footer stays near it alone."""
    footer = " subscribe to our newsletter for offers" * 40
    damped = hamming(_fp(PRODUCT_PAGE), _fp(PRODUCT_PAGE + footer))
    linear = DampedFingerprinter(tf="linear")
    plain, padded = linear(PRODUCT_PAGE).search, linear(PRODUCT_PAGE + footer).search
    assert plain is not None
    assert padded is not None
    assert damped < hamming(plain, padded)
    with pytest.raises(ValueError, match="tf must be one of"):
        DampedFingerprinter(tf="square")


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
    s_promo, s_variant = _similarity(PRODUCT_PAGE, promoted), _similarity(PRODUCT_PAGE, variant)
    with capsys.disabled():
        print(
            f"\nclassic experiment: promotion {d_promo} bits, similarity {s_promo:.2f}; "
            f"variant {d_variant} bits, {s_variant:.2f}; recipe {d_recipe} bits"
        )
    assert 3 <= d_promo <= 12
    assert d_variant <= 10
    assert d_recipe >= 24
    assert min(s_promo, s_variant) > 0.8


# Fingerprints pinned: a change that moves any of them would leave existing indexes unable to
# find what they hold (and messages' "words" changing type).
PINNED: list[tuple[str | tuple[str, int], str, float, str, str]] = [
    # (text, or a corpus and the place in it; content hash, words, search, xxh3_64 of the sketch)
    (("lee", 0), "a9a85f25b382b93c87f488718da19bc2", 323, "c8111012f7628db9", "227c39f79021dd0c"),
    (("lee", 150), "f78dc20968e4c35702a6227c49f5cbfa", 245, "af9206b862cffd8c", "41c9fd8d3252ebb4"),
    (
        ("peoples_daily", 0),
        "28b7fd5d5a226dd5c6f62ee9661454af",
        276.5,
        "513e5526464cce66",
        "0938d9834058f7f1",
    ),
    (
        ("peoples_daily", 700),
        "9ef74a2061cc7e893280f16beca5a53b",
        290.5,
        "c3556ad977c8d55e",
        "4d788bc3973178c4",
    ),
    (
        "Ｈｅｌｌｏ ｗｏｒｌｄ 你好，世界 " * 20,
        "bd98c5962150b2e0f762d3b605799629",
        80.0,
        "9545cc615462ed7d",
        "89fb5700063a5836",
    ),
    (
        "Straße café naïve " * 30,
        "b1344b4d6becb484ea3c758d4fb14212",
        90,
        "4cc2f850e207720c",
        "9e99f04066bc0948",
    ),
    (
        "สวัสดีครับ ยินดีต้อนรับ " * 10,  # Thai: written without spaces, counted in characters
        "d836a2504887bb31339ab0152298ba05",
        110.0,
        "f4b2a760510a644e",
        "9dfef00b160fc9e8",
    ),
]


def _pinned_texts() -> list[str]:
    corpora = {"lee": list(lee_news()), "peoples_daily": list(peoples_daily())}
    return [t if isinstance(t, str) else corpora[t[0]][t[1]] for t, *_ in PINNED]


def test_fingerprints_do_not_change() -> None:
    texts = _pinned_texts()
    for batch in (words.many(texts + texts), [words(t) for t in texts]):  # batched, and alone
        pinned = PINNED * (len(batch) // len(PINNED))
        for fp, (_, content, count, search, sketch) in zip(batch, pinned, strict=True):
            assert (fp.content_hash.hex(), fp.words, type(fp.words)) == (
                content,
                count,
                type(count),
            )
            assert fp.sketch is not None
            assert (f"{fp.search:016x}", xxhash.xxh3_64_hexdigest(fp.sketch)) == (search, sketch)


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
