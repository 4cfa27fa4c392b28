"""The index's client: commands with pre-encoded arguments (Encoded) reach Redis as the same
bytes as the plain command, and every command is packed by hiredis."""

from typing import Any

import hiredis
import pytest
import redis.exceptions
from redis.asyncio.connection import Connection

from worker.index.redis.client import _PACKING_IN_C, Encoded, bulk_string


def pack(*args: Any) -> bytes:
    connection = _PACKING_IN_C[Connection]()
    return b"".join(connection.pack_command(*args))


def hiredis_packs(*args: Any) -> bytes:
    packed: bytes = hiredis.pack_command(args)
    return packed


@pytest.mark.parametrize(
    "names", [["a"], ["dedup:{x}:b:0:1f2e", "é", ""], [f"k{i}" for i in range(1500)]]
)
def test_encoded_arguments_pack_like_plain_ones(names: list[str]) -> None:
    encoded = Encoded(b"".join(map(bulk_string, names)), len(names))
    assert pack("MGET", "counter", encoded) == hiredis_packs("MGET", "counter", *names)
    assert pack("MGET", encoded) == hiredis_packs("MGET", *names)


def test_plain_commands_are_packed_by_hiredis() -> None:
    assert pack("SCRIPT LOAD", "return 1") == hiredis_packs("SCRIPT", "LOAD", "return 1")
    assert pack("GET", 7) == hiredis_packs("GET", "7")
    with pytest.raises(redis.exceptions.DataError):
        pack("GET", object())
