"""Quality at scale: development sets decided after N background documents of their kind
are already in the index, beside the same sets decided in an empty one.

    python -m evaluation.background --docs 1000000 [--setting layout=bands:16x4]

The background documents are made as benchmarks/bench_growth.py makes them, from other
texts of the same kind: English news recombined from the News Articles corpus's sentences,
Chinese news from People's Daily's, documentation recombined from the English manual pages'
blocks of lines, e-mail messages of those English sentences (a third of them replies quoting
an earlier one, a quarter HTML; read as the worker reads e-mail), short lines from the manual
pages' and the news articles' lines (not the short lines set's) with up to three words
replaced. The sets of manuals in other languages have their own, of the same language and
kind and never of the set's own pages (sources): the other man pages of the language, other
Debian manuals in the Debian Reference's, recombined by blocks; for the re-scraped sites,
those blocks as pages of the site, in its two templates and with its navigation.
They are fingerprinted once and indexed (the embedded index, which decides as the shared
one does: evaluation/parity.py) before each set. A verdict that points at a background
document counts as the set's own truth would count it were that document in the set (the
Jaccard similarity of their shingles, or the short lines' edit distance): right when the
item repeats it, not scored when the item differed from every earlier one of the set but
shares some of it, else wrong.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any

import click

from evaluation import corpora, mail, rescraped
from evaluation.__main__ import parse_settings
from evaluation.datasets import EvalSet, Item
from evaluation.devsets import every_set
from evaluation.methods import DedupWorkerDetector
from evaluation.metrics import score
from evaluation.short_lines import line_truth, source_lines
from evaluation.truth import DIFFERENT, DUPLICATE, shingle_set, visible_text
from worker import wiring
from worker.model import Probe
from worker.settings import Settings
from worker.text.markup import reader_text

# Each set checked, and the kind of its background.
BACKGROUNDS = {
    "news-en": "news-en",
    "news-zh": "news-zh",
    "html postgresql": "manuals",
    "html git": "manuals",
    "text then html": "manuals",
    "legal": "manuals",
    "re-scraped postgresql": "manuals",
    "re-scraped git": "manuals",
    "re-scraped postgresql, sphinx to mkdocs": "manuals",
    "re-scraped git, sphinx to mkdocs": "manuals",
    "mail": "mail",
    "newsletters": "mail",
    "short": "lines",
    "short lines": "lines",
    # (the manuals in other languages: each its own, named as the set)
    **{f"manuals {language}": f"manuals {language}" for language in corpora.MAN_LANGUAGES},
    **{f"reference {language}": f"reference {language}" for language in corpora.OTHER_MANUALS},
    **{
        name: name
        for site in ("ja", "zh-cn")
        for name in (f"re-scraped {site}", f"re-scraped {site}, sphinx to mkdocs")
    },
}
PREFIX = "background-"


def documents(kind: str, rng: random.Random) -> Iterator[str]:
    """An endless supply of background documents of `kind`."""
    if kind == "mail":
        yield from messages(rng)
    if kind in ("news-en", "news-zh"):
        texts = (
            [a.text for a in corpora.news_articles()]
            if kind == "news-en"
            else list(corpora.peoples_daily())
        )
        stop = ". " if kind == "news-en" else "。"
        sentences = [s for t in texts for s in t.split(stop) if len(s) > 20]
        while True:
            yield stop.join(rng.sample(sentences, rng.randint(8, 30)))
    if kind == "lines":
        lines = other_lines()
        words = sorted({w for line in lines for w in line.split() if w.isalpha()})
        while True:
            line = rng.choice(lines).split()
            for at in rng.sample(range(len(line)), min(rng.randint(0, 3), len(line))):
                line[at] = rng.choice(words)
            yield " ".join(line)
    pages = [blocks(text) for _, text in sources(kind)]
    recombining = recombined([page for page in pages if len(page) >= 8], rng)
    if kind.startswith("re-scraped "):
        yield from site_pages(kind, recombining, rng)
    for page in recombining:
        yield "\n".join(page)


def blocks(text: str) -> list[str]:
    """A page's lines in blocks of four."""
    rows = [r.strip() for r in text.splitlines() if r.strip()]
    return [" ".join(rows[i : i + 4]) for i in range(0, len(rows), 4)]


def recombined(pages: list[list[str]], rng: random.Random) -> Iterator[list[str]]:
    """Pages of blocks: a run of one page's, then a few of others'."""
    while True:
        page = rng.choice(pages)
        start = rng.randrange(len(page))
        own = page[start : start + rng.randint(10, 60)]
        others = [rng.choice(rng.choice(pages)) for _ in range(rng.randint(2, 10))]
        yield own + others


