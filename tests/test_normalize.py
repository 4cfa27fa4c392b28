from worker.normalize import normalize


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
