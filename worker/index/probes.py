"""The names of the buckets that checking a batch of fingerprints reads: in every table, each
key within the table's radius of the fingerprint's own. Built for the whole batch at once with
numpy, from every name of each table made once (~8 us per article name by name, ~1 us so:
measured). Pure: no Redis."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from worker.layouts import Layout, Table, neighbours

MAX_NAMED_WIDTH = 16  # tables up to this wide have all their names made once (65,536: ~5 MB)


class ProbedBuckets:
    def __init__(self, prefix: str, layout: Layout) -> None:
        """A bucket's name is `prefix`, the table's number, ':', and the key in hex (as many
        digits as the table's width needs)."""
        self._tables = [_TableNames(f"{prefix}{i}:", t) for i, t in enumerate(layout.tables)]
        self.per_fingerprint = layout.probes

    def names(self, fingerprints: Sequence[int]) -> list[str]:
        """The probed buckets of each fingerprint, `per_fingerprint` names each, one
        fingerprint after another."""
        values = np.array(fingerprints, dtype=np.uint64)
        return np.concatenate([t.probed(values) for t in self._tables], axis=1).ravel().tolist()


class _TableNames:
    def __init__(self, start: str, table: Table) -> None:
        self.table = table
        self.start = start
        self.digits = (table.width + 3) // 4
        # XOR one with a fingerprint's key to get a key it probes.
        self.flips = np.array(list(neighbours(0, table.width, table.radius)), dtype=np.uint64)
        self.every_name = (np.array([self._name(key) for key in range(1 << table.width)],
                                    dtype=object)
                           if table.width <= MAX_NAMED_WIDTH else None)

    def probed(self, fingerprints: np.ndarray) -> np.ndarray:
        """The probed names, one row per fingerprint."""
        keys = self.table.keys(fingerprints)[:, None] ^ self.flips[None, :]
        if self.every_name is not None:
            names: np.ndarray = self.every_name[keys]
            return names
        return np.array([[self._name(key) for key in row] for row in keys.tolist()],
                        dtype=object).reshape(keys.shape)

    def _name(self, key: int) -> str:
        return self.start + format(key, f"0{self.digits}x")
