"""The index's Lua scripts (lua/): their sources, running a batch of calls of one in a
pipeline, and the KEYS and ARGV of since, forget and expire (the scripts' headers describe
them); check_and_insert.py builds check_and_insert.lua's.

Every script is sent with lib.lua, postings.lua and removal.lua in front of it (the storage
format, where articles are posted, taking them out), those that decide articles with
frame.lua too, and check_and_insert.lua with ring.lua, groups.lua, lines.lua and tables.lua,
check_bands.lua with groups.lua, lines.lua and guesses.lua (PARTS).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

import redis.exceptions

from worker.index.redis.client import ERRORS, Client, translate
from worker.index.redis.format import pack_position
from worker.index.redis.keys import NamespaceKeys
from worker.model import Forget


class Script(StrEnum):
    CHECK_AND_INSERT = "check_and_insert.lua"
    CHECK_BANDS = "check_bands.lua"
    FORGET = "forget.lua"
    EXPIRE = "expire.lua"
    SINCE = "since.lua"
    READS = "reads.lua"


# In front of every script: the storage format, the postings and their removal; then a
# script's own parts.
LIB = ("lib.lua", "postings.lua", "removal.lua")
FRAME = "frame.lua"
PARTS = {
    Script.CHECK_AND_INSERT: (FRAME, "ring.lua", "groups.lua", "lines.lua", "tables.lua"),
    Script.CHECK_BANDS: (FRAME, "groups.lua", "lines.lua", "guesses.lua"),
    Script.EXPIRE: ("compact.lua",),
}
# Articles per check-and-insert call: enough to share the call's set-up (and for a batch's
# articles to be compared with each other here rather than in the script: the worker's
# default batch), few enough that one call does not hold Redis's one thread up for long.
ARTICLES_PER_CALL = 100
# Articles per call whose buckets the script searches itself (check_and_insert.lua,
# search_buckets: up to every probed bucket's newest entries).
SEARCHED_PER_CALL = 1


@cache
def _text(name: str) -> str:
    return resources.files("worker.index.redis.lua").joinpath(name).read_text("utf-8")


def library() -> str:
    """lib.lua, postings.lua and removal.lua: what every script starts with."""
    return "\n".join(_text(part) for part in LIB)


def source(script: Script) -> str:
    """What is sent to Redis: the library, the script's parts, then the script."""
    parts = PARTS.get(script, ())
    return "\n".join([library(), *(_text(part) for part in parts), _text(script)])


@cache
def sha(script: Script) -> str:
    return hashlib.sha1(source(script).encode("utf-8")).hexdigest()


async def run(client: Client, script: Script, calls: Sequence[Sequence[Any]]) -> list[Any]:
    """Every call of `script` (its numkeys, KEYS and ARGV) in one pipeline: one round trip.
    (redis-py's Script objects add a SCRIPT EXISTS round trip to every pipeline.)"""
    try:
        return await _evalsha(client, script, calls)
    except redis.exceptions.NoScriptError:
        # First use, or Redis lost its script cache (restart, SCRIPT FLUSH). Nothing in the
        # batch ran: every call failed the same way, so running it again is safe.
        await client.script_load(source(script))
        return await _evalsha(client, script, calls)


async def load(client: Client, *loaded: Script) -> None:
    """Load the scripts into Redis's script cache."""
    try:
        for script in loaded:
            await client.script_load(source(script))
    except ERRORS as exc:
        raise translate(exc) from exc


async def _evalsha(client: Client, script: Script, calls: Sequence[Sequence[Any]]) -> list[Any]:
    async with client.pipeline(transaction=False) as pipe:
        for call in calls:
            # (execute_command: redis-py refuses pipe.evalsha on a cluster pipeline)
            pipe.execute_command("EVALSHA", sha(script), *call)
        return await pipe.execute()


def with_keys(keys: Sequence[str], argv: Sequence[Any]) -> list[Any]:
    return [len(keys), *keys, *argv]


def since_call(keys: NamespaceKeys, epoch: str, last: int, last_entry: bytes) -> list[Any]:
    return with_keys([keys.seq, keys.recent, keys.meta], [last, epoch, last_entry])


def forget_call(
    keys: NamespaceKeys,
    epoch: str,
    guard: bytes,
    redelivery_window_s: int,
    forgets: Sequence[Forget],
) -> list[Any]:
    each = itertools.chain.from_iterable(
        (f.id.encode("utf-8"), pack_position(f.position)) for f in forgets
    )
    return with_keys(
        keys.shared, [keys.buckets, epoch, guard, keys.gone, redelivery_window_s, *each]
    )


# The records the expiry sweep's pass looks at in a step (expire.lua): the pass reclaims what
# the front cannot reach, records without a number, so it may be slow.
PASS_RECORDS = 1000
# The most bytes of band postings a step's walk reads to cut what expired articles left
# (compact.lua): about as long as a step's removals hold Redis.
WALK_BYTES = 1 << 19


def expire_call(keys: NamespaceKeys, epoch: str, retention_s: int, limit: int) -> list[Any]:
    return with_keys(
        [*keys.shared, keys.sweep, keys.seq, keys.walk],
        [keys.buckets, retention_s, limit, epoch, PASS_RECORDS, WALK_BYTES],
    )
