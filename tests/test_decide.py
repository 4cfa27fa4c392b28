import json

from tests.texts import PRODUCT_PAGE, RECIPE
from worker.articles import Reason, Rejection
from worker.decide import Accepted, Decider
from worker.fingerprint import Fingerprinter
from worker.index import MemoryIndex
from worker.verdict import Kind


def _raw(id: str, text: str) -> bytes:
    return json.dumps({"id": id, "text": text}).encode()


async def test_decisions_come_back_in_input_order() -> None:
    decider = Decider(Fingerprinter(), MemoryIndex(), 100_000)
    decisions = await decider.decide([
        _raw("page", PRODUCT_PAGE),
        b"garbage",
        _raw("copy", PRODUCT_PAGE.replace("Portland", "Denver")),
        _raw("recipe", RECIPE),
        _raw("page", PRODUCT_PAGE.replace("Portland", "Austin")),
    ])
    assert [type(d).__name__ for d in decisions] == ["Accepted", "Rejection", "Accepted",
                                                     "Accepted", "Rejection"]
    page, bad, copy, recipe, conflict = decisions
    assert isinstance(page, Accepted) and page.verdict.kind is Kind.UNIQUE
    assert isinstance(bad, Rejection) and bad.reason is Reason.INVALID_JSON
    assert isinstance(copy, Accepted) and copy.verdict.kind is Kind.NEAR
    assert copy.verdict.duplicate_of == "page"
    assert isinstance(recipe, Accepted) and recipe.verdict.kind is Kind.UNIQUE
    assert isinstance(conflict, Rejection) and conflict.reason is Reason.ID_CONFLICT
    assert "new id" in conflict.detail
