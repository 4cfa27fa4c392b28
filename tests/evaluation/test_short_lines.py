"""The short lines' own truth (edit distance in units) and their set."""

from __future__ import annotations

from evaluation.short_lines import EDITS, line_truth, short_lines_set
from evaluation.truth import units


def test_a_line_repeats_one_a_word_away_and_differs_from_one_three_away() -> None:
    lines = [
        "the quick brown fox jumps over the lazy dog",  # 0
        "the quick brown cat jumps over the lazy dog",  # 1: one word from 0
        "a quick brown cat leaps over a lazy dog",  # 2: three from 1, four from 0
        "the quick brown fox jumps over the lazy dog today",  # 3: one added to 0
        "completely different words in this line here",  # 4
        "one two three four five",  # 5
        "one two six seven five",  # 6: two of five changed, too short to repeat
    ]
    truth = line_truth(lines)
    assert truth[0] == frozenset()
    assert truth[1] == frozenset({0})
    assert truth[2] == frozenset()
    assert truth[3] == frozenset({0, 1})  # two words from 1, nine units long
    assert truth[4] == frozenset()
    assert truth[6] is None  # neither a repeat (2 of 5) nor different (under 3)


def test_the_planted_copies_come_after_their_lines_and_repeat_them() -> None:
    lines = short_lines_set(copies=300)
    place = {item.id: n for n, item in enumerate(lines.items)}
    copies = [i for i in lines.items if i.tag in EDITS]
    assert len(copies) == 300
    for copy in copies:
        original = copy.id.split("-", 1)[0]
        assert place[original] < place[copy.id]
        assert copy.truth is None or not copy.truth or original in copy.truth
    one_word = [c for c in copies if c.tag in ("one word", "a word added", "a word cut")]
    assert sum(bool(c.truth) for c in one_word) >= 0.9 * len(one_word)
    assert all(i.truth is None or not i.truth for i in lines.items if i.tag == "line")
    assert all(5 <= len(units(i.text)) <= 20 for i in lines.items if i.tag == "line")
