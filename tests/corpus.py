"""Real news text for the end-to-end tests: the Lee corpus (300 Australian news articles,
one per line) that ships inside the gensim package (installed by the `test` extra)."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path


@cache
def lee_articles() -> tuple[str, ...]:
    spec = importlib.util.find_spec("gensim")
    assert spec is not None and spec.origin, "install the test extra: pip install -e '.[test]'"
    path = Path(spec.origin).parent / "test" / "test_data" / "lee_background.cor"
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip())
