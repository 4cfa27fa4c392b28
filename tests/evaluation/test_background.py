"""Development sets decided after background documents of their kind (evaluation/background.py):
a verdict that points at a background document counts as right only where the item really
repeats it."""

from __future__ import annotations

import random
from itertools import islice

import pytest

from evaluation import corpora, rescraped
from evaluation.background import (
    BACKGROUNDS,
    PREFIX,
    background,
    decided_after,
    documents,
    judged,
    set_sources,
    sources,
)
from evaluation.datasets import EvalSet, Item
from evaluation.devsets import manual_set, reference_set
from evaluation.methods import DedupWorkerDetector
from evaluation.short_lines import source_lines
from evaluation.truth import visible_text
from worker import wiring
from worker.model import Format
from worker.text.markup import reader_text

STORY = (
    "The harbour bridge reopened on Monday after six months of repairs, the city said, and "
    "traffic was light in the morning as commuters returned to the route they had missed "
    "since the spring closure began under the old council."
)


def test_a_verdict_at_the_background_counts_as_the_sets_truth_would() -> None:
    half = " ".join(STORY.split()[:20]) + " and then " + "other words " * 12
    texts = {
        f"{PREFIX}0": STORY + " Buses ran on time.",
        f"{PREFIX}1": "Unrelated words " * 20,
        f"{PREFIX}2": half,
    }
    dev = EvalSet(
        "t",
        "en",
        "news",
        [
            Item("a", STORY, frozenset(), "original"),
            Item("b", STORY + "!", frozenset(), "x"),
            Item("c", STORY + "?", frozenset(), "x"),
        ],
    )
    guesses = [f"{PREFIX}0", f"{PREFIX}1", f"{PREFIX}2"]
    items, counts = judged(dev, guesses, texts.__getitem__)
    assert counts == {"right": 1, "wrong": 1, "not scored": 1}
    assert items[0].truth == frozenset({f"{PREFIX}0"})  # (it repeats it: its truth takes it in)
    assert items[1].truth == frozenset()
    assert items[2].truth is None  # (shares 0.3-0.8 with what it was called a copy of)


def test_background_documents_are_other_texts_of_the_kind() -> None:
    lines = list(islice(documents("lines", random.Random(1)), 200))
    assert not set(lines) & set(source_lines())
    assert all(4 <= len(line.split()) <= 21 for line in lines)
    news = next(documents("news-zh", random.Random(1)))
    assert "。" in news


def test_a_set_decided_after_its_background_sees_it() -> None:
    settings = DedupWorkerDetector({}).worker_settings()
    probes, text_of = background("news-en", 50, settings, seed=3)
    assert len(probes) == 50
    assert text_of(probes[7].id)
    copy = Item("copy", text_of(probes[7].id), frozenset(), "copy")
    dev = EvalSet("copies", "en", "news", [copy])
    assert decided_after(dev, probes, {}) == [probes[7].id]


def test_mail_backgrounds_are_messages_read_as_the_worker_reads_them() -> None:
    raw = list(islice(documents("mail", random.Random(2)), 60))
    assert all(reader_text(m)[1] is Format.EMAIL for m in raw)
    assert any("Subject: Re: " in m for m in raw)  # (replies quote an earlier message)
    settings = DedupWorkerDetector({}).worker_settings()
    probes, text_of = background("mail", 20, settings, seed=4)
    message = text_of(probes[5].id)
    (read,) = wiring.fingerprinter(settings).many([reader_text(message)[0]])
    assert probes[5].content_hash == read.content_hash  # (its text, not its headers)
    dev = EvalSet("mail copies", "en", "mail", [Item("again", message, frozenset(), "copy")])
    assert decided_after(dev, probes, {}) == [probes[5].id]


OWN_KINDS = sorted({kind for kind in BACKGROUNDS.values() if " " in kind})


def test_every_manual_in_another_language_has_a_background_of_its_own() -> None:
    assert len(OWN_KINDS) == 16
    assert all(BACKGROUNDS[kind] == kind for kind in OWN_KINDS)


@pytest.mark.parametrize("kind", OWN_KINDS)
def test_no_background_holds_a_page_of_its_set(kind: str) -> None:
    taken = set_sources(kind)
    used = sources(kind)
    assert taken
    assert len(used) >= 50
    assert not {path for path, _ in used} & taken
    # (what the set reads: its pages, by the files they come from)
    family, language = kind.removesuffix(", sphinx to mkdocs").split(" ")
    if family == "manuals":
        dev = manual_set(language)
        pages = {i.id.removeprefix(f"{language}-") for i in dev.items if i.tag == "page"}
        assert taken == {f"usr/share/man/{language}/{name}.gz" for name in pages}
        texts = [i.text for i in dev.items if i.tag == "page"]
    else:
        chapters = {path.split("/")[-1].split(".")[0] for path in taken}
        assert chapters == {c for c, _ in corpora.reference_chapters(language)}
        texts = [i.text for i in reference_set(language).items if i.tag == "section"]
    # and by their text: none has most of its lines among the background's (their shared
    # boilerplate, the translators' credits, is under half of any page's)
    rows = {r.strip() for _, text in used for r in text.splitlines() if len(r.strip()) >= 20}
    for text in texts:
        mine = [r.strip() for r in text.splitlines() if len(r.strip()) >= 20]
        assert sum(r in rows for r in mine) <= max(len(mine) * 0.6, 1)


def test_a_page_of_the_set_is_held_out_of_its_background(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name, text = corpora.man_pages("cs")[0]
    others = corpora.other_man_pages("cs")
    monkeypatch.setattr(corpora, "other_man_pages", lambda language: (*others, (name, text)))
    used = sources("manuals cs")
    assert len(used) == len(others)
    assert text not in {t for _, t in used}


def test_a_re_scraped_sites_background_is_pages_of_its_templates() -> None:
    kind = "re-scraped ja, sphinx to mkdocs"
    pages = list(islice(documents(kind, random.Random(5)), 20))
    menu = rescraped.navigation("ja")
    assert all(menu[0] in page and rescraped.CHROME["ja"].rights in page for page in pages)
    assert any("md-content" in page for page in pages)  # (after the redesign)
    assert any("sphinxsidebar" in page for page in pages)  # (before)
    shown = visible_text(rescraped.content(pages[0]))
    assert rescraped.CHROME["ja"].rights not in shown  # (judged on its content alone)


def test_a_re_scraped_page_decided_after_its_sites_background_sees_a_copy() -> None:
    settings = DedupWorkerDetector({}).worker_settings()
    probes, text_of = background("re-scraped zh-cn", 40, settings, seed=6)
    copy = Item("copy", text_of(probes[9].id), frozenset(), "copy")
    dev = EvalSet("copies", "zh-cn", "re-scraped", [copy])
    assert decided_after(dev, probes, {}) == [probes[9].id]