def sources(kind: str) -> list[tuple[str, str]]:
    """What a background of documentation is recombined from, (path, text), without the
    pages its set is made of (set_sources): for "manuals", the English man pages (no set's);
    for the manuals in another language, the man pages of that language that other packages
    than manpages-<language> ship; for the reference and the re-scraped sites, other Debian
    manuals in the language (corpora.OTHER_MANUALS), as text."""
    if kind == "manuals":
        return [(f"usr/share/man/{name}.gz", text) for name, text in corpora.english_man_pages()]
    family, language = _family_and_language(kind)
    if family == "manuals":
        found = [
            (f"usr/share/man/{language}/{name}.gz", text)
            for name, text in corpora.other_man_pages(language)
        ]
    else:
        found = [(path, visible_text(html)) for path, html in corpora.other_manuals(language)]
    taken = set_sources(kind)
    return [(path, text) for path, text in found if path not in taken]


def set_sources(kind: str) -> set[str]:
    """The files (paths under the root they are unpacked in) the set of a background's kind
    reads its pages from: every man page of manpages-<language>, every chapter of the Debian
    Reference in the language (the re-scraped sites take theirs from all of them)."""
    if kind == "manuals":
        return set()  # (its sets are HTML sites and legal texts: none is a man page)
    family, language = _family_and_language(kind)
    if family == "manuals":
        return {f"usr/share/man/{language}/{name}.gz" for name, _ in corpora.man_pages(language)}
    return {
        f"usr/share/debian-reference/{chapter}.{language}.html"
        for chapter, _ in corpora.reference_chapters(language)
    }


def _family_and_language(kind: str) -> tuple[str, str]:
    """The family of a kind named as its set (manuals, reference, re-scraped), its language."""
    family, language = kind.removesuffix(", sphinx to mkdocs").split(" ")
    return family, language


def site_pages(kind: str, pages: Iterator[list[str]], rng: random.Random) -> Iterator[str]:
    """Pages of blocks as pages of the re-scraped site of `kind`: in its template before or
    after the redesign (each page a paragraph a block, titled by its first words), with the
    navigation its set's pages carry."""
    site, _, themes = kind.removeprefix("re-scraped ").partition(", ")
    old_page, new_page = rescraped.THEMES[themes or "classic"]
    chrome = rescraped.CHROME[site]
    menu = rescraped.navigation(site)
    for n, page in enumerate(pages):
        title = page[0][:24]  # (both sites' scripts are written without spaces)
        content = "".join(f"<p>{escape(block)}</p>" for block in page)
        made = rescraped.Page(f"background-{n}", escape(title), content)
        if rng.random() < 0.5:
            yield old_page(made, chrome, menu)
        else:
            yield new_page(made, content, chrome, menu, rng)


def messages(rng: random.Random) -> Iterator[str]:
    """Whole e-mail messages (evaluation/mail.py's) of English news sentences recombined:
    plain, or HTML in a mail program's template; a third reply to an earlier message, quoting
    it."""
    sentences = [s for a in corpora.news_articles() for s in a.text.split(". ") if len(s) > 20]
    earlier: list[str] = []
    start = datetime(2024, 1, 1, tzinfo=UTC)
    while True:
        sender, to = mail.people(rng, 2)
        when = start + timedelta(seconds=rng.randrange(10**8))
        body = ". ".join(rng.sample(sentences, rng.randint(4, 15)))
        subject = " ".join(body.split()[:6])
        text = body
        if earlier and rng.random() < 1 / 3:
            subject, text = (
                f"Re: {subject}",
                f"{body}\n\n{mail.quoted(rng.choice(earlier), to, when)}",
            )
        text += "\n\n" + mail.signature(sender)
        html = None
        if rng.random() < 1 / 4:
            paragraphs = "".join(f"<p>{escape(p)}</p>" for p in mail.paragraphs(text))
            html = rng.choice(list(mail.TEMPLATES.values())).format(body=paragraphs)
        earlier = [*earlier[-99:], body]
        yield mail.message(sender, to, subject, when, text, html=html)


def other_lines() -> list[str]:
    """Lines of 5-20 words that are not the short lines set's: the English manual pages'
    lines of text (not their one-line descriptions) and the news articles' sentences."""
    taken = set(source_lines())
    found = [row.strip() for _, text in corpora.english_man_pages() for row in text.splitlines()]
    found += [s.strip() for a in corpora.news_articles() for s in a.text.split(". ")]
    return sorted({line for line in found if 5 <= len(line.split()) <= 20} - taken)


