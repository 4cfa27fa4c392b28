import sys
import unicodedata

from worker.text.normalize import _table, folded_utf8, normalize


def test_case_whitespace_and_punctuation_vanish() -> None:
    assert normalize("  Hello,   WORLD!\n\tIt's  “fine”… ") == "hello world it s fine"


def test_nfkc_folds_compatibility_forms() -> None:
    # full-width letters and digits, ligature, superscript
    assert normalize("ＡＢＣ１２３ ﬁne x²") == "abc123 fine x2"


def test_casefold_is_stronger_than_lower() -> None:
    assert normalize("Straße") == normalize("STRASSE") == "strasse"


def test_zero_width_and_format_characters_do_not_split_words() -> None:
    assert normalize("news\u200bpaper soft\u00adware") == "newspaper software"


def test_control_characters_become_spaces() -> None:
    assert normalize("a\x00b\x07c") == "a b c"


def test_chinese_punctuation_is_removed() -> None:
    assert normalize("你好，世界。") == "你好 世界"


def test_combining_marks_stay_inside_words() -> None:
    assert normalize("नमस्ते दुनिया") == "नमस्ते दुनिया"


def test_empty_and_symbol_only_texts() -> None:
    assert normalize("") == ""
    assert normalize("!!! ??? 😀🎉") == ""


def _by_definition(text: str) -> str:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.translate(_table()).split())


def test_every_code_point_normalises_by_the_definition() -> None:
    # the ASCII path and the numpy table must both agree with str.translate over _table()
    for start in range(0, sys.maxunicode + 1, 4096):
        text = " ".join(f"a{chr(c)}b" for c in range(start, min(start + 4096, sys.maxunicode + 1)))
        assert normalize(text) == _by_definition(text)
    for c in range(128):
        assert normalize(f"a{chr(c)}B") == _by_definition(f"a{chr(c)}B")


def test_only_the_space_is_left_as_whitespace() -> None:
    # folded_utf8 relies on it: words are separated by spaces and nothing else
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert len(spaces) > 20
    assert all(_table()[ord(s)] == " " for s in spaces)
    assert folded_utf8("a\t\u3000b\u2028c") == b"a  b c"
