"""The storage format has one description on each side, format.py and lua/lib.lua: the two
agree on every number, and what the scripts write reads back through format.py."""

from __future__ import annotations

import json

import redis.asyncio as aioredis

from tests.support.factories import BASE, flip, probe
from worker.index.redis import RedisIndex, format, scripts
from worker.index.redis.keys import NamespaceKeys
from worker.layout.tables import multi_index
from worker.model import Kind

LUA_CONSTANTS = """
return cjson.encode({entry = ENTRY, entry_seq = ENTRY_SEQ, entry_seen = ENTRY_SEEN,
  entry_verify = ENTRY_VERIFY, recent_slots = RECENT_SLOTS, rec = REC,
  flag_fingerprint = FLAG_FINGERPRINT, flag_match = FLAG_MATCH, codes = CODES})
"""


async def test_lua_and_python_spell_the_same_format(redis_client: aioredis.Redis) -> None:
    lua = json.loads(await redis_client.eval(scripts.library() + LUA_CONSTANTS, 0))
    fields = format.ENTRY.fields
    assert fields is not None
    assert lua["entry"] == format.ENTRY_BYTES == 24
    assert (lua["entry_seq"], lua["entry_seen"], lua["entry_verify"]) == (
        fields["seq"][1],
        fields["seen_s"][1],
        fields["verification"][1],
    )
    assert lua["recent_slots"] == format.RECENT_SLOTS
    # Lua counts from 1
    lua_record = {"content": "content_hash", "match": "match_fingerprint"}
    assert {lua_record.get(name, name): start - 1 for name, start in lua["rec"].items()} == {
        name: f.start for name, f in format.RECORD.items()
    }
    assert (lua["flag_fingerprint"], lua["flag_match"]) == (
        format.FLAG_FINGERPRINT,
        format.FLAG_MATCH,
    )
    assert {Kind(kind): code for kind, code in lua["codes"].items()} == format.KIND_CODES


async def test_what_the_scripts_write_reads_back_through_format(
    redis_client: aioredis.Redis,
) -> None:
    layout = multi_index(7, 3)
    index = RedisIndex(redis_client, "format", layout)
    keys = NamespaceKeys("format")
    original = probe("original", BASE, verification=0x1111)
    copy = probe("copy", flip(BASE, [1, 2]), verification=0x1113)
    unique, near = await index.check_and_insert([original, copy])
    assert (unique.kind, near.kind) == (Kind.UNIQUE, Kind.NEAR)

    first = format.parse_record(await redis_client.hget(keys.docs, "original"))
    assert first == format.Record(
        original.content_hash, BASE, Kind.UNIQUE, None, None, unique.seen_at_ms, 1, ""
    )
    second = format.parse_record(await redis_client.hget(keys.docs, "copy"))
    assert second == format.Record(
        copy.content_hash, copy.fingerprint, Kind.NEAR, 2, BASE, near.seen_at_ms, 0, "original"
    )

    entry = format.pack_entry(BASE, 1, unique.seen_at_ms // 1000, 0x1111)
    for table, (spec, key) in enumerate(zip(layout.tables, layout.keys(BASE), strict=True)):
        assert await redis_client.get(keys.bucket(table, key, spec.width)) == entry
    ring = await redis_client.getrange(keys.recent, 0, format.ENTRY_BYTES - 1)
    assert ring == entry
