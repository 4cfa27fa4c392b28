"""The names of the buckets that checking a batch of fingerprints reads: in every table, each
key within the table's probe radius of the fingerprint's own. Built for the whole batch at once with
numpy, from every name of each table made once (formatting names one by one costs several
times as much). Pure: no Redis.

Names also come encoded by a given function (RedisIndex: as Redis's wire format), made once
each too and joined a group of fingerprints at a time, so that sending a batch's thousands of
names costs one join rather than encoding each name again.

Buckets also come as numbers, each table's keys numbered after the tables before it, for the
worker's bucket cache (BucketCache): it finds a batch's buckets by indexing arrays with them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np

from worker.layout.tables import Layout, Table, neighbours

MAX_NAMED_WIDTH = 16  # tables up to this wide have all their names made once (65,536 names)


class BucketAddresses:
    def __init__(
        self, prefix: str, layout: Layout, encode: Callable[[str], bytes] = str.encode
    ) -> None:
        """A bucket's name is `prefix`, the table's number, ':', and the key in hex (as many
        digits as the table's width needs)."""
        self._tables = [
            _TableNames(f"{prefix}{i}:", t, encode) for i, t in enumerate(layout.tables)
        ]
        self.per_fingerprint = layout.probes
        widths = [t.width for t in layout.tables]
        # Each table's first bucket number, then the count of them all.
        self._first_slots = np.cumsum([0, *(1 << w for w in widths)])
        # How many bucket numbers there are; None when some table is too wide to number them
        # all in an array.
        self.slot_count: int | None = (
            int(self._first_slots[-1]) if max(widths) <= MAX_NAMED_WIDTH else None
        )

    def names(self, simhashes: Sequence[int]) -> list[str]:
        """The probed buckets of each fingerprint, `per_fingerprint` names each, one
        fingerprint after another."""
        return self._probed(simhashes, encoded=False).ravel().tolist()

    def joined(self, simhashes: Sequence[int], group: int) -> list[bytes]:
        """The encoded names of each `group` fingerprints in a row (the last group may be
        shorter), joined: what `names` gives, encoded, in one bytes per group."""
        rows = self._probed(simhashes, encoded=True)
        return [
            b"".join(rows[start : start + group].ravel().tolist())
            for start in range(0, len(rows), group)
        ]

    def slots(self, simhashes: Sequence[int]) -> np.ndarray:
        """The numbers of what `names` names: one row of `per_fingerprint` per fingerprint.
        Only with a `slot_count`."""
        values = np.array(simhashes, dtype=np.uint64)
        return np.concatenate(
            [
                t.probed_keys(values).astype(np.intp) + int(first)
                for t, first in zip(self._tables, self._first_slots[:-1], strict=True)
            ],
            axis=1,
        )

    def own_slots(self, simhashes: np.ndarray) -> list[np.ndarray]:
        """The number of the bucket each fingerprint is inserted into, in each table: one
        array per table. Only with a `slot_count`."""
        values = np.asarray(simhashes, dtype=np.uint64)
        return [
            t.table.keys(values).astype(np.intp) + int(first)
            for t, first in zip(self._tables, self._first_slots[:-1], strict=True)
        ]

    def numbering(self) -> list[tuple[tuple[tuple[int, int, int], ...], int, list[int]]]:
        """How `slots` numbers each table's probed buckets, for the native store: the
        table's runs of key bits (Table.runs), its first number, and the flips XORed with a
        fingerprint's key to get each probed key, in `slots`' order."""
        return [
            (t.table.runs, int(first), t.flips.tolist())
            for t, first in zip(self._tables, self._first_slots[:-1], strict=True)
        ]

    def whole_table(self) -> list[str] | None:
        """Every bucket name of the narrowest table (every indexed entry is in each table), or
        None when even that table is too wide to name every key."""
        narrowest = min(self._tables, key=lambda t: t.table.width)
        every = narrowest.every_name
        return None if every is None else every.tolist()

    def _probed(self, simhashes: Sequence[int], encoded: bool) -> np.ndarray:
        values = np.array(simhashes, dtype=np.uint64)
        return np.concatenate([t.probed(values, encoded) for t in self._tables], axis=1)


class _TableNames:
    def __init__(self, start: str, table: Table, encode: Callable[[str], bytes]) -> None:
        self.table = table
        self.start = start
        self.encode = encode
        self.digits = (table.width + 3) // 4
        # XOR one with a fingerprint's key to get a key it probes.
        self.flips = np.array(list(neighbours(0, table.width, table.probe_radius)), dtype=np.uint64)
        self.every_name = (
            np.array([self._name(key) for key in range(1 << table.width)], dtype=object)
            if table.width <= MAX_NAMED_WIDTH
            else None
        )

    @cached_property
    def every_encoded(self) -> np.ndarray | None:
        """`every_name` encoded; made on first use (a worker reading from its copy of the
        buckets never sends names)."""
        if self.every_name is None:
            return None
        return np.array([self.encode(name) for name in self.every_name.tolist()], dtype=object)

    def probed_keys(self, simhashes: np.ndarray) -> np.ndarray:
        """The probed keys, one row per fingerprint."""
        keys: np.ndarray = self.table.keys(simhashes)[:, None] ^ self.flips[None, :]
        return keys

    def probed(self, simhashes: np.ndarray, encoded: bool) -> np.ndarray:
        """The probed names, one row per fingerprint."""
        keys = self.probed_keys(simhashes)
        every = self.every_encoded if encoded else self.every_name
        if every is not None:
            names: np.ndarray = every[keys]
            return names
        make = (lambda key: self.encode(self._name(key))) if encoded else self._name
        return np.array(
            [[make(key) for key in row] for row in keys.tolist()], dtype=object
        ).reshape(keys.shape)

    def _name(self, key: int) -> str:
        return self.start + format(key, f"0{self.digits}x")
