"""lua/lines.lua spells the short lines' constants as worker/text/lines.py does."""

from __future__ import annotations

import re
from importlib import resources

from worker.text import lines


def test_lines_lua_and_python_read_and_judge_lines_alike() -> None:
    text = resources.files("worker.index.redis.lua").joinpath("lines.lua").read_text("utf-8")
    constants = dict(re.findall(r"^local (LINE_\w+) = (\d+)", text, re.MULTILINE))
    assert constants == {
        "LINE_NEAR_LONG": str(lines.LINE_NEAR_LONG),
        "LINE_NEWEST": str(lines.LINE_NEWEST),
    }
