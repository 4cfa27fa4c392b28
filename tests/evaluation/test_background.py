"""Development sets decided after background documents of their kind (evaluation/background.py):
a verdict that points at a background document counts as right only where the item really
repeats it."""

from __future__ import annotations

import random
from itertools import islice

from evaluation.background import PREFIX, background, decided_after, documents, judged
from evaluation.datasets import EvalSet, Item
from evaluation.methods import DedupWorkerDetector
from evaluation.short_lines import source_lines
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
