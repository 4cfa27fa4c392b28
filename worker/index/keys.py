"""Every Redis key the index uses, in one place.

All keys of one namespace share the hash tag {namespace}, so one script call touches one
Redis Cluster slot, and several independent indexes can live in one Redis.
"""

from __future__ import annotations

PREFIX = "dedup"
DOCS = "docs"  # HASH: article id -> record of its verdict (makes redelivery idempotent)
EXACT = "exact"  # HASH: 16-byte content hash -> id of the original
META = "meta"  # HASH: the layout this index was built with
BAND = "b"  # ZSET per band value: member = 8-byte fingerprint + id, score = first-seen ms


def namespace_prefix(namespace: str) -> str:
    return f"{PREFIX}:{{{namespace}}}:"


def docs_key(namespace: str) -> str:
    return namespace_prefix(namespace) + DOCS


def exact_key(namespace: str) -> str:
    return namespace_prefix(namespace) + EXACT


def meta_key(namespace: str) -> str:
    return namespace_prefix(namespace) + META


def band_key_prefixes(namespace: str, widths: tuple[int, ...]) -> list[str]:
    """One prefix per band; a bucket's key is the prefix plus the band value in hex."""
    return [f"{namespace_prefix(namespace)}{BAND}:{i}:" for i in range(len(widths))]
