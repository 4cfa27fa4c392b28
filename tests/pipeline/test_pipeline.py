import json

from tests.support.texts import PRODUCT_PAGE, RECIPE
from worker.index import MemoryIndex
from worker.model import Accepted, Forgotten, Kind, Reason, Rejection
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
