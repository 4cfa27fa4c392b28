"""Candidates from bands over the set sketch (worker.layout.bands), measured on the
development sets beside the SimHash radius (evaluation/choices.py): the in-memory index's
band postings and rule, driven one article after another, counting the work (bucket entries
read, candidates compared) that the index's verdicts do not report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.index.base import Entry, Rule, match, match_line
from worker.index.postings import BandPostings, LinePostings, Read
from worker.layout.bands import Bands
from worker.model import Fingerprint, Probe
from worker.text.lines import LINE_NEWEST
from worker.text.sketch import SketchShape


@dataclass
class BandDecisions:
    predicted: list[str | None]  # what each item is a duplicate of
    compared: int  # candidates compared, over all items
    largest_bucket: int  # entries in the fullest bucket at the end


class BandIndex:
    """Articles decided one after another against the bands of those before them."""

    def __init__(
        self, layout: tuple[int, int], similarity: float, shape: SketchShape, lines: bool = False
    ) -> None:
        bands = Bands(*layout)
        self.rule = Rule.of_bands(bands, similarity, shape)
        self.postings = BandPostings(bands)
        self.lines = LineIndex(bands.newest) if lines else None  # (short lines apart)
        self.exact: dict[bytes, str] = {}
        self.compared = 0  # candidates compared, so far
        self.read = 0  # bucket entries read, so far
        self._seq = 0

    def decide(self, probe: Probe) -> str | None:
        """What the article is a duplicate of (None: unique), and it is indexed."""
        exact = self.exact.setdefault(probe.content_hash, probe.id)
        if exact != probe.id:
            return exact
        if self.lines is not None and probe.line:
            line_match, line_read = self.lines.decide(probe.id, probe.line)
            self.read += line_read.entries
            self.compared += len(line_read.candidates)
            return line_match
        if probe.fingerprint is None or probe.sketch is None:
            return None
        read = self.postings.read(probe.fingerprint, probe.sketch, None)
        self.read += read.entries
        self.compared += len(read.candidates)
        found = match(self.rule, probe.fingerprint, probe.sketch, read.candidates, probe.id)
        near = found.entry if found is not None and found.near else None
        self._seq += 1
        self.postings.post(Entry(probe.id, probe.fingerprint, self._seq, sketch=probe.sketch), near)
        return near.id if near else None

    @property
    def largest_bucket(self) -> int:
        return self.postings.largest_bucket


class LineIndex:
    """Short lines decided one after another by their words, against the lines before
    them (the index's LinePostings and line rule)."""

    def __init__(self, newest: int = LINE_NEWEST) -> None:
        self.postings = LinePostings(newest)
        self._seq = 0

    def decide(self, article_id: str, line: bytes) -> tuple[str | None, Read]:
        """What the line is a near-duplicate of (None: none), and what was read; it is
        indexed."""
        read = self.postings.read(line, None)
        found = match_line(line, read.candidates, article_id)
        self._seq += 1
        self.postings.post(Entry(article_id, 0, self._seq, line=line), None)
        return (found.id if found else None), read


def decide_by_bands(
    fingerprints: Sequence[Fingerprint],
    ids: Sequence[str],
    layout: tuple[int, int],
    similarity: float,
    shape: SketchShape,
    lines: bool = False,
) -> BandDecisions:
    """What each item is a duplicate of, in stream order (`lines`: short lines by their
    words)."""
    index = BandIndex(layout, similarity, shape, lines)
    predicted = [
        index.decide(Probe(i, fp.content_hash, fp.search, fp.sketch, line=fp.line))
        for i, fp in zip(ids, fingerprints, strict=True)
    ]
    return BandDecisions(predicted, index.compared, index.largest_bucket)
