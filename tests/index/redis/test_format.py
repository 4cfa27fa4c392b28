"""The storage format has one description on each side, format.py and lua/lib.lua: the two
agree on every number, and what the scripts write reads back through format.py."""

from __future__ import annotations

import json
import random

import redis.asyncio as aioredis

from tests.support.factories import BASE, SAME, flip, probe, sketch_agreeing
from worker.index.redis import RedisBandIndex, RedisIndex, format, scripts
from worker.index.redis.keys import NamespaceKeys
from worker.layout.bands import Bands
from worker.layout.tables import multi_index
from worker.model import Kind

LUA_CONSTANTS = """
return cjson.encode({number = NUMBER, last_number = string.format('%d', LAST_NUMBER),
  entry = ENTRY, entry_seq = ENTRY_SEQ, entry_seen = ENTRY_SEEN,
  recent_slots = RECENT_SLOTS, ring_check = RING_CHECK,
  no_position = {string.byte(NO_POSITION, 1, -1)}, sketch = SKETCH, rec = REC,
  flag_fingerprint = FLAG_FINGERPRINT, flag_match = FLAG_MATCH, codes = CODES,
  posting_tail = POSTING_TAIL, line_key = LINE_KEY, no_distance = NO_DISTANCE,
  line_similarity = LINE_SIMILARITY, ids_per_hash = IDS_PER_HASH,
  match = MATCH})
"""


async def test_lua_and_python_spell_the_same_format(redis_client: aioredis.Redis) -> None:
    lua = json.loads(await redis_client.eval(scripts.library() + LUA_CONSTANTS, 0))
    fields = format.ENTRY.fields
    assert fields is not None
    assert lua["number"] == format.NUMBER_BYTES == 6
    assert int(lua["last_number"]) == format.LAST_NUMBER
    assert lua["entry"] == format.ENTRY_BYTES == 18
    assert (lua["entry_seq"], lua["entry_seen"]) == (fields["seq_high"][1], fields["seen_s"][1])
    assert lua["recent_slots"] == format.RECENT_SLOTS
    assert lua["ids_per_hash"] == format.IDS_PER_HASH
    assert lua["match"] == format.MATCH_BYTES
    assert lua["ring_check"] == format.RING_CHECK == 14  # the fingerprint and the number
    assert bytes(lua["no_position"]) == format.NO_POSITION
    assert lua["sketch"] == format.SKETCH_BYTES
    names = {"content": "content_hash"}
    python = {name: f.start for name, f in format.RECORD.items()} | {"ids": format.IDS_START}
    assert {names.get(n, n): start - 1 for n, start in lua["rec"].items()} == python  # (from 1)
    assert (lua["flag_fingerprint"], lua["flag_match"]) == (
        format.FLAG_FINGERPRINT,
        format.FLAG_MATCH,
    )
    assert {Kind(kind): code for kind, code in lua["codes"].items()} == format.KIND_CODES
    assert (lua["posting_tail"], lua["line_key"]) == (format.POSTING_TAIL, format.LINE_KEY_BYTES)
    assert (lua["no_distance"], lua["line_similarity"]) == (
        format.NO_DISTANCE,
        format.LINE_SIMILARITY,
    )


