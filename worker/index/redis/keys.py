"""Every Redis key the index uses, in one place.

All keys of one namespace share the hash tag {namespace}, so one script call touches one
Redis Cluster slot, and several independent indexes can live in one Redis.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from worker.index.redis.format import IDS_PER_HASH, NUMBER_BYTES

PREFIX = "dedup"


@dataclass(frozen=True)
class NamespaceKeys:
    namespace: str

    @property
    def prefix(self) -> str:
        return f"{PREFIX}:{{{self.namespace}}}:"

    @property
    def docs(self) -> str:
        """HASH: article id -> the record of its verdict (makes redelivery idempotent)."""
        return self.prefix + "docs"

    @property
    def exact(self) -> str:
        """Where the exact hashes start: 16-byte content hash -> id of the original, in the
        hash of the content hash's first `exact_groups` bits (exact_hash)."""
        return self.prefix + "e:"

    def exact_hash(self, content_hash: bytes, exact_groups: int) -> bytes:
        group = int.from_bytes(content_hash[:4]) >> (32 - exact_groups)
        return self.exact.encode() + group.to_bytes(3)

    @property
    def ids(self) -> str:
        """Where the ids hashes start: sequence number (format.NUMBER_BYTES) -> id (bucket
        entries hold the number, not the id), format.IDS_PER_HASH numbers a hash (ids_hash)."""
        return self.prefix + "i:"

    def ids_hash(self, number: int) -> bytes:
        return self.ids.encode() + (number - number % IDS_PER_HASH).to_bytes(NUMBER_BYTES)

    @property
    def meta(self) -> str:
        """HASH: the layout this index was built with, its epoch, and the expiry sweep's
        front: the lowest number not yet known to be live (lua/expire.lua)."""
        return self.prefix + "meta"

    @property
    def recent(self) -> str:
        """STRING: the ring of the entries inserted last (format.RECENT_SLOTS)."""
        return self.prefix + "recent"

    @property
    def seq(self) -> str:
        """Counter: sequence numbers, in the order originals are first seen."""
        return self.prefix + "seq"

    @property
    def acked(self) -> str:
        """Counter: written before a WAIT for the replicas (acked.py)."""
        return self.prefix + "acked"

    @property
    def gone(self) -> str:
        """A STRING under this prefix, a message's position in hex, ':' and an id: what that
        message did to the article, kept for a while (lua/lib.lua, gone_key)."""
        return self.prefix + "gone:"

    @property
    def claims(self) -> str:
        """A STRING under this prefix, a consumer group and topic, '/' and an input partition:
        the group generation of the worker that owns the partition (guard.py)."""
        return self.prefix + "owner:"

    def chain(self) -> str:
        """A new key for a chain of calls (a STRING: the number of its last call; guard.py)."""
        return f"{self.prefix}chain:{secrets.token_hex(8)}"

    def call_record(self) -> str:
        """A new key for a check-and-insert call's record (a STRING, kept a minute:
        lua/tables.lua, ARGV[b])."""
        return f"{self.prefix}call:{secrets.token_hex(8)}"

    @property
    def sweep(self) -> str:
        """The expiry sweep's cursor into `docs` (lua/expire.lua: the pass)."""
        return self.prefix + "sweep"

    @property
    def walk(self) -> str:
        """The expiry sweep's walk over the band groups, cutting what expired articles left
        there (a HASH: where it is, the groups it owes; lua/compact.lua)."""
        return self.prefix + "walk"

    @property
    def buckets(self) -> str:
        """Every postings key starts with this. Tables: a bucket's key (a STRING of entries)
        is this, the table number, ':', and the table key in hex (as many digits as the key's
        width needs). Bands: band and line buckets, dependents' lists and the lines hash
        (lua/postings.lua names them). The Lua scripts build the same names."""
        return self.prefix + "t:"

    @property
    def calls(self) -> str:
        """Counter: a band index's calls that changed its postings (lua/guesses.lua)."""
        return self.buckets + "w"

    @property
    def posts(self) -> str:
        """LIST: a band index's log of its last calls, newest first: the buckets each posted
        under or took postings out of (lua/postings.lua, log_call)."""
        return self.buckets + "p"

    def bucket(self, table: int, key: int, width: int) -> str:
        return f"{self.buckets}{table}:{key:0{(width + 3) // 4}x}"

    @property
    def shared(self) -> list[str]:
        """The KEYS every script starts with (lib.lua's remove_article needs them). The
        exact and ids prefixes never exist as keys, and a script reaches keys it does not
        declare: in a Redis Cluster slot that is moving, Redis refuses a script whose declared
        keys are not all present (ASK, TRYAGAIN), so none runs halfway while some of its keys
        are already on the other node."""
        return [self.docs, self.exact, self.ids, self.meta, self.recent]
