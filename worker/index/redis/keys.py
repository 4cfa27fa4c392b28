"""Every Redis key the index uses, in one place.

All keys of one namespace share the hash tag {namespace}, so one script call touches one
Redis Cluster slot, and several independent indexes can live in one Redis.
"""

from __future__ import annotations

PREFIX = "dedup"
DOCS = "docs"  # HASH: article id -> record of its verdict (makes redelivery idempotent)
EXACT = "exact"  # HASH: 16-byte content hash -> id of the original
META = "meta"  # HASH: the layout this index was built with
IDS = "ids"  # HASH: 4-byte sequence number -> id (bucket entries hold the number, not the id)
SWEEP = "sweep"  # the expiry sweep's cursor into DOCS
SEQ = "seq"  # counter: sequence numbers, in the order originals are first seen
TABLE = "t"  # string per table key: 24-byte entries, see lib.lua
RECENT = "recent"  # string: ring of the entries inserted last, slot (seq - 1) % RECENT_SLOTS
RECENT_SLOTS = 65536  # as in lib.lua


def namespace_prefix(namespace: str) -> str:
    return f"{PREFIX}:{{{namespace}}}:"


def docs_key(namespace: str) -> str:
    return namespace_prefix(namespace) + DOCS


def exact_key(namespace: str) -> str:
    return namespace_prefix(namespace) + EXACT


def meta_key(namespace: str) -> str:
    return namespace_prefix(namespace) + META


def ids_key(namespace: str) -> str:
    return namespace_prefix(namespace) + IDS


def sweep_key(namespace: str) -> str:
    return namespace_prefix(namespace) + SWEEP


def seq_key(namespace: str) -> str:
    return namespace_prefix(namespace) + SEQ


def recent_key(namespace: str) -> str:
    return namespace_prefix(namespace) + RECENT


def bucket_prefix(namespace: str) -> str:
    """A bucket's key is this, the table number, ':', and the table key in hex
    (as many digits as the key's width needs); the Lua script builds the same names."""
    return f"{namespace_prefix(namespace)}{TABLE}:"


def bucket_key(namespace: str, table: int, key: int, width: int) -> str:
    return f"{bucket_prefix(namespace)}{table}:{key:0{(width + 3) // 4}x}"