def background(kind: str, count: int, settings: Settings, seed: int) -> tuple[list[Probe], Any]:
    """`count` documents of `kind`, fingerprinted; and a function from an id to its text."""
    supply = documents(kind, random.Random(f"{seed}-{kind}"))
    fingerprinter = wiring.fingerprinter(settings)
    texts: list[bytes] = []  # (compressed: a million pages of a site fill the memory as text)
    probes: list[Probe] = []
    while len(texts) < count:
        batch = [next(supply) for _ in range(min(1000, count - len(texts)))]
        read = [reader_text(t)[0] for t in batch] if kind == "mail" else batch
        for n, f in enumerate(fingerprinter.many(read), start=len(texts)):
            probes.append(Probe(f"{PREFIX}{n}", f.content_hash, f.search, f.sketch, line=f.line))
        texts += [zlib.compress(t.encode(), 1) for t in batch]
    return probes, lambda item_id: zlib.decompress(
        texts[int(item_id.removeprefix(PREFIX))]
    ).decode()


def decided_after(
    dev: EvalSet, probes: Sequence[Probe], settings: dict[str, Any]
) -> list[str | None]:
    """The set's verdicts (what each item duplicates) in an index that holds `probes`."""
    detector = DedupWorkerDetector(settings)
    index = wiring.memory_index(detector.worker_settings(), clock_ms=lambda: 0)
    with asyncio.Runner() as runner:
        for start in range(0, len(probes), 1000):
            runner.run(index.check_and_insert(probes[start : start + 1000]))
    return detector.run(dev.items, dev.language, index)


def judged(
    dev: EvalSet,
    predicted: Sequence[str | None],
    text_of: Callable[[str], str],
    seen: Callable[[str], str] = str,
) -> tuple[list[Item], Counter[str]]:
    """The set's items, their truth as if the background documents their verdicts point at
    were in the set (evaluation/truth.py: a near-duplicate is right; an item that differed
    from every earlier one but shares some of such a document is not scored), and how the
    verdicts that point at one count: "right", "wrong", "not scored". `seen`: what of a text
    the set's truth compares (a re-scraped page's content, not its site's template, which
    the pages of a re-scraped site's background share with the set's)."""
    lines = dev.kind == "short lines"
    items, counts = [], Counter[str]()
    for item, guess in zip(dev.items, predicted, strict=True):
        if guess is None or not guess.startswith(PREFIX) or item.truth is None:
            items.append(item)
            continue
        other = seen(text_of(guess))
        if lines:
            pair = line_truth([other, item.text])[1]
            repeats, differs = pair is not None and 0 in pair, pair == frozenset()
        else:
            a, b = shingle_set(seen(item.text)), shingle_set(other)
            shared = len(a & b) / max(len(a | b), 1)
            repeats, differs = shared >= DUPLICATE, shared < DIFFERENT
        truth: frozenset[str] | None = item.truth
        if repeats:
            truth, outcome = item.truth | {guess}, "right"
        elif not differs and not item.truth:
            truth, outcome = None, "not scored"
        else:
            outcome = "wrong"
        counts[outcome] += 1
        items.append(dataclasses.replace(item, truth=truth))
    return items, counts


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--docs", type=int, default=1_000_000, show_default=True)
@click.option(
    "--setting", "settings_given", multiple=True, help="NAME=VALUE, e.g. layout=bands:16x4"
)
@click.option("--only", multiple=True, help="Only the sets whose names start with this.")
@click.option("--seed", type=int, default=7)
def main(docs: int, settings_given: tuple[str, ...], only: tuple[str, ...], seed: int) -> None:
    settings = parse_settings(settings_given)
    chosen = [
        s
        for s in every_set()
        if s.name in BACKGROUNDS and (not only or any(s.name.startswith(o) for o in only))
    ]
    print(f"each set decided alone, then after {docs:,} background documents of its kind")
    print(
        "| set | background | F1 alone | F1 after | difference "
        "| verdicts naming a background document: right / wrong / not scored | seconds |"
    )
    print("|---|---|---|---|---|---|---|")
    made: dict[str, tuple[list[Probe], Any]] = {}
    worker = DedupWorkerDetector(settings).worker_settings()
    for dev in chosen:
        started = time.perf_counter()
        kind = BACKGROUNDS[dev.name]
        if kind not in made:
            made.clear()  # (one background held at a time)
            made[kind] = background(kind, docs, worker, seed)
        probes, text_of = made[kind]
        alone = score(dev.items, DedupWorkerDetector(settings).run(dev.items, dev.language))
        predicted = decided_after(dev, probes, settings)
        seen = rescraped.content if kind.startswith("re-scraped ") else str
        items, counts = judged(dev, predicted, text_of, seen)
        after = score(items, predicted)
        print(
            f"| {dev.name} | {kind} | {alone.overall.f1:.3f} | {after.overall.f1:.3f} | "
            f"{after.overall.f1 - alone.overall.f1:+.3f} | {counts['right']} / "
            f"{counts['wrong']} / {counts['not scored']} | {time.perf_counter() - started:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
