"""The index contract of short lines (worker.text.lines): a text of 4 to 20 units is judged
by its words, whatever the layout, and meets only other short lines. Run against every
index."""

from __future__ import annotations

import asyncio
import time

from tests.index.conftest import MakeIndex
from tests.support.factories import BASE, one, probe
from worker.model import Kind


def line(words: str) -> bytes:
    """A short line's units, as the fingerprinter keeps them."""
    from worker.text.fingerprint import Fingerprinter

    found = Fingerprinter()(words).line
    assert found is not None
    return found


async def test_short_lines_are_judged_by_their_words(make_index: MakeIndex) -> None:
    index = make_index()
    first = "Fix the race between the bucket cache and its reload"
    await one(index, probe("first", None, content=first, line=line(first)))
    one_word = "Fix the race between the bucket cache and its reloading"
    two_words = "Fix a race between the bucket cache and the reload"
    three = "Fix a race between one bucket cache and the reload"
    other = "Bump the version of the bucket cache to two"
    for name, text, expected in [
        ("one word", one_word, ("first", 0.8)),  # (the words as sets: 8 of 10)
        ("two words", two_words, ("first", 0.8)),
        ("three words", three, ("two words", 0.9)),  # three from "first", one from "two words"
        ("other", other, (None, None)),
    ]:
        v = await one(index, probe(name, None, content=text, line=line(text)))
        assert (v.duplicate_of, v.similarity) == expected, name
        assert v.distance is None  # (neither line has a search fingerprint)
    far = "Fix one race between each bucket cache and every reload"
    assert (await one(index, probe("far", None, content=far, line=line(far)))).kind is Kind.UNIQUE


async def test_a_short_line_matches_the_nearest_line_then_the_first_seen(
    make_index: MakeIndex,
) -> None:
    index = make_index()
    for name, text, expected in [
        ("first", "Fix the race between the bucket cache and its reload", None),
        ("second", "Fix the race between the bucket cache and its reloading", "first"),
        # one word from second, two from first
        ("nearer", "Fix a race between the bucket cache and its reloading", "second"),
        # one word from first and from second: the first seen
        ("tie", "Fix the race between the bucket cache and its reloads", "first"),
    ]:
        v = await one(index, probe(name, None, content=text, line=line(text)))
        assert v.duplicate_of == expected, name


async def test_a_short_line_is_found_again_after_its_match_is_deleted(
    make_index: MakeIndex,
) -> None:
    index = make_index()
    texts = ["Update the docs for the scan command", "Update the docs for the scan commands"]
    for n, text in enumerate(texts):
        await one(index, probe(f"l{n}", None, content=text, line=line(text)))
    assert await index.forget(["l0"]) == [True]
    again = "Update these docs for the scan commands"
    v = await one(index, probe("again", None, content=again, line=line(again)))
    assert (v.kind, v.duplicate_of) == (Kind.NEAR, "l1")


async def test_a_short_line_with_a_fingerprint_is_judged_by_its_words_alone(
    make_index: MakeIndex,
) -> None:
    index = make_index()
    first = "Fix the race between the bucket cache and its reload"
    await one(index, probe("first", BASE, content=first, line=line(first)))
    # One word changed, and a search fingerprint far from the first's.
    edited = "Fix the race between the bucket cache and its reloading"
    v = await one(index, probe("edited", ~BASE & (2**64 - 1), content=edited, line=line(edited)))
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "first", 64)
    # A longer text with the first's fingerprint and sketch: lines meet only lines.
    assert (await one(index, probe("long", BASE))).kind is Kind.UNIQUE
    same = await one(index, probe("same", BASE ^ 1))
    assert (same.kind, same.duplicate_of) == (Kind.NEAR, "long")


async def test_articles_and_short_lines_decided_together_find_their_own_kind(
    make_index: MakeIndex,
) -> None:
    """Lines and other articles in one batch, then in later ones: each finds its match (a
    line's number names no table entry)."""
    index = make_index()
    texts = [f"Release notes for version {n} of the bucket cache" for n in range(3)]
    first = await index.check_and_insert(
        [
            probe("a", BASE),
            probe("l0", None, content=texts[0], line=line(texts[0])),
            probe("a copy", BASE ^ 3),
            probe("l1", None, content=texts[1], line=line(texts[1])),
        ]
    )
    assert [(v.kind, v.duplicate_of) for v in first] == [
        (Kind.UNIQUE, None),
        (Kind.UNIQUE, None),
        (Kind.NEAR, "a"),
        (Kind.NEAR, "l0"),
    ]
    # Each a word from the lines before it: the nearest, then the first seen.
    for n, expected in [(2, "l0"), (3, "l2"), (4, "l2")]:
        text = f"{texts[2]} {n}"
        later = await index.check_and_insert(
            [
                probe(f"l{n}", None, content=text, line=line(text)),
                probe(f"b{n}", BASE ^ (1 << (10 + n))),
            ]
        )
        assert [(v.kind, v.duplicate_of) for v in later] == [
            (Kind.NEAR, expected),
            (Kind.NEAR, "a"),
        ]


async def test_a_short_line_expires(make_index: MakeIndex) -> None:
    index = make_index(retention_s=1)
    text = "Update the docs for the scan command"
    await asyncio.sleep(1.05 - time.time() % 1)  # just past the start of a second: s
    await one(index, probe("old", None, content=text, line=line(text)))
    await asyncio.sleep(2.0)  # s + 2: expired
    again = "Update the docs for the scan commands"
    assert (await one(index, probe("new", None, content=again, line=line(again)))).kind is (
        Kind.UNIQUE
    )
    assert await index.expire() >= 1
    assert await index.forget(["new"]) == [True]
    third = "Update these docs for the scan commands"
    assert (await one(index, probe("third", None, content=third, line=line(third)))).kind is (
        Kind.UNIQUE
    )
