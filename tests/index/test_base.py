from worker.index.base import Entry, closest


def test_closest_within_threshold_wins() -> None:
    entries = [Entry("far", 0b1111, 1), Entry("near", 0b0001, 2), Entry("nearer", 0b0000, 3)]
    assert closest(0b0000, entries, 3, "me") == (Entry("nearer", 0b0000, 3), 0)


def test_nothing_within_threshold() -> None:
    assert closest(0, [Entry("x", 0b1111, 1)], 3, "me") is None


def test_ties_go_to_the_first_seen() -> None:
    entries = [Entry("b", 1, 5), Entry("c", 2, 4), Entry("a", 0b11, 1)]
    assert closest(0, entries, 3, "me") == (Entry("c", 2, 4), 1)


def test_never_its_own_match() -> None:
    assert closest(7, [Entry("me", 7, 1)], 3, "me") is None
