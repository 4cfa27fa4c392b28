"""What a writing script call is sent under (lua/lib.lua, parse_guard): the chain of calls it
belongs to, and the claims of the input partitions whose messages it decides.

A chain is the calls one worker sends on its own connection without waiting for the replies
(ordered.py): call n runs only after call n - 1 did, so a call that fails (refused, or lost
with its connection) stops the later ones of its chain instead of letting them overtake it.
After a failure the index starts a new chain, and the batches are sent again in order.

A claim is (the partition's key, the consumer group generation the worker owns it in): a call
from an older generation than the last claim comes from a worker that no longer owns the
partition, and Redis refuses it (IndexFenced).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from worker.model import Owner


class Chain:
    """A run of calls that Redis must run in the order they are numbered."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.last = 0  # the number of the last call sent

    def next(self) -> int:
        self.last += 1
        return self.last


def pack(chain: Chain | None, claims: Sequence[tuple[str, int]]) -> bytes:
    """The guard argument of one call (taking the chain's next number); b"" for none."""
    if chain is None and not claims:
        return b""
    parts = [_text(chain.key if chain else ""), struct.pack(">d", chain.next() if chain else 0)]
    for key, generation in claims:
        parts += [_text(key), struct.pack(">d", generation)]
    return b"".join(parts)


def claims(owner: Owner | None, partitions: Iterable[int], key: str) -> list[tuple[str, int]]:
    """The claims of `owner` on `partitions`; `key`: the namespace's claim key prefix."""
    if owner is None:
        return []
    return [(f"{key}{owner.scope}/{p}", owner.generation) for p in sorted(set(partitions))]


def _text(value: str) -> bytes:
    encoded = value.encode("utf-8")
    return struct.pack(">H", len(encoded)) + encoded
