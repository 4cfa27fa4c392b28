import json
from collections.abc import Sequence
from dataclasses import replace

from tests.support.texts import PRODUCT_PAGE, RECIPE
from worker.index import MemoryIndex
from worker.model import Accepted, Forgotten, Kind, Probe, Reason, Rejection, Verdict
from worker.pipeline.pipeline import Pipeline
from worker.text.fingerprint import Fingerprinter


def _raw(id: str, text: str) -> bytes:
    return json.dumps({"id": id, "text": text}).encode()


async def test_decisions_come_back_in_input_order() -> None:
    decider = Pipeline(Fingerprinter(), MemoryIndex(), 100_000)
    decisions = await decider.run(
        [
            _raw("page", PRODUCT_PAGE),
            b"garbage",
            _raw("copy", PRODUCT_PAGE.replace("Portland", "Denver")),
            _raw("recipe", RECIPE),
            _raw("page", PRODUCT_PAGE.replace("Portland", "Austin")),
        ]
    )
    assert [type(d).__name__ for d in decisions] == [
        "Accepted",
        "Rejection",
        "Accepted",
        "Accepted",
        "Accepted",
    ]
    page, bad, copy, recipe, update = decisions
    assert isinstance(page, Accepted)
    assert page.verdict.kind is Kind.UNIQUE
    assert isinstance(bad, Rejection)
    assert bad.reason is Reason.INVALID_JSON
    assert isinstance(copy, Accepted)
    assert copy.verdict.kind is Kind.NEAR
    assert copy.verdict.duplicate_of == "page"
    assert isinstance(recipe, Accepted)
    assert recipe.verdict.kind is Kind.UNIQUE
    assert isinstance(update, Accepted)
    assert update.verdict.replaced
    # page's old text is gone; copy, indexed too, repeats the new text: the cluster now starts
    # at copy, never at the article itself
    assert (update.verdict.kind, update.verdict.duplicate_of) == (Kind.NEAR, "copy")
    assert update.verdict.original == "copy"


async def test_deletions_apply_in_their_place_in_the_batch() -> None:
    decider = Pipeline(Fingerprinter(), MemoryIndex(), 100_000)
    delete = json.dumps({"id": "page", "op": "delete"}).encode()
    decisions = await decider.run(
        [
            _raw("page", PRODUCT_PAGE),
            _raw("before", PRODUCT_PAGE),  # decided before the deletion: a duplicate
            delete,
            delete,  # again: nothing left to delete
            _raw("after", PRODUCT_PAGE),  # after it: unique
            json.dumps({"id": "page", "op": "remove"}).encode(),
        ]
    )
    before, after = decisions[1], decisions[4]
    assert isinstance(before, Accepted)
    assert before.verdict.duplicate_of == "page"
    assert decisions[2:4] == [Forgotten("page", True), Forgotten("page", False)]
    assert isinstance(after, Accepted)
    assert after.verdict.kind is Kind.UNIQUE
    bad = decisions[5]
    assert isinstance(bad, Rejection)
    assert bad.reason is Reason.INVALID_VALUE


class CountingIndex(MemoryIndex):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        self.calls += 1
        return await super().check_and_insert(probes)


async def test_prepare_needs_no_index_and_a_decision_can_be_retried() -> None:
    index = CountingIndex()
    decider = Pipeline(Fingerprinter(), index, 100_000)
    raws = [
        _raw("page", PRODUCT_PAGE),
        _raw("copy", PRODUCT_PAGE.replace("Portland", "Denver")),
        json.dumps({"id": "page", "op": "delete"}).encode(),
        _raw("recipe", RECIPE),
    ]
    positions = [(0, offset) for offset in range(len(raws))]
    prepared = await decider.prepare(raws, positions)
    assert index.calls == 0  # fingerprinted, nothing asked of the index yet
    first = await decider.decide(prepared)
    again = await decider.decide(prepared)  # as after an index that failed mid-batch
    assert [type(d).__name__ for d in first] == ["Accepted", "Accepted", "Forgotten", "Accepted"]
    for before, after in zip(first, again, strict=True):
        if isinstance(before, Accepted):  # the index replays its verdicts
            assert isinstance(after, Accepted)
            assert after.verdict.replayed
            # (what it compared is not replayed: nothing was compared)
            assert replace(after.verdict, replayed=False, candidates=0) == replace(
                before.verdict, candidates=0
            )
    copy = first[1]
    assert isinstance(copy, Accepted)
    assert copy.verdict.duplicate_of == "page"
