"""The rule that picks an article's match (worker.index.base.match), which both indexes apply."""

from worker.index.base import Entry, Rule, match
from worker.layout.tables import pigeonhole
from worker.text.sketch import SketchShape

SHAPE = SketchShape(8, 8)
RULE = Rule(
    threshold=3,
    search_radius=3,
    similarity=0.75,
    duplicate_bins=6,
    related_bins=3,
    max_candidates=2,
    shape=SHAPE,
)
SAME = bytes(8)


def agreeing(bins: int) -> bytes:
    return bytes([9] * (8 - bins) + [0] * bins)


def test_the_most_similar_candidate_within_the_threshold_wins() -> None:
    entries = [
        Entry("far", 0b1111, 1, sketch=SAME),
        Entry("near", 0b0001, 2, sketch=agreeing(6)),
        Entry("similar", 0b0011, 3, sketch=SAME),
    ]
    found = match(RULE, 0b0000, SAME, entries, "me")
    assert found is not None
    assert (found.entry.id, found.distance, found.agreeing, found.near) == ("similar", 2, 8, True)


def test_too_little_agreement_is_no_match() -> None:
    assert match(RULE, 0, SAME, [Entry("x", 0b1, 1, sketch=agreeing(5))], "me") is None


def test_between_equals_the_nearer_then_the_first_seen() -> None:
    entries = [
        Entry("b", 0b11, 5, sketch=SAME),
        Entry("c", 0b1, 4, sketch=SAME),
        Entry("a", 0b10, 9, sketch=SAME),
    ]
    found = match(RULE, 0, SAME, entries, "me")
    assert found is not None
    assert found.entry.id == "c"


def test_only_the_nearest_candidates_are_compared() -> None:
    entries = [
        Entry("close", 0b1, 1, sketch=agreeing(0)),
        Entry("closer", 0b0, 2, sketch=agreeing(0)),
        Entry("similar but third", 0b11, 3, sketch=SAME),
    ]
    assert match(RULE, 0, SAME, entries, "me") is None  # max_candidates=2


def test_never_its_own_match_and_tables_share_entries() -> None:
    assert match(RULE, 7, SAME, [Entry("me", 7, 1, sketch=SAME)], "me") is None
    twice = [Entry("x", 1, 1, sketch=agreeing(0))] * 3 + [Entry("y", 1, 2, sketch=SAME)]
    found = match(RULE, 0, SAME, twice, "me")
    assert found is not None
    assert found.entry.id == "y"  # x counted once: y is among the two nearest


def test_a_related_tier_takes_less_similar_or_more_distant_candidates() -> None:
    wide = Rule(2, 5, 0.75, duplicate_bins=6, related_bins=3, max_candidates=4, shape=SHAPE)
    related = match(wide, 0, SAME, [Entry("r", 0b11111, 1, sketch=SAME)], "me")
    assert related is not None
    assert not related.near
    weak = match(wide, 0, SAME, [Entry("w", 0b1, 1, sketch=agreeing(4))], "me")
    assert weak is not None
    assert not weak.near
    assert match(wide, 0, SAME, [Entry("n", 0b1, 1, sketch=agreeing(2))], "me") is None


def test_the_rule_of_a_layout_and_a_similarity() -> None:
    rule = Rule.of(pigeonhole(8), 8, 0.6)
    assert (rule.threshold, rule.search_radius, rule.max_candidates) == (8, 8, 16)
    need = rule.duplicate_bins
    assert rule.similarity_of(need) >= 0.6 > rule.similarity_of(need - 1)
