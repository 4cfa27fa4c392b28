"""The native extension (native/) gives every fingerprint the numpy path gives: the same
content hashes, lengths, search fingerprints and sketches, on real text of every kind the
tests have and on random text of every script, at several settings. Skipped where the extension
is not installed, unless DEDUP_REQUIRE_NATIVE is set (tests/support/native.py)."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import pytest

from evaluation.corpora import email_messages, lee_news, news_articles, peoples_daily
from tests.support.native import require_native
from tests.support.texts import LATIN, MIXED, PRODUCT_PAGE, PROMOTION, RECIPE, SCRIPTS, random_texts
from worker.model import Fingerprint
from worker.text.fingerprint import Fingerprinter
from worker.text.sketch import SketchShape


@pytest.fixture(autouse=True)
def _native() -> None:
    require_native()


EDGES = [
    "",
    "   ",
    "!!!",
    "😀😀",
    "One",
    "a b",  # shorter than a shingle
    "  leading and trailing spaces  ",
    "x" * 40 + " y",  # a unit longer than 16 bytes
    "中",
    "中文 words 中文 " * 8,
    "ǰ Ünïcödé wörds ﬁne " * 6,
    "東京でお花見をしました" * 3,
    "the iPhone 手机很好 sold " * 4,
    "\u200bzero\u200bwidth\u00adsoft hyphen " * 5,
]


CORPORA = ("lee", "peoples_daily", "news", "email", "pages", "scripts", "edges", "random")


@cache
def _texts() -> dict[str, list[str]]:
    return {
        "lee": list(lee_news()),
        "peoples_daily": list(peoples_daily())[:600],
        "news": [a.text for a in news_articles()][:600],
        "email": [text for _, text in email_messages()],
        "pages": [PRODUCT_PAGE, RECIPE, PROMOTION] * 2,
        "scripts": [f"{text} {n} " * (n + 1) for text, _, _ in SCRIPTS.values() for n in range(4)],
        "edges": EDGES,
        "random": random_texts(LATIN, 200, seed=7) + random_texts(MIXED, 200, seed=8),
    }


def _fingerprints(fingerprinter: Fingerprinter, texts: list[str]) -> list[Fingerprint]:
    # In batches as the worker takes them, and one by one (the numpy path's small-batch case).
    batched = [f for i in range(0, len(texts), 100) for f in fingerprinter.many(texts[i : i + 100])]
    assert [fingerprinter(t) for t in texts[:20]] == batched[:20]
    return batched


SETTINGS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "single units, 128 bins of 16 bits": {
        "shingle_size": 1,
        "sketch_shape": SketchShape(128, 16),
    },
    "5-shingles, 32 bins of 32 bits, whole pages, no minimum": {
        "shingle_size": 5,
        "sketch_shape": SketchShape(32, 32),
        "main_content": False,
        "min_words": 0,
    },
}


@pytest.mark.parametrize("settings", list(SETTINGS))
@pytest.mark.parametrize("corpus", CORPORA)
def test_the_native_extension_gives_the_numpy_paths_fingerprints(
    settings: str, corpus: str
) -> None:
    native = Fingerprinter(**SETTINGS[settings])
    reference = Fingerprinter(native=False, **SETTINGS[settings])
    assert native.native
    assert not reference.native
    texts = _texts()[corpus]
    got, expected = _fingerprints(native, texts), _fingerprints(reference, texts)
    assert any(f.search is not None for f in expected)
    assert got == expected


def test_settings_it_does_not_cover_use_the_numpy_path() -> None:
    assert not Fingerprinter(chinese="jieba").native


def test_the_native_extension_keeps_the_numpy_paths_lines() -> None:
    rng = random.Random(5)
    words = ["fix", "the", "race", "in", "cache", "reload", "bump", "notes"]
    words += ["新华社", "北京", "记者"]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 24))) for _ in range(500)]
    got = [f.line for f in Fingerprinter().many(texts)]
    expected = [f.line for f in Fingerprinter(native=False).many(texts)]
    assert got == expected
    assert 0 < sum(line is not None for line in got) < len(texts)  # (short and long ones)
