"""The native fingerprinter (worker.native): from texts folded by
normalize.folded_utf8 to their content hashes, units, search fingerprints and sketches,
identical to what the numpy path computes (fast_units.py, then Fingerprinter._fingerprints)
in a fraction of its CPU (docs/performance.md). Without it, or for settings it does not
cover, the numpy path runs."""

from __future__ import annotations

from typing import Protocol

from worker.native import native_module
from worker.text.features import CHARACTER_RANGES
from worker.text.idf import IdfTable
from worker.text.lines import LINE_MAX_UNITS, LINE_MIN_UNITS
from worker.text.sketch import SketchShape

# For each text: (content hash, units, character units, search fingerprint, sketch, line);
# the fingerprint and the sketch are None for a text without units, the line (lines.line_of)
# for one of too few or too many units.
Row = tuple[bytes, int, int, int | None, bytes | None, bytes | None]


class NativeFingerprinter(Protocol):
    def many(self, texts: list[bytes]) -> list[Row]: ...


def native_fingerprinter(
    idf: IdfTable, shingle_size: int, shape: SketchShape
) -> NativeFingerprinter | None:
    """The native fingerprinter for these settings (a unit's count damped by its square root,
    as `Fingerprinter.damped`), or None when the package is not installed."""
    native = native_module()
    if native is None:
        return None
    hashes, weights = idf.hashed()
    found: NativeFingerprinter = native.Kernel(
        hashes,
        weights,
        idf.cap,
        list(CHARACTER_RANGES),
        shingle_size,
        shape.bins,
        shape.bits,
        "sqrt",
        (LINE_MIN_UNITS, LINE_MAX_UNITS),
    )
    return found
