"""Commands with pre-encoded arguments (worker/index/redis/index.py: Encoded) reach Redis as the
same bytes as the plain command."""

import hiredis
import pytest
import redis.exceptions
from redis.asyncio.connection import Connection

from worker.index.redis.index import _PACKING_IN_C, Encoded, bulk_string


def pack(*args: object) -> bytes:
    connection = _PACKING_IN_C[Connection]()
    return b"".join(connection.pack_command(*args))


@pytest.mark.parametrize("names", [["a"], ["dedup:{x}:b:0:1f2e", "é", ""], [f"k{i}" for i in
                                                                           range(1500)]])
def test_encoded_arguments_pack_like_plain_ones(names: list[str]) -> None:
    encoded = Encoded(b"".join(map(bulk_string, names)), len(names))
    assert pack("MGET", "counter", encoded) == hiredis.pack_command(("MGET", "counter", *names))
    assert pack("MGET", encoded) == hiredis.pack_command(("MGET", *names))


def test_plain_commands_are_packed_by_hiredis() -> None:
    assert pack("SCRIPT LOAD", "return 1") == hiredis.pack_command(("SCRIPT", "LOAD",
                                                                    "return 1"))
    assert pack("GET", 7) == hiredis.pack_command(("GET", "7"))
    with pytest.raises(redis.exceptions.DataError):
        pack("GET", object())
