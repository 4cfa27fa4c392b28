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

STORY = (
    "The harbour bridge reopened on Monday after six months of repairs, the city said, and "
    "traffic was light in the morning as commuters returned to the route they had missed "
    "since the spring closure began under the old council."
)


def test_a_verdict_at_the_background_is_right_only_where_the_item_repeats_it() -> None:
    texts = {f"{PREFIX}0": STORY + " Buses ran on time.", f"{PREFIX}1": "Unrelated words " * 20}
    dev = EvalSet(
        "t",
        "en",
        "news",
        [Item("a", STORY, frozenset(), "original"), Item("b", STORY + "!", frozenset(), "x")],
    )
    items, right, wrong = judged(dev, [f"{PREFIX}0", f"{PREFIX}1"], texts.__getitem__)
    assert (right, wrong) == (1, 1)
    assert items[0].truth == frozenset({f"{PREFIX}0"})  # (it repeats it: its truth takes it in)
    assert items[1].truth == frozenset()


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