async def test_what_the_scripts_write_reads_back_through_format(
    redis_client: aioredis.Redis,
) -> None:
    layout = multi_index(7, 3)
    index = RedisIndex(redis_client, "format", layout)
    keys = NamespaceKeys("format")
    sketch = sketch_agreeing(60)
    original = probe("original", BASE, sketch=SAME)
    copy = probe("copy", flip(BASE, [1, 2]), sketch=sketch)
    again = probe("again", flip(BASE, [1, 2]), content="text of copy", sketch=sketch)
    unique, near, exact = await index.check_and_insert([original, copy, again])
    assert (unique.kind, near.kind, exact.kind) == (Kind.UNIQUE, Kind.NEAR, Kind.EXACT)

    first = format.parse_record(await redis_client.hget(keys.docs, "original"))
    assert first == format.Record(
        original.content_hash,
        BASE,
        Kind.UNIQUE,
        None,
        0,
        None,
        unique.seen_at_ms,
        1,
        unique.seen_at_ms // 1000,
        None,
        original.sketch,
        "",
        "",  # a unique article's cluster starts at itself
    )
    second = format.parse_record(await redis_client.hget(keys.docs, "copy"))
    assert second == format.Record(
        copy.content_hash,
        copy.fingerprint,
        Kind.NEAR,
        2,
        60,
        BASE,
        near.seen_at_ms,
        2,
        near.seen_at_ms // 1000,
        None,
        sketch,
        "original",
        "original",
    )
    third = format.parse_record(await redis_client.hget(keys.docs, "again"))
    assert (third.kind, third.seq, third.duplicate_of, third.original) == (
        Kind.EXACT,
        0,
        "copy",
        "original",
    )  # an exact copy is in no bucket

    entry = format.pack_entry(BASE, 1, unique.seen_at_ms // 1000)
    for table, (spec, key) in enumerate(zip(layout.tables, layout.keys(BASE), strict=True)):
        stored = await redis_client.get(keys.bucket(table, key, spec.width))
        assert isinstance(stored, bytes)
        assert stored[: format.ENTRY_BYTES] == entry
    ring = await redis_client.getrange(keys.recent, 0, format.ENTRY_BYTES - 1)
    assert ring == entry


SMALL_HASHES = """
local out = {}
for i = 1, #ARGV, 2 do out[#out + 1] = {ids_key(KEYS, ARGV[i]), exact_key(KEYS, ARGV[i + 1])} end
return out
"""


async def test_lua_and_python_name_the_same_small_hashes(redis_client: aioredis.Redis) -> None:
    keys = NamespaceKeys("small-hashes")
    bits = format.group_bits(10**7, format.EXACT_PER_HASH)
    await redis_client.hset(keys.meta, "exact_groups", bits)
    rng = random.Random(8)
    cases = [(rng.randrange(1, format.LAST_NUMBER), rng.randbytes(16)) for _ in range(40)]
    argv = [v for number, content in cases for v in (format.pack_number(number), content)]
    lua = await redis_client.eval(
        scripts.library() + SMALL_HASHES, 4, keys.docs, keys.exact, keys.ids, keys.meta, *argv
    )
    python = [[keys.ids_hash(n), keys.exact_hash(content, bits)] for n, content in cases]
    assert lua == python
    assert len({k for k, _ in python}) > 1  # (the cases spread over several hashes)


BUCKETS_OF = """
local out = {}
for i = 1, #ARGV, 2 do
  local bucket = bucket_of('p:', 'b', 5, ARGV[i], split_of(tonumber(ARGV[i + 1])))
  out[#out + 1] = {bucket[1], bucket[2]}
end
return out
"""


async def test_lua_and_python_put_a_key_in_the_same_bucket(redis_client: aioredis.Redis) -> None:
    rng = random.Random(7)
    cases = [
        (rng.randbytes(width), groups)
        for width in (3, 4, 5, 8)
        for groups in (format.MIN_GROUP_BITS, 14, 16, 17, format.MAX_GROUP_BITS)
        for _ in range(4)
    ]
    argv = [value for case in cases for value in case]
    lua = await redis_client.eval(scripts.library() + BUCKETS_OF, 0, *argv)
    for (key, groups), (group_key, check) in zip(cases, lua, strict=True):
        group, python_check = format.bucket_of(key, groups)
        assert group_key == b"p:b\x05" + group
        assert check == python_check
        assert len(check) + format.POSTING_TAIL == format.posting_bytes(groups)
    # the group is the mixed value's first bits, the check every other bit
    mixed = 0xABCDEF12 * format.MIX % 2**32
    assert format.bucket_of(b"\xab\xcd\xef\x12", 8) == (
        (mixed >> 24).to_bytes(3, "big"),
        (mixed % 2**24).to_bytes(3, "big"),
    )
    assert format.bucket_of(b"\xab\xcd\xef\x12", 20)[1] == (mixed % 2**12).to_bytes(2, "big")
    # keys that share their first three bins fall into different groups
    assert (
        format.bucket_of(b"\xab\xcd\xef\x12", 14)[0] != format.bucket_of(b"\xab\xcd\xef\x13", 14)[0]
    )
    assert format.bucket_of(b"\xab\xcd\xef\x12\x01", 24) != format.bucket_of(
        b"\xab\xcd\xef\x12\x02", 24
    )  # (a fifth byte counts)


def test_group_bits_keep_about_group_postings_per_group_string() -> None:
    assert format.group_bits(1) == format.MIN_GROUP_BITS
    assert format.group_bits(10**12) == format.MAX_GROUP_BITS
    bits = format.group_bits(1_000_000)
    assert format.GROUP_POSTINGS / 2 < 1_000_000 / 2**bits <= format.GROUP_POSTINGS


async def test_band_postings_read_back_through_format(redis_client: aioredis.Redis) -> None:
    bands = Bands()
    index = RedisBandIndex(redis_client, "format-bands", bands, expected_docs=100_000)
    keys = NamespaceKeys("format-bands")
    original = probe("original", BASE, sketch=SAME)
    (verdict,) = await index.check_and_insert([original])
    assert verdict.kind is Kind.UNIQUE
    groups = format.group_bits(100_000)
    sketch = original.sketch
    assert sketch is not None
    for band in range(bands.bands):
        bins = sketch[band * bands.rows : (band + 1) * bands.rows]
        group, check = format.bucket_of(bins, groups)
        key = keys.buckets.encode() + b"b" + bytes([band]) + group
        stored = await redis_client.get(key)
        assert stored == check + (1).to_bytes(6, "big")
        assert len(stored) == format.posting_bytes(groups)
