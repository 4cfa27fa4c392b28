"""The evaluation's other weighings of a unit's count."""

import pytest

from evaluation.damping import DampedFingerprinter
from tests.support.texts import PRODUCT_PAGE
from worker.text.fingerprint import Fingerprinter

# A page under a footer repeated many times: how its count weighs changes the fingerprint.
TEXT = PRODUCT_PAGE + " subscribe to our newsletter for offers" * 40


@pytest.mark.parametrize("tf", ["linear", "log"])
def test_another_weighing_computes_with_numpy_and_is_recorded(tf: str) -> None:
    fingerprinter = DampedFingerprinter(tf=tf)
    assert not fingerprinter.native
    assert f"tf {tf}," in fingerprinter.fingerprint_spec
    assert "tf sqrt," in Fingerprinter().fingerprint_spec


def test_each_weighing_gives_its_own_search_fingerprint() -> None:
    found = {
        DampedFingerprinter(tf="linear")(TEXT).search,
        DampedFingerprinter(tf="log")(TEXT).search,
        Fingerprinter(native=False)(TEXT).search,
    }
    assert None not in found
    assert len(found) == 3


def test_an_unknown_weighing_is_refused() -> None:
    with pytest.raises(ValueError, match="tf must be one of"):
        DampedFingerprinter(tf="square")
