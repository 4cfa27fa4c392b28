"""The arguments of the scripts that decide articles are declared once on each side:
lua/frame.lua's header and frame.FRAME_ARGV, in the same order."""

from __future__ import annotations

import re
from importlib import resources

from worker.index.redis.frame import FRAME_ARGV, Frame
from worker.index.redis.keys import NamespaceKeys


def _frame_lua() -> str:
    return resources.files("worker.index.redis.lua").joinpath("frame.lua").read_text("utf-8")


def test_frame_lua_declares_the_arguments_python_sends_in_its_order() -> None:
    text = _frame_lua()
    declared = re.findall(r"^-- ARGV\[(\d+)\]\s+(\w+):", text, re.MULTILINE)
    assert [(int(n), name) for n, name in declared] == list(enumerate(FRAME_ARGV, start=1))
    assert f"local FRAME_ARGS = {len(FRAME_ARGV)}\n" in text


def test_a_call_starts_with_the_keys_and_the_frame_arguments() -> None:
    keys = NamespaceKeys("n")
    head = Frame(keys, retention_s=60, renew_on_match=True, redelivery_window_s=5).head("e", b"g")
    assert head[0] == 6  # numkeys: frame.lua's KEYS[1..6]
    assert head[1:7] == [*keys.shared, keys.seq]
    assert dict(zip(FRAME_ARGV, head[7:], strict=True)) == {
        "epoch": "e",
        "guard": b"g",
        "gone_prefix": keys.gone,
        "gone_window_s": 5,
        "retention_s": 60,
        "renewing": 1,
        "postings_prefix": keys.buckets,
    }
