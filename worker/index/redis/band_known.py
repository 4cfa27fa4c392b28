"""The indexed articles a band worker read or indexed itself of late, by number
(band_reads.py, RedisBandIndex), so that its guesses need not read them again. Pure: no
Redis.

What a number's article is (its id, sketch, fingerprint, when its retention started) does not
change while it is indexed: a renewed article, or an id sent again with new text, takes a new
number, and the old one leaves every bucket. So an entry needs no invalidation while the
index goes on; a number read in a bucket is live, and one taken out after the read is in the
log of calls, which check_bands.lua checks the guesses against. Numbers are given out again
only by an index emptied or rolled back: the cache is emptied when the index's counter is
below a number it holds, and after a reset (RedisBandIndex._reload).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from worker.index.redis.band_guesses import Known

# Articles kept: the candidates of many batches of a template's pages (the same crowded
# buckets' newest postings), a few hundred bytes of Python objects each.
KNOWN_MOST = 1 << 17


class KnownCache:
    def __init__(self, most: int = KNOWN_MOST) -> None:
        if most < 1:
            raise ValueError(f"a cache of {most} articles holds nothing: give it 1 or more")
        self.most = most
        self._held: OrderedDict[int, Known] = OrderedDict()
        self._highest = 0

    def __len__(self) -> int:
        return len(self._held)

    def seen_counter(self, counter: int) -> None:
        """The index's sequence counter as just read: below a number held, numbers may be
        given out again, so nothing held is kept."""
        if counter < self._highest:
            self.clear()

    def clear(self) -> None:
        self._held.clear()
        self._highest = 0

    def found(self, numbers: Iterable[int]) -> dict[int, Known]:
        """Those of `numbers` held, now the most recently used."""
        out = {}
        for number in numbers:
            known = self._held.get(number)
            if known is not None:
                self._held.move_to_end(number)
                out[number] = known
        return out

    def keep(self, known: Known) -> None:
        """An article read, indexed under its number; the least recently used go past `most`."""
        self._held[known.seq] = known
        self._held.move_to_end(known.seq)
        self._highest = max(self._highest, known.seq)
        while len(self._held) > self.most:
            self._held.popitem(last=False)
